import { isBranded, isThenable, readNow, sleepOn } from '../core/boundary.js';
import { systemClock, unrefSystemClock } from '../core/clock.js';
import { DEV } from '../core/dev.js';
import { brief, nonNegative } from '../core/validate.js';
import { defaultIsFailure, type FailureVerdict, prop, type Result } from './errors.js';
import { Execution } from './execution.js';
import { NotDoneError } from './not-done-error.js';
import { type AttemptContext, KEYS, type Prepared, prepare, type RetryOptions } from './options.js';

export { NotDoneError } from './not-done-error.js';

/** What a `poll()` check reports: done with a value, or not yet. */
export type PollResult<T> =
  | { readonly done: true; readonly value: T }
  | { readonly done: false; readonly value?: undefined };

/** Options of {@link poll}: those of `retry()`, and a wait before the first check. */
export interface PollOptions<T = unknown> extends Omit<RetryOptions<T>, 'isFailure'> {
  /**
   * Which errors a check throws are worth another check (see `retry()`'s `isFailure`; asked
   * about thrown errors only: a check's own answer says whether the work is done). Default
   * {@link defaultIsFailure}: every error but an abort and a bug in the check's own code.
   */
  readonly isFailure?: (
    outcome: Result<never>,
    context: AttemptContext,
  ) => FailureVerdict | PromiseLike<FailureVerdict>;
  /**
   * Wait before the first check, in ms; default 0. The AWS sample waits 100 ms (2^0 × 100)
   * before its first poll, since the operation it polls has only just been started.
   */
  readonly initialDelayMs?: number;
}

/** True for a {@link NotDoneError}, from this copy of ebb or any other (by its `code`, `'EBB_NOT_DONE'`). */
export function isNotDoneError(value: unknown): value is NotDoneError {
  return isBranded(value, 'EBB_NOT_DONE', 'NotDoneError');
}

/** The option names `poll()` knows: `retry()`'s and its own. */
const POLL_KEYS = /* @__PURE__ */ KEYS.concat('initialDelayMs');

/**
 * Polls an asynchronous operation until it is done — the AWS General Reference's loop: check,
 * and while the answer is "not ready" (or a retryable error such as throttling), wait longer by
 * `options.backoff` and check again.
 *
 * `check` returns `{ done: true, value }` or `{ done: false }` (the value's type is inferred from
 * the `done: true` branch, so `{ done: false }` adds no `undefined` to it); a thrown error goes through
 * `isFailure` (by default as in `retry()`: every error but an abort, a `FinalError` and a bug in
 * the check's own code continues; pass a classifier such as `ebb/http`'s to stop on client
 * errors). Limits, time budget, abort and server hints behave as
 * in `retry()`. Resolves with the value; gives up with `RetryError` (reason `'attempts'` or
 * `'elapsed'`, cause a {@link NotDoneError} or the last error).
 *
 * @example
 * const job = await poll(async () => {
 *   const s = await getStatus(id);
 *   return s.state === 'SUCCEEDED' ? { done: true, value: s } : { done: false };
 * }, { backoff: presets.awsPolling, initialDelayMs: 100 });
 */
export async function poll<R extends PollResult<unknown>>(
  check: (context: AttemptContext) => R | PromiseLike<R>,
  options?: PollOptions<Extract<R, { done: true }>['value']>,
): Promise<Extract<R, { done: true }>['value']> {
  type T = Extract<R, { done: true }>['value'];
  if (typeof check !== 'function') {
    throw new TypeError(
      DEV
        ? `poll(): expected \`check\` to be a function, got ${check === null ? 'null' : typeof check}.`
        : brief('poll()', 'check', check),
    );
  }
  const o = prepare('poll()', options, POLL_KEYS);
  const initialDelayMs = nonNegative('poll()', 'initialDelayMs', options?.initialDelayMs, 0);
  if (o.signal?.aborted) throw o.signal.reason;
  const clock = o.clock ?? (o.unref ? unrefSystemClock : systemClock);
  const start = readNow(clock);
  if (initialDelayMs > 0) await sleepOn(clock, initialDelayMs, o.signal);
  const own = o.isFailure ?? defaultIsFailure;
  // A value is a done check; "not done" is a NotDoneError, never shown to the caller's isFailure.
  const isFailure = (outcome: Result, context: AttemptContext): FailureVerdict | PromiseLike<FailureVerdict> =>
    !outcome.ok && (isNotDoneError(outcome.error) || own(outcome, context));
  const operation = async (context: AttemptContext): Promise<T> => {
    const answer: unknown = check(context);
    // Read through `isThenable` and `prop`: a revoked proxy (every read throws) is a bad answer, named.
    const result = isThenable(answer) ? await answer : answer;
    const done = prop(result, 'done');
    if (typeof result !== 'object' || result === null || typeof done !== 'boolean') {
      throw new TypeError(
        DEV
          ? `poll(): the check must return { done: true, value } or { done: false }, got ${result === null ? 'null' : typeof result}.`
          : brief('poll()', 'check', result),
      );
    }
    if (done) return (result as { value: T }).value;
    throw new NotDoneError(context.attempt);
  };
  const prepared: Prepared = { ...o, full: true, timed: true, isFailure };
  return new Promise<T>((resolve, reject) =>
    new Execution<T>(operation, prepared, start, o.signal).then(resolve, reject),
  );
}
