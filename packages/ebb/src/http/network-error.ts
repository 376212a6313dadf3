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
 * - **Deno**: `TypeError: error sending request for url (…)`.
 *
 * Aborts (`AbortError`) are not network errors: they are the caller's decision.
 */

/**
 * System and client error codes of a failed connection: undici's `RetryHandler` defaults
 * (ECONNRESET, ECONNREFUSED, ENOTFOUND, ENETDOWN, ENETUNREACH, EHOSTDOWN, UND_ERR_SOCKET), the
 * AWS SDK's `NODEJS_TIMEOUT_ERROR_CODES` and `NODEJS_NETWORK_ERROR_CODES` (EPIPE, ETIMEDOUT,
 * EHOSTUNREACH, EAI_AGAIN), undici's timeouts and its error for a body cut short of its
 * Content-Length, and Bun's codes.
 */
const NETWORK_CODES: ReadonlySet<string> = new Set([
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

/**
 * Codes proving that the request never reached a server — the connection was refused or the
 * name did not resolve — so that even a non-idempotent request can be sent again safely.
 */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ConnectionRefused',
  'FailedToOpenSocket',
]);

const BROWSER_MESSAGES: ReadonlySet<string> = new Set([
  'Failed to fetch',
  'NetworkError when attempting to fetch resource.',
  'The Internet connection appears to be offline.',
  'Load failed',
  'Network request failed',
]);

/** Causes are followed this deep (the AWS SDK follows 10; real chains are two or three long). */
const MAX_DEPTH = 8;

function codeIn(error: unknown, codes: ReadonlySet<string>, depth: number): boolean {
  if (typeof error !== 'object' || error === null || depth > MAX_DEPTH) return false;
  const e = error as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && codes.has(e.code)) return true;
  // Node's happy-eyeballs connect fails with an AggregateError of one error per address.
  if (Array.isArray(e.errors) && e.errors.some((inner) => codeIn(inner, codes, depth + 1))) return true;
  return codeIn(e.cause, codes, depth + 1);
}

/**
 * True if `error` is a failed connection — reset, refused, unreachable, DNS failure, a socket
 * closed mid-response — in Node.js, Bun, Deno or a browser (see the module notes for each
 * runtime's shape). Aborts and timeouts of the caller's own making are not network errors.
 *
 * @example
 * try { await fetch(url); } catch (e) { if (isNetworkError(e)) scheduleRetry(); else throw e; }
 */
export function isNetworkError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  if (codeIn(error, NETWORK_CODES, 0)) return true;
  if (error instanceof TypeError) {
    const message = error.message;
    if (BROWSER_MESSAGES.has(message) || message.startsWith('error sending request for url')) return true;
  }
  return false;
}

/**
 * True if `error` proves the request was never sent: the connection was refused or the host
 * name did not resolve. Such a failure can be retried for any method, POST included.
 */
export function isNotSentError(error: unknown): boolean {
  return codeIn(error, NOT_SENT_CODES, 0);
}

/**
 * True for a `TimeoutError` — what an attempt's signal aborts with when `attemptTimeoutMs` runs
 * out, and what `AbortSignal.timeout()` produces.
 */
export function isTimeoutError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'TimeoutError';
}
