import type { BackoffRun } from '../backoff/backoff.js';
import { defaultBackoff } from '../backoff/default.js';
import { describe, ignored, isLocalRefusal, predicate, prop } from '../core/boundary.js';
import { DEV } from '../core/dev.js';
import { RetryError, retryAfterOf } from './errors.js';
import { deadlineOf, type Prepared } from './options.js';

/**
 * The one decision logic of `retry()`, `retrying()`, `poll()` and `retrySync()`: what happens
 * after a failed attempt. The executors differ only in how they wait and how they call
 * (possibly async) user code around these steps, so that they cannot drift apart.
 *
 * Every value that crosses from user code — a policy's run and its delays, a clock's reading —
 * is checked here, and a bad one throws a `TypeError`/`RangeError` naming its source; the
 * executor then fails that one operation with it. Nothing unchecked reaches a shared timer.
 * @internal
 */

/** The error for a bad value from `source`: a RangeError for a number out of range (`range`), else a TypeError. */
function bad(source: string, value: unknown, expected: string, range = typeof value === 'number'): Error {
  const message = DEV ? `${source} returned ${describe(value)}; expected ${expected}.` : `${source} ${describe(value)}`;
  return new (range ? RangeError : TypeError)(message);
}

/** Starts the policy's run for one operation, checking that it is one. */
export function startRun(o: Prepared): BackoffRun {
  const run = (o.backoff ?? defaultBackoff).start(o.random);
  if (typeof prop(run, 'next') !== 'function') throw bad('backoff.start()', run, DEV ? 'a run { next() }' : '', false);
  return run;
}

/**
 * After a failure (`failure`: the error thrown, or the value `isFailure` judged a failure): the
 * wait before the next attempt (a finite number >= 0), or the `RetryError` to give up with.
 * `attempt` is the attempt that failed, `elapsed` the time since the start (since attempt 1's
 * failure when `fromFailure`, a lazy start). Throws (a `TypeError`/`RangeError` naming the
 * source) when the policy's run returns anything but a finite number >= 0 or the stop value -1;
 * a throwing budget or policy throws through.
 */
export function decide(
  o: Prepared,
  run: BackoffRun,
  attempt: number,
  failure: unknown,
  elapsed: number,
  fromFailure?: boolean,
): number | RetryError {
  const stop = (reason: RetryError['reason'], detail?: string) =>
    new RetryError(reason, attempt, elapsed, failure, detail, fromFailure);
  ignored(o.budget?.recordFailure?.(failure));
  // The elapsed time and the failure go to the run: Google's stop rule reads the one, the AWS
  // standard mode's throttling base and hint bound the other; other policies ignore both.
  let delay: unknown = run.next(elapsed, failure);
  if (delay === -1) {
    return stop(
      'attempts',
      DEV
        ? ((o.backoff ?? defaultBackoff) as { maxAttempts?: unknown }).maxAttempts === attempt
          ? `maxAttempts (${attempt}) reached`
          : `the backoff policy stopped after attempt ${attempt}`
        : '',
    );
  }
  // A string or a bigint compares too: the type is checked as well.
  if (typeof delay !== 'number' || !(delay >= 0 && delay < Infinity)) {
    throw bad('backoff.next()', delay, DEV ? 'a finite number of milliseconds >= 0, or -1 to stop' : '');
  }
  const hint = run.appliesHints === true ? undefined : retryAfterOf(failure);
  if (hint !== undefined) {
    // The executor's default limit (RetryOptions.maxRetryAfterMs), written only here.
    const max = o.maxRetryAfterMs ?? 60_000;
    // An endless hint (a Retry-After too long to represent) cannot be waited out, whatever the limit.
    if (!(hint <= max && hint < Infinity)) {
      return stop(
        'retry-after',
        DEV ? `the server asked to wait ${hint} ms, more than maxRetryAfterMs (${max} ms)` : '',
      );
    }
    if (hint > delay) delay = hint;
  }
  const deadline = deadlineOf(o);
  if (elapsed + (delay as number) > deadline) {
    return stop(
      'elapsed',
      DEV ? `the next wait (${Math.round(delay as number)} ms) would end past maxElapsedMs (${deadline} ms)` : '',
    );
  }
  // A retry of a local refusal (a full limit, an open breaker) is free: the refused attempt sent
  // nothing, so between two requests that reach the service there is always a charged retry, and
  // a call sends at most one request more than the retries its budget granted.
  if (
    o.budget &&
    !isLocalRefusal(failure) &&
    !predicate('retry()', 'budget.tryAcquireRetry', o.budget.tryAcquireRetry(failure))
  ) {
    return stop('budget', DEV ? 'the retry budget refused another retry' : '');
  }
  return delay as number;
}
