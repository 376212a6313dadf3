import { describeThrown, EBB_ERROR, isA, prop } from '../core/boundary.js';
import { DEV } from '../core/dev.js';
import type { FinalError } from './final-error.js';

export { FinalError, stop } from './final-error.js';
// Where other modules have always found them.
export { describeThrown, EBB_ERROR, isA, prop };

/**
 * Whether `value` is ebb's error of class `C` (stable `code`, `name`), from this copy of ebb or
 * any other: `instanceof` first (this copy); else the brand's code; else — an error made by a
 * copy of ebb older than the brand — its `code` and `name` together. Never throws: a revoked
 * proxy or a throwing getter is simply not ebb's error. @internal
 */
export function isEbbError(
  value: unknown,
  C: abstract new (...args: never[]) => unknown,
  code: string,
  name: string,
): boolean {
  return isA(value, C) || isBranded(value, code, name);
}

/**
 * {@link isEbbError} without the class: the brand's code, else (an error of a copy older than
 * the brand) `code` and `name` together. This copy's errors carry the brand too (a getter on
 * the class's prototype that returns the code itself, so an object made from the prototype
 * without the constructor is recognised, as `instanceof` would), so the guard need not name
 * the class. Never throws. @internal
 */
export function isBranded(value: unknown, code: string, name: string): boolean {
  const brand = prop(value, EBB_ERROR);
  return brand !== undefined ? brand === code : prop(value, 'code') === code && prop(value, 'name') === name;
}

/** Why an executor gave up. */
export type GiveUpReason =
  /** The policy's `maxAttempts` were used up. */
  | 'attempts'
  /** The next wait would have ended past the policy's `maxElapsedMs`, or a wait's wake-up came after it. */
  | 'elapsed'
  /** The server asked for a wait (`retryAfterMs`) longer than `maxRetryAfterMs`. */
  | 'retry-after'
  /** The retry budget refused another retry. */
  | 'budget';

/**
 * The error an executor rejects with when it gives up on an operation that kept failing with
 * retryable errors. The last error is `cause`, unchanged.
 *
 * An error `isFailure` says is no failure is *not* wrapped: the caller gets the
 * operation's own error. An abort rejects with `signal.reason`.
 */
export class RetryError extends Error {
  override readonly name = 'RetryError';
  /** Stable across versions, for matching without `instanceof` (across realms or copies): see {@link isRetryError}. */
  readonly code = 'EBB_RETRY_GAVE_UP';
  /** Why the executor gave up. */
  declare readonly reason: GiveUpReason;
  /** Calls of the operation made, the first included. */
  declare readonly attempts: number;
  /**
   * Milliseconds from the start of the operation to giving up — from attempt 1's failure when
   * nothing configured read the elapsed time during the run (see `retry()`, "Elapsed time").
   */
  declare readonly elapsedMs: number;

  /**
   * `detail` says why in words; `fromFailure`: `elapsedMs` counts from attempt 1's failure (a
   * lazy start), and the message says so rather than pass it off as the whole run's time. The
   * production build's message is short: the reason and the attempts (`gave up (attempts) after
   * attempt 5`); `cause` holds the last error in every build.
   */
  constructor(
    reason: GiveUpReason,
    attempts: number,
    elapsedMs: number,
    cause: unknown,
    detail?: string,
    fromFailure?: boolean,
  ) {
    super(
      DEV
        ? `Gave up after ${attempts} attempt${attempts === 1 ? '' : 's'}${fromFailure ? `, ${Math.round(elapsedMs)} ms after attempt 1 failed` : ` in ${Math.round(elapsedMs)} ms`}: ${detail}. Last error: ${cause === undefined ? 'none' : describeThrown(cause)}`
        : `gave up (${reason}) after attempt ${attempts}`,
      { cause },
    );
    this.reason = reason;
    this.attempts = attempts;
    this.elapsedMs = elapsedMs;
  }

  /** The brand other copies of ebb recognise it by: its code. @internal */
  get [EBB_ERROR](): string {
    return 'EBB_RETRY_GAVE_UP';
  }
}

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

/** True for the errors aborts produce (`AbortError`), which the default classifier never retries. */
export function isAbortError(error: unknown): boolean {
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

/** How many of {@link FETCH_FAILED_MESSAGES}' first entries are Node.js's. */
const NODE_MESSAGES = 2;

/**
 * Whether a `TypeError`'s message is one a failed `fetch` gives ({@link FETCH_FAILED_MESSAGES});
 * with `node` false, only the messages of the runtimes that give no error code (Node.js's `fetch
 * failed` is told by its cause's code). @internal
 */
export const isFetchFailedMessage = (message: unknown, node = true): boolean =>
  typeof message === 'string' &&
  (FETCH_FAILED_MESSAGES.includes(message, node ? 0 : NODE_MESSAGES) || message.startsWith('error sending request'));

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
