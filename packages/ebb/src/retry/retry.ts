import type { BackoffRun } from '../backoff/backoff.js';
import { isAbortError, RetryError, retryAfterOf, timeoutError } from './errors.js';
import { type AttemptContext, DEFAULTS, type Prepared, prepare, type RetryOptions } from './options.js';

/**
 * The context an attempt receives. A class with a lazy `signal` rather than a frozen object:
 * the success path pays neither `Object.freeze` nor an `AbortController` it does not use.
 * @internal
 */
export class Attempt implements AttemptContext {
  readonly attempt: number;
  readonly elapsedMs: number;
  #controller: AbortController | undefined;
  #reason: unknown;
  #aborted = false;

  constructor(attempt: number, elapsedMs: number) {
    this.attempt = attempt;
    this.elapsedMs = elapsedMs;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Aborts this attempt's signal (now, or when it is first read). */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

const noop = (): void => {};

/** An attempt's failure still to handle (a box: an operation may throw `undefined`). */
export class Failure {
  constructor(readonly error: unknown) {}
}

/**
 * Calls `operation` until it succeeds, backing off between attempts by `options.backoff`.
 *
 * - **Success** resolves with the operation's value.
 * - **A final failure** — one `retryIf` rejects (by default: an `AbortError`) — rejects with the
 *   operation's own error, unchanged, at once.
 * - **Giving up** — attempts used up, the time budget reached, a server hint above
 *   `maxRetryAfterMs`, a budget's refusal — rejects with {@link RetryError} (`cause`: the last error).
 * - **Abort** (`options.signal`) rejects with `signal.reason` at once: the running attempt's
 *   signal aborts, a wait is cut short, no attempt starts afterwards, and an already-aborted
 *   signal never calls the operation.
 *
 * Deadlines: with the policy's `maxElapsedMs`, the executor never starts a wait that would end
 * past the deadline (it gives up at once instead — and never sleeps after the last attempt), and
 * an attempt still running at the deadline has its signal aborted and ends the run.
 *
 * Server hints: an error with a numeric `retryAfterMs` (the HTTP layer sets it from
 * `Retry-After`) makes the next wait at least that long. A hint above `maxRetryAfterMs`
 * (default 60 s) ends the run with reason `'retry-after'`: like got, and unlike ky, which clamps
 * the hint and so retries before the server said it would be ready.
 *
 * Timers: when the returned promise settles, no timer or listener of this call remains.
 *
 * @example
 * const user = await retry(({ signal }) => fetch(url, { signal }).then(check), {
 *   backoff: presets.default,
 *   attemptTimeoutMs: 5_000,
 *   signal: AbortSignal.timeout(30_000),
 * });
 */
export function retry<T>(
  operation: (context: AttemptContext) => T | PromiseLike<T>,
  options?: RetryOptions,
): Promise<Awaited<T>> {
  let o: Prepared;
  try {
    if (typeof operation !== 'function') {
      throw new TypeError(
        `retry(): expected \`operation\` to be a function, got ${operation === null ? 'null' : typeof operation}.`,
      );
    }
    o = options === undefined ? DEFAULTS : prepare('retry()', options);
  } catch (error) {
    return Promise.reject(error);
  }
  const signal = o.signal;
  if (signal?.aborted) return Promise.reject(signal.reason);
  const start = o.clock.now();
  if (
    signal !== undefined ||
    o.rate ||
    o.budget ||
    o.attemptTimeoutMs !== Infinity ||
    o.backoff.maxElapsedMs !== Infinity
  ) {
    return loop(operation, o, start, 1, undefined);
  }
  // The success path: one call, one `then`, nothing else allocated but the context.
  const context = new Attempt(1, 0);
  let result: T | PromiseLike<T>;
  try {
    result = operation(context);
  } catch (error) {
    return loop(operation, o, start, 2, new Failure(error), context);
  }
  const onFailure = (error: unknown) => loop(operation, o, start, 2, new Failure(error), context);
  if (result instanceof Promise) return result.then(undefined, onFailure);
  if (isThenable(result)) return Promise.resolve(result).then(undefined, onFailure);
  return Promise.resolve(result as Awaited<T>);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}

/**
 * The general loop (@internal; `poll()` drives it too): from attempt `next` on, having already seen `failure` of the attempt
 * before (when coming from the success path).
 */
export async function loop<T>(
  operation: (context: AttemptContext) => T | PromiseLike<T>,
  o: Prepared,
  start: number,
  next: number,
  failure: Failure | undefined,
  failedContext?: Attempt,
): Promise<Awaited<T>> {
  const { signal, clock, rate, budget } = o;
  const deadline = start + o.backoff.maxElapsedMs;
  let run: BackoffRun | undefined;
  let current: Attempt | undefined = failedContext;
  // The one pending wait the caller's abort must cut short: its reject function.
  let cancel: ((reason: unknown) => void) | undefined;
  const onAbort = (): void => {
    const reason = (signal as AbortSignal).reason;
    current?.abort(reason);
    cancel?.(reason);
  };
  /** Settles with `p`, or rejects with the abort reason if the caller aborts first. */
  const guarded = <V>(p: PromiseLike<V>): Promise<V> =>
    new Promise<V>((resolve, reject) => {
      cancel = reject;
      p.then(resolve, reject);
    });
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    budget?.recordRequest?.();
    // `attempt` is the last attempt made; `failure`, if set, is its outcome still to handle.
    for (let attempt = next - 1; ; ) {
      if (failure === undefined) {
        attempt++;
        if (rate) await guarded(Promise.resolve(rate.acquire(signal)));
        const elapsed = clock.now() - start;
        const left = o.backoff.maxElapsedMs - elapsed;
        const context = new Attempt(attempt, elapsed);
        current = context;
        try {
          const value = await runAttempt(operation, context, o, left, signal, guarded);
          rate?.record('success');
          budget?.recordSuccess();
          return value;
        } catch (error) {
          if (signal?.aborted) throw signal.reason;
          failure = new Failure(error);
        }
      }
      const error = failure.error;
      const context = current as Attempt;
      failure = undefined;
      rate?.record(isThrottle(error) ? 'throttled' : 'failure');
      if (deadlineFailure(error)) {
        throw new RetryError(
          'elapsed',
          attempt,
          clock.now() - start,
          error,
          `maxElapsedMs (${o.backoff.maxElapsedMs} ms) ran out during attempt ${attempt}`,
        );
      }
      const retryable = o.retryIf ? await guarded(Promise.resolve(o.retryIf(error, context))) : !isAbortError(error);
      if (!retryable) throw error;
      run ??= o.backoff.start(o.random);
      let delay = run.next();
      const elapsed = clock.now() - start;
      if (delay < 0) throw new RetryError('attempts', attempt, elapsed, error, `maxAttempts (${attempt}) reached`);
      const hint = retryAfterOf(error);
      if (hint !== undefined) {
        if (hint > o.maxRetryAfterMs) {
          throw new RetryError(
            'retry-after',
            attempt,
            elapsed,
            error,
            `the server asked to wait ${hint} ms, more than maxRetryAfterMs (${o.maxRetryAfterMs} ms)`,
          );
        }
        if (hint > delay) delay = hint;
      }
      if (start + elapsed + delay > deadline) {
        throw new RetryError(
          'elapsed',
          attempt,
          elapsed,
          error,
          `the next wait (${Math.round(delay)} ms) would end past maxElapsedMs (${o.backoff.maxElapsedMs} ms)`,
        );
      }
      if (budget && !budget.tryAcquireRetry(error)) {
        throw new RetryError('budget', attempt, elapsed, error, 'the retry budget refused another retry');
      }
      if (o.onRetry) {
        await guarded(
          Promise.resolve(o.onRetry(Object.freeze({ attempt, error, delayMs: delay, elapsedMs: elapsed }))),
        );
      }
      current = undefined;
      await clock.sleep(delay, signal);
    }
  } finally {
    cancel = undefined;
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Marks the TimeoutError the executor's own deadline aborts an attempt with. */
const DEADLINE = Symbol('ebb.deadline');

function deadlineFailure(error: unknown): boolean {
  return typeof error === 'object' && error !== null && DEADLINE in error;
}

function isThrottle(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { throttled?: unknown }).throttled === true;
}

/**
 * Runs one attempt under its time limits: `attemptTimeoutMs`, and what is left of the deadline.
 * Resolves with the value, or rejects with the operation's error or the timeout's.
 */
async function runAttempt<T>(
  operation: (context: AttemptContext) => T | PromiseLike<T>,
  context: Attempt,
  o: Prepared,
  leftMs: number,
  signal: AbortSignal | undefined,
  guarded: <V>(p: PromiseLike<V>) => Promise<V>,
): Promise<Awaited<T>> {
  // Another callback may have aborted since the wait ended: no attempt starts after an abort.
  if (signal?.aborted) throw signal.reason;
  const byDeadline = leftMs < o.attemptTimeoutMs;
  const limit = byDeadline ? leftMs : o.attemptTimeoutMs;
  if (limit === Infinity) return (await guarded(Promise.resolve(operation(context)))) as Awaited<T>;
  const timer = new AbortController();
  const timedOut = o.clock.sleep(limit > 0 ? limit : 0, timer.signal).then(() => {
    const error = timeoutError(
      byDeadline
        ? `attempt ${context.attempt} reached the deadline (maxElapsedMs ${o.backoff.maxElapsedMs} ms)`
        : `attempt ${context.attempt} timed out after ${o.attemptTimeoutMs} ms (attemptTimeoutMs)`,
    );
    if (byDeadline) Object.defineProperty(error, DEADLINE, { value: true });
    context.abort(error);
    throw error;
  });
  timedOut.catch(noop);
  try {
    const work = Promise.resolve(operation(context));
    return (await guarded(Promise.race([work, timedOut]))) as Awaited<T>;
  } finally {
    timer.abort();
  }
}
