import { readNow } from '../core/boundary.js';
import { DEV } from '../core/dev.js';
import { mistyped } from '../core/validate.js';
import { Attempt, type Operation } from './attempt.js';
import { Execution } from './execution.js';
import { type AbortSource, type Prepared, prepare, type RetryOptions, timeOf } from './options.js';

// The executor's parts, where other modules and tests have always found them.
export { Attempt, Execution };

/**
 * Calls `operation` until it succeeds, backing off between attempts by `options.backoff`.
 *
 * - **Success** resolves with the operation's value (after `onSuccess`).
 * - **An error that is no failure** — `isFailure` says so (by default: an abort, or a
 *   `TypeError`, `ReferenceError`, `SyntaxError` or `RangeError` from the caller's own code, see
 *   {@link defaultIsFailure}), or the operation threw a {@link FinalError} (`stop(error)`) —
 *   rejects at once with the operation's own error, unchanged (a `FinalError`'s wrapped error).
 * - **Giving up** — attempts used up, the time budget reached, a server hint above
 *   `maxRetryAfterMs`, a budget's refusal — rejects with {@link RetryError} (`cause`: the last
 *   error); when the last attempt returned a value that `isFailure` judged a failure (a 503
 *   response, say), resolves with that value instead, as `fetch` would have returned it.
 * - **Abort** (`options.signal`) rejects with `signal.reason` at once: the running attempt's
 *   signal aborts, a wait is cut short, no attempt starts afterwards, and an already-aborted
 *   signal never calls the operation. No hook is called for an abort.
 * - **Bad values from user code** — a policy whose `next()` returns anything but a finite number
 *   >= 0 or -1, a clock whose `now()` is not a finite, non-decreasing number or whose `sleep()`
 *   does not return a promise — reject this operation with a `TypeError`/`RangeError` naming the
 *   source (``backoff.next() returned NaN; …``); other operations are not affected. A hook or
 *   an `isFailure` that throws (or rejects) rejects the operation with that error.
 *
 * Deadlines: with the policy's `maxElapsedMs`, the executor never starts a wait that would end
 * past the deadline (it gives up at once instead — and never sleeps after the last attempt) and
 * never starts an attempt past it (a wake-up that comes late gives up). An attempt still running
 * at the deadline is left to finish: to bound it, put a `timeout(ms)` around the retry in a
 * pipeline (`pipeline([timeout(ms), retrying(options)])`) or around each attempt.
 *
 * Server hints: an error with a numeric `retryAfterMs` (the HTTP layer sets it from
 * `Retry-After`) makes the next wait at least that long. A hint above `maxRetryAfterMs`
 * (default 60 s; a hint of exactly 60 s is waited) ends the run with reason `'retry-after'`:
 * like got, and unlike ky, which clamps the hint and so retries before the server said it
 * would be ready.
 *
 * Timers: when the returned promise settles, no timer or listener of this call remains.
 *
 * Elapsed time: `elapsedMs` (in contexts, hooks and `RetryError`) and the time budget count from
 * a clock reading taken just before attempt 1 whenever anything configured reads the elapsed time
 * during the run: a time budget (`maxElapsedMs`), a signal, a budget, any hook, a custom `clock`,
 * or a policy whose runs may read it (Google's, AWS's, a custom one). Otherwise — the default
 * call, or a curve from `exponential()` and friends with none of those — a success reads no
 * clock at all, and the first reading is taken when
 * attempt 1 fails: `elapsedMs` then counts from that failure (attempt 1's own duration left out), and `RetryError`'s message says so.
 *
 * @example
 * const user = await retry(({ signal }) => fetch(url, { signal }).then(check), {
 *   backoff: exponential({ maxAttempts: 4 }),
 *   signal: AbortSignal.timeout(30_000),
 * });
 */
export function retry<T>(operation: Operation<T>, options?: RetryOptions<Awaited<T>>): Promise<Awaited<T>> {
  try {
    if (typeof operation !== 'function') mistyped('retry()', 'operation', operation, DEV ? 'a function' : '');
    return execute(operation, prepare('retry()', options));
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * `retry()` after its options were prepared: `source` aborts it (default the options' signal).
 * @internal
 */
export function execute<T>(
  operation: Operation<T>,
  o: Prepared,
  source: AbortSource | undefined = o.signal,
): Promise<Awaited<T>> {
  let start = Number.NaN;
  try {
    if (source?.aborted) throw source.reason;
    // Not read before attempt 1 when nothing configured reads the elapsed time during the run:
    // a success then costs no clock reading (see "Elapsed time" above).
    if (o.timed) start = readNow(timeOf(o));
  } catch (error) {
    return Promise.reject(error);
  }
  if (o.full || source) {
    return new Promise((resolve, reject) => new Execution<T>(operation, o, start, source).then(resolve, reject));
  }
  // The success path: one call, one `then`; nothing else is allocated but the context.
  const context = new (o.Context ?? Attempt)(1, 0);
  let result: T | PromiseLike<T>;
  try {
    result = operation(context);
  } catch (error) {
    return new Promise((resolve, reject) =>
      new Execution<T>(operation, o, start, source, context, error).then(resolve, reject),
    );
  }
  // On failure the returned promise adopts the execution (a thenable): no second promise.
  return (result instanceof Promise ? result : Promise.resolve(result)).then(
    undefined,
    (error: unknown) =>
      new Execution<T>(operation, o, start, source, context, error) as unknown as PromiseLike<Awaited<T>>,
  ) as Promise<Awaited<T>>;
}
