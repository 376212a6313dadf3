import { type HttpPredicate, isTransientError, responseOf, statusOf } from './predicates.js';
import { responseText } from './response-text.js';

/**
 * Google HTTP Client for Java's rule: back off on **500 and 503** —
 * `ExponentialBackOffPolicy.isBackOffRequired(statusCode)`, "The default implementation
 * requires back off for 500 and 503 status codes" (googleapis/google-http-java-client). Network
 * failures and attempt timeouts are retried too, as everywhere in ebb (the Java client retries
 * an `IOException` only when given an `HttpBackOffIOExceptionHandler`). Everything else is final,
 * 429 included.
 *
 * Pairs with `presets.googleHttpClient` (500 ms ×1.5, ±50 %, 15-minute budget). The newer
 * `HttpBackOffUnsuccessfulResponseHandler` backs off on any 5xx (`ON_SERVER_ERROR`); use
 * `(o) => o.ok ? o.value.status >= 500 : googleHttpClient(o)` for that.
 *
 * @example
 * const get = withRetry(fetch, { backoff: presets.googleHttpClient, isFailure: googleHttpClient });
 */
export const googleHttpClient: HttpPredicate = (outcome) => {
  const status = statusOf(outcome);
  if (status === undefined) return !outcome.ok && isTransientError(outcome.error);
  return status === 500 || status === 503;
};

/** The 403 reasons Drive documents as rate limits, to be retried with exponential backoff. */
const DRIVE_RATE_LIMIT_REASONS: ReadonlySet<string> = new Set(['rateLimitExceeded', 'userRateLimitExceeded']);

/** Whether a Google JSON error document gives a rate-limit reason in `error.errors[].reason`. */
function isRateLimitDocument(text: string): boolean {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return false;
  }
  const errors = (doc as { error?: { errors?: unknown } } | null)?.error?.errors;
  return (
    Array.isArray(errors) &&
    errors.some((e) => DRIVE_RATE_LIMIT_REASONS.has((e as { reason?: unknown } | null)?.reason as string))
  );
}

/**
 * The Google Drive API's rule ("Resolve errors" and "Usage limits",
 * developers.google.com/workspace/drive/api/guides): retry with exponential backoff on
 * - **403** whose JSON `error.errors[].reason` is `rateLimitExceeded` or
 *   `userRateLimitExceeded` (`'throttled'`) — Drive's quota errors are 403s, not 429s;
 * - **429** Too Many Requests (`'throttled'`);
 * - **500, 502, 503, 504** (`true`);
 * and network failures and attempt timeouts. Every other 403 (`forbidden`,
 * `insufficientFilePermissions`, `dailyLimitExceeded`, `storageQuotaExceeded`, …) and every
 * other 4xx is no failure: waiting does not grant a permission or a day's quota.
 *
 * It reads the body of a 403 only (`responseText`: the first 64 KiB, from a clone, so the
 * response you get back is unread).
 *
 * Pairs with `presets.googleDrive` (1, 2, 4, 8, 16 s, each + U[0, 1000] ms, 32 s cap, 6 attempts).
 */
export const googleDrive: HttpPredicate = async (outcome) => {
  const status = statusOf(outcome);
  if (status === undefined) return !outcome.ok && isTransientError(outcome.error);
  if (status === 429) return 'throttled';
  if (status === 500 || status === 502 || status === 503 || status === 504) return true;
  return status === 403 && isRateLimitDocument(await responseText(responseOf(outcome) as Response)) && 'throttled';
};
