import { rateLimitWaitMs } from './rate-limit.js';
import { retryAfterMs } from './retry-after.js';

/** The part of a `Response` the hint needs (so tests and other clients can pass plain objects). */
export interface HasHeaders {
  readonly headers: { get(name: string): string | null };
}

/**
 * How long the server asked the client to wait before the next request, in milliseconds, or
 * undefined if it did not say: `Retry-After` first (RFC 9110 §10.2.3, read as `retryAfterMs`
 * reads it: an HTTP-date from the response's own `Date`), else the IETF `RateLimit` field's
 * effective window `t` for an exhausted policy (draft-ietf-httpapi-ratelimit-headers;
 * `Retry-After` "MUST take precedence" over it).
 *
 * `withRetry` reads `Retry-After` alone unless told otherwise (the `RateLimit` parser weighs
 * more than the rest of its hint reading); to honour `RateLimit` too, pass this function:
 * `withRetry(fetch, { serverHintMs })`. The hint becomes `retryAfterMs` on the error of a
 * failed response, and the executor then waits at least that long (or gives up if it is above
 * `maxRetryAfterMs`).
 *
 * @example
 * serverHintMs(new Response(null, { status: 429, headers: { ratelimit: '"default";r=0;t=2' } }));  // 2000
 */
export function serverHintMs(response: HasHeaders, nowMs: number = Date.now()): number | undefined {
  return retryAfterMs(response, nowMs) ?? rateLimitWaitMs(response.headers.get('ratelimit'));
}
