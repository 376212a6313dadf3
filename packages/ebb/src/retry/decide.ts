import type { BackoffRun } from '../backoff/backoff.js';
import { predicate } from '../core/boundary.js';
import { defaultRetryIf, isFinal, RetryError, retryAfterOf } from './errors.js';
import { DEFAULTS, deadlineOf, type Prepared } from './options.js';

/**
 * The one decision logic of `retry()`, `poll()` and `retrySync()`: what happens after a failed
 * attempt. The async executor and the sync loop differ only in how they wait and how they call
 * (possibly async) user code around these steps, so that they cannot drift apart.
 *
 * Every value that crosses from user code — a policy's run and its delays, a clock's reading —
 * is checked here, and a bad one throws a `TypeError`/`RangeError` naming its source; the
 * executor then fails that one operation with it. Nothing unchecked reaches a shared timer.
 * @internal
 */

/**
 * Whether `error` is worth another attempt: never for a `FinalError` (of any copy of ebb); else the caller's
 * `retryIf`, or {@link defaultRetryIf}. May return a promise (an async `retryIf`).
 */
export function classify<C>(
  retryIf: ((error: unknown, context: C) => boolean | PromiseLike<boolean>) | undefined,
  error: unknown,
  context: C,
): boolean | PromiseLike<boolean> {
  if (isFinal(error)) return false;
  return retryIf ? retryIf(error, context) : defaultRetryIf(error);
}

/** Starts the policy's run for one operation, checking that it is one. */
export function startRun(o: Prepared): BackoffRun {
  const run = (o.backoff ?? DEFAULTS.backoff).start(o.random);
  if (typeof run !== 'object' || run === null || typeof run.next !== 'function') {
    throw new TypeError(`backoff.start() returned ${describeValue(run)}; expected a run { next() }.`);
  }
  return run;
}

/** A user value in an error message: numbers as JS prints them, strings quoted, else the type. */
function describeValue(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return value === null ? 'null' : typeof value;
}

/**
 * Reads the clock for an elapsed time since `start`, refusing a reading that is not a finite
 * number or that goes back before `previous` (the last reading): a clock that does either would
 * turn deadlines and waits into nonsense.
 */
export function readClock(clock: { now(): number }, previous: number): number {
  const now = clock.now();
  if (typeof now !== 'number' || !(now >= previous && now < Infinity)) {
    const message =
      typeof now === 'number' && now < previous
        ? `clock.now() went backwards, from ${previous} to ${now}; a clock must be monotonic.`
        : `clock.now() returned ${describeValue(now)}; expected a finite number of milliseconds.`;
    throw typeof now === 'number' ? new RangeError(message) : new TypeError(message);
  }
  return now;
}

/**
 * After a failure `retryIf` called retryable: the wait before the next attempt (a finite number
 * >= 0), or the `RetryError` to give up with. `attempt` is the attempt that failed, `elapsed`
 * the time since the start (since attempt 1's failure when `fromFailure`, a lazy start). Throws (a `TypeError`/`RangeError` naming the source) when the
 * policy's run returns anything but a finite number >= 0 or the stop value -1; a throwing budget
 * or policy throws through.
 */
export function decide(
  o: Prepared,
  run: BackoffRun,
  attempt: number,
  error: unknown,
  elapsed: number,
  fromFailure = false,
): number | RetryError {
  o.budget?.recordFailure?.(error);
  // The elapsed time and the error go to the run: Google's stop rule reads the one, the AWS
  // standard mode's throttling base and hint bound the other; other policies ignore both.
  let delay: unknown = run.next(elapsed, error);
  if (delay === -1) {
    const limit = ((o.backoff ?? DEFAULTS.backoff) as { readonly maxAttempts?: unknown }).maxAttempts;
    const detail =
      limit === attempt ? `maxAttempts (${attempt}) reached` : `the backoff policy stopped after attempt ${attempt}`;
    return new RetryError('attempts', attempt, elapsed, error, detail, fromFailure);
  }
  if (typeof delay !== 'number' || !(delay >= 0 && delay < Infinity)) {
    const message = `backoff.next() returned ${describeValue(delay)}; expected a finite number of milliseconds >= 0, or -1 to stop.`;
    throw typeof delay === 'number' ? new RangeError(message) : new TypeError(message);
  }
  const hint = run.appliesHints === true ? undefined : retryAfterOf(error);
  if (hint !== undefined) {
    // An endless hint (a Retry-After too long to represent) cannot be waited out, whatever the limit.
    const maxRetryAfterMs = o.maxRetryAfterMs ?? DEFAULTS.maxRetryAfterMs;
    if (hint > maxRetryAfterMs || hint === Infinity) {
      const detail = `the server asked to wait ${hint} ms, more than maxRetryAfterMs (${maxRetryAfterMs} ms)`;
      return new RetryError('retry-after', attempt, elapsed, error, detail, fromFailure);
    }
    if (hint > delay) delay = hint;
  }
  const wait = delay as number;
  const maxElapsedMs = deadlineOf(o);
  if (elapsed + wait > maxElapsedMs) {
    const detail = `the next wait (${Math.round(wait)} ms) would end past maxElapsedMs (${maxElapsedMs} ms)`;
    return new RetryError('elapsed', attempt, elapsed, error, detail);
  }
  if (o.budget && !predicate('retry()', 'budget.tryAcquireRetry', o.budget.tryAcquireRetry(error))) {
    return new RetryError('budget', attempt, elapsed, error, 'the retry budget refused another retry', fromFailure);
  }
  return wait;
}
