/**
 * The wait a `RateLimit` field implies (draft-ietf-httpapi-ratelimit-headers). The field's parser
 * lives in `core/rate-limit-field.ts`, below both `http/` and `rate/`, which read it.
 */

import { MAX_DELAY_MS } from '../backoff/backoff.js';
import { parseRateLimit } from '../core/rate-limit-field.js';

export { parseRateLimit, type RateLimitItem } from '../core/rate-limit-field.js';

/**
 * The wait, in milliseconds, that a `RateLimit` field implies for a throttled client: the
 * longest effective window `t` among the policies whose quota is used up (`r=0`). Undefined
 * when no policy is exhausted or the exhausted ones give no `t`, and when the field is absent
 * or malformed. A `Retry-After` on the same response takes precedence (draft §7: "the
 * Retry-After field MUST take precedence").
 *
 * @example
 * rateLimitWaitMs('"burst";r=0;t=2, "daily";r=900;t=3600');  // 2000
 */
export function rateLimitWaitMs(value: string | null | undefined): number | undefined {
  const items = parseRateLimit(value);
  if (!items) return undefined;
  let wait: number | undefined;
  for (const item of items) {
    if (item.remaining === 0 && item.windowSeconds !== undefined) {
      // 15 digits of seconds can exceed 2^53 ms: saturate as every wait in ebb does.
      const ms = Math.min(item.windowSeconds * 1000, MAX_DELAY_MS);
      if (wait === undefined || ms > wait) wait = ms;
    }
  }
  return wait;
}
