/**
 * HTTP-side predicates over failed requests. `isNetworkError` (and the notes on each runtime's
 * shape of a failed connection) lives in retry/network-error.ts, where the executor's default
 * once used it; it could move here whole.
 */
import { codeIn } from '../retry/network-error.js';

export { isNetworkError } from '../retry/network-error.js';

/**
 * Codes proving that the request never reached a server — the connection was refused or the
 * name did not resolve — so that even a non-idempotent request can be sent again safely.
 */
const NOT_SENT_CODES: ReadonlySet<string> = /* @__PURE__ */ new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ConnectionRefused',
  'FailedToOpenSocket',
]);

/**
 * True if `error` proves the request was never sent: the connection was refused or the host
 * name did not resolve. Such a failure can be retried for any method, POST included.
 */
export function isNotSentError(error: unknown): boolean {
  return codeIn(error, NOT_SENT_CODES, 0);
}

// Where ebb/http has always exported it; it lives beside isAbortError.
export { isTimeoutError } from '../retry/errors.js';
