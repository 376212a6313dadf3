import { describeThrown, EBB_ERROR, isA, isBranded, prop } from '../core/boundary.js';
import type { FinalError } from './final-error.js';
import type { RetryError } from './retry-error.js';

export { FinalError, stop } from './final-error.js';
export { type GiveUpReason, RetryError } from './retry-error.js';
// Where other modules have always found them.
export { describeThrown, EBB_ERROR, isA, isBranded, prop };

/**
 * True for a {@link RetryError} — from this copy of ebb or any other loaded in the same process
 * (an ESM and a CommonJS build, two versions), where `instanceof` is false. Recognised by its
 * stable `code` (`'EBB_RETRY_GAVE_UP'`), never throws.
 *
 * @example
 * try { await retry(op); } catch (e) { if (isRetryError(e)) log(e.reason, e.attempts); }
 */
export function isRetryError(value: unknown): value is RetryError {
  return isBranded(value, 'EBB_RETRY_GAVE_UP', 'RetryError');
}

/**
 * True for a `TimeoutError` — what `timeout(ms)` rejects with (and aborts the attempt's signal
 * with) when its time runs out, and what `AbortSignal.timeout()` produces: a `DOMException`, not a
 * class of ebb's, so recognised by its `name`. Never throws. A type guard to what it checks, an
 * object whose `name` is `'TimeoutError'` (not `DOMException`: any error may carry that name).
 *
 * @example
 * try { await api.execute(op); } catch (e) { if (isTimeoutError(e)) metrics.timeouts++; }
 */
export function isTimeoutError(error: unknown): error is { readonly name: 'TimeoutError' } {
  return prop(error, 'name') === 'TimeoutError';
}

/**
 * True for the errors aborts produce (`AbortError`), which the default classifier never retries.
 * A type guard to what it checks, an object whose `name` is `'AbortError'`.
 */
export function isAbortError(error: unknown): error is { readonly name: 'AbortError' } {
  return prop(error, 'name') === 'AbortError';
}

/**
 * True for what `stop(error)` (or `new FinalError(error)`) made — from this copy of ebb or any
 * other in the process. `retry()`, `poll()` and `retrySync()` use it: a `stop()` thrown by an
 * operation that imported another copy of ebb (the CommonJS build beside the ESM one, another
 * version) ends the run at once, as it should. Recognised by its stable `code` (`'EBB_FINAL'`).
 */
export function isFinal(value: unknown): value is FinalError {
  return isBranded(value, 'EBB_FINAL', 'FinalError');
}

/** The error a caller receives for a failure: a FinalError's own error (any copy's), else the failure as is. @internal */
export function unwrapFinal(error: unknown): unknown {
  return isFinal(error) ? prop(error, 'cause') : error;
}

/**
 * What the executor's failure predicate (`isFailure`) is asked: how one attempt ended — with a
 * value (`ok: true`) or a thrown error (`ok: false`).
 */
export type Result<T = unknown> =
  | { readonly ok: true; readonly value: T; readonly error?: undefined }
  | { readonly ok: false; readonly error: unknown; readonly value?: undefined };

/**
 * A failure predicate's answer: `true` (a failure: retried, counted), `false` (not one: a value
 * is the result, an error reaches the caller unchanged), or `'throttled'` (a failure that says
 * "slow down": retried like `true`; rate controllers record it as a throttle).
 */
export type FailureVerdict = boolean | 'throttled';

/**
 * The messages of the `TypeError` that `fetch` rejects with when the request failed on the way:
 * Node.js (undici: `fetch failed`, and `terminated` for a body cut off after the headers), then
 * the runtimes where the message is all there is (no error code): Chrome, Firefox, Safari (two
 * versions), React Native and the whatwg-fetch polyfill — the list
 * `@smithy/service-error-classification` uses for the AWS SDK — and Deno's
 * `error sending request …` (a prefix). One list for `defaultIsFailure` and `ebb/http`'s
 * `isNetworkError`, which skips Node.js's two (it reads their cause's code instead).
 */
const FETCH_FAILED_MESSAGES = [
  'fetch failed',
  'terminated',
  'Failed to fetch',
  'NetworkError when attempting to fetch resource.',
  'The Internet connection appears to be offline.',
  'Load failed',
  'Network request failed',
];

/**
 * Whether a `TypeError`'s message is one a failed `fetch` gives ({@link FETCH_FAILED_MESSAGES}),
 * from the list's entry `from` on (default all): `isNetworkError` passes 2 for only the messages
 * of the runtimes that give no error code, leaving out Node.js's two (its `fetch failed` is told
 * by its cause's code). A position rather than a flag: the default's caller, `defaultIsFailure`,
 * then carries no branch it never takes. @internal
 */
export const isFetchFailedMessage = (message: unknown, from?: number): boolean =>
  typeof message === 'string' &&
  (FETCH_FAILED_MESSAGES.includes(message, from) || message.startsWith('error sending request'));

/**
 * What counts as a failure when no `isFailure` is given — the default of every mechanism:
 *
 * - **a value** is never a failure;
 * - **an error** is a failure, `'throttled'` when it carries `throttled: true` (the HTTP layer
 *   sets it for 429 and throttling codes), except
 *   - an abort (`name === 'AbortError'`): the caller's decision;
 *   - a `TypeError`, `ReferenceError`, `SyntaxError` or `RangeError` — the errors JavaScript
 *     raises for a bug in the caller's own code (`undefined.x`, a typo, bad JSON handling), which
 *     another attempt only repeats — except a failed `fetch`: it reports a failed connection as
 *     a `TypeError` too, recognised here by the message each runtime gives it (Node.js `fetch
 *     failed` and `terminated`, Chrome, Firefox, Safari, React Native, Deno: see
 *     {@link FETCH_FAILED_MESSAGES}). `ebb/http`'s `isNetworkError` also reads the system error codes;
 *     compose it for errors of other clients: `isFailure: (o) => (!o.ok && isNetworkError(o.error)) || defaultIsFailure(o)`.
 *
 * Checked with `instanceof`, so an error from another realm (a `vm` context, an iframe) counts
 * as a failure. Compose it to change one case:
 * `isFailure: (o) => (!o.ok && o.error instanceof SyntaxError) || defaultIsFailure(o)`.
 */
export function defaultIsFailure(outcome: Result): FailureVerdict {
  if (outcome.ok) return false;
  const error = outcome.error;
  if (typeof error !== 'object' || error === null) return true;
  if (
    isAbortError(error) ||
    (isA(error, TypeError)
      ? !isFetchFailedMessage(prop(error, 'message'))
      : isA(error, ReferenceError) || isA(error, SyntaxError) || isA(error, RangeError))
  ) {
    return false;
  }
  return prop(error, 'throttled') === true ? 'throttled' : true;
}

/**
 * The reason an attempt's signal is aborted with when its time is up: a `TimeoutError`
 * `DOMException`, as `AbortSignal.timeout()` uses, so `fetch` rejects with it too.
 */
export function timeoutError(message: string): Error {
  return typeof DOMException === 'function'
    ? (new DOMException(message, 'TimeoutError') as unknown as Error)
    : Object.assign(new Error(message), { name: 'TimeoutError' });
}

/** The server's hint, from an error's numeric `retryAfterMs` property (>= 0, Infinity included), or undefined. */
export function retryAfterOf(error: unknown): number | undefined {
  const ms = prop(error, 'retryAfterMs');
  // Infinity stays: "longer than anything", which gives up (a NaN or negative hint is no hint).
  return typeof ms === 'number' && ms >= 0 ? ms : undefined;
}
