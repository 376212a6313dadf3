import { rateLimitWaitMs } from './rate-limit.js';
import { parseHttpDate, parseRetryAfter } from './retry-after.js';

/** The part of a `Response` the hint needs (so tests and other clients can pass plain objects). */
export interface HasHeaders {
  readonly headers: { get(name: string): string | null };
}

/**
 * How long the server asked the client to wait before the next request, in milliseconds, or
 * undefined if it did not say: `Retry-After` first (RFC 9110 §10.2.3), else the IETF `RateLimit`
 * field's effective window `t` for an exhausted policy (draft-ietf-httpapi-ratelimit-headers;
 * `Retry-After` "MUST take precedence" over it).
 *
 * An HTTP-date in `Retry-After` is measured from the response's own `Date` field when it has a
 * valid one, so that the wait is what the server meant whatever the skew between the two
 * clocks; otherwise from `nowMs` (default `Date.now()`). A date in the past gives 0.
 *
 * `withRetry` sets this as `retryAfterMs` on the error of a retryable response, and the
 * executor then waits at least that long (or gives up if it is above `maxRetryAfterMs`).
 *
 * @example
 * serverHintMs(new Response(null, { status: 429, headers: { 'retry-after': '2' } }));  // 2000
 */
export function serverHintMs(response: HasHeaders, nowMs: number = Date.now()): number | undefined {
  // Both parsers read a missing field (null) as no value.
  const serverNow = parseHttpDate(response.headers.get('date'), nowMs);
  const ms = parseRetryAfter(response.headers.get('retry-after'), serverNow ?? nowMs);
  return ms ?? rateLimitWaitMs(response.headers.get('ratelimit'));
}
