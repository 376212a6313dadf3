/**
 * Recognizing a failed connection across runtimes. `fetch` reports every network failure as a
 * bare `TypeError` (Fetch standard: "a network error"), so the detail lives elsewhere in each
 * runtime:
 *
 * - **Node.js (undici)**: `TypeError: fetch failed` with the system error as `cause`
 *   (`cause.code` = `ECONNRESET`, `ECONNREFUSED`, `ENOTFOUND`, …) or an undici error
 *   (`UND_ERR_SOCKET` "other side closed", `UND_ERR_CONNECT_TIMEOUT`, …); a body cut off after
 *   the headers rejects the body read with `TypeError: terminated`, same `cause`.
 * - **Bun**: `code` on the error itself (`ConnectionRefused`, `ConnectionClosed`,
 *   `FailedToOpenSocket`, or Node's `ECONNRESET`), as oven-sh/bun#34397 documents; newer
 *   versions also use Node's shape.
 * - **Browsers**: only the message tells: Chrome "Failed to fetch", Firefox "NetworkError when
 *   attempting to fetch resource.", Safari "Load failed" (older: "The Internet connection
 *   appears to be offline."), React Native and the whatwg-fetch polyfill "Network request
 *   failed" — the list `@smithy/service-error-classification` uses for the AWS SDK.
 * - **Deno**: `TypeError: error sending request for url (…)`, and since 1.46, once the
 *   connection was made, `error sending request from <local address> for <url> (…)`
 *   (denoland/deno#24922).
 *
 * Aborts (`AbortError`) are not network errors: they are the caller's decision.
 *
 * `ebb/http` exports it. The executor's default (`defaultIsFailure`) does not walk these codes: it
 * recognises a failed `fetch` by the message each runtime gives its `TypeError`, which keeps
 * `retry()`'s bundle small; compose this one into `isFailure` for clients that report only a code.
 */

import { isA, prop } from '../core/boundary.js';
import { isFetchFailedMessage } from './errors.js';

/**
 * System and client error codes of a failed connection: undici's `RetryHandler` defaults
 * (ECONNRESET, ECONNREFUSED, ENOTFOUND, ENETDOWN, ENETUNREACH, EHOSTDOWN, UND_ERR_SOCKET), the
 * AWS SDK's `NODEJS_TIMEOUT_ERROR_CODES` and `NODEJS_NETWORK_ERROR_CODES` (EPIPE, ETIMEDOUT,
 * EHOSTUNREACH, EAI_AGAIN), undici's timeouts and its error for a body cut short of its
 * Content-Length, and Bun's codes.
 */
const NETWORK_CODES: ReadonlySet<string> = /* @__PURE__ */ new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETDOWN',
  'ENETRESET',
  'ENETUNREACH',
  'EHOSTDOWN',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  // A body shorter than its Content-Length when the connection ended: a cut-off response.
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
  'ConnectionRefused',
  'ConnectionClosed',
  'FailedToOpenSocket',
]);

/** Causes are followed this deep (the AWS SDK follows 10; real chains are two or three long). */
const MAX_DEPTH = 8;

/**
 * True if `error`, its `cause` chain or an AggregateError's `errors` carry one of `codes`. Reads
 * through `prop()`: a throwing getter or a revoked proxy anywhere in the chain reads as no code,
 * never as a throw. @internal
 */
export function codeIn(error: unknown, codes: ReadonlySet<string>, depth: number): boolean {
  if (typeof error !== 'object' || error === null || depth > MAX_DEPTH) return false;
  const code = prop(error, 'code');
  if (typeof code === 'string' && codes.has(code)) return true;
  // Node's happy-eyeballs connect fails with an AggregateError of one error per address.
  const errors = prop(error, 'errors');
  if (Array.isArray(errors) && errors.some((inner) => codeIn(inner, codes, depth + 1))) return true;
  return codeIn(prop(error, 'cause'), codes, depth + 1);
}

/**
 * True if `error` is a failed connection — reset, refused, unreachable, DNS failure, a socket
 * closed mid-response — in Node.js, Bun, Deno or a browser (see the module notes for each
 * runtime's shape). Aborts and timeouts of the caller's own making are not network errors. Never
 * throws: a hostile value (a throwing getter, a revoked proxy) is not a network error.
 *
 * A `boolean`, not a type guard: what it recognises has no one shape (the code may sit deep in
 * the `cause` chain), and a guard to `object` would tell TypeScript, where it answers `false`,
 * that the value is no object — an `Error` it rejects would be narrowed away.
 *
 * @example
 * try { await fetch(url); } catch (e) { if (isNetworkError(e)) scheduleRetry(); else throw e; }
 */
export function isNetworkError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  if (codeIn(error, NETWORK_CODES, 0)) return true;
  // Node.js's `fetch failed` is told by its cause's code (above); elsewhere only the message tells
  // (the list from its third entry: Node.js's two are its first).
  return isA(error, TypeError) && isFetchFailedMessage(prop(error, 'message'), 2);
}
