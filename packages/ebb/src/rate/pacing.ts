/**
 * How much of a late wake-up a pacer makes up for: `adaptiveRate`'s and a `sharedRate` member's.
 * When a pacer's timer fires late, the requests whose slots fell due go at once, so a busy event
 * loop does not lower the rate — within a bound, so that two requests never go closer than a
 * limiter without burst accepts.
 */

/** The most of a late wake-up made up for, ms (less at rates below 40 r/s: see {@link catchUpMs}). */
export const CATCH_UP_MS = 25;

/**
 * How late a wake-up may be made up for, at `interval` ms between requests. Where requests are
 * closer than CATCH_UP_MS, a busy event loop's timers cannot space them anyway, and a limiter at
 * that rate needs a burst allowance: the whole CATCH_UP_MS. Farther apart, at most `margin` × the
 * interval: two requests then never go closer than `(1 − margin)` × the interval, which a limiter
 * without burst at `1 / (1 − margin)` × the rate still accepts (nginx's `limit_req` without
 * `burst` refuses a request that comes less than `1 / rate` after the last one it accepted:
 * ngx_http_limit_req_module.c, `excess > limit->burst`).
 */
export function catchUpMs(interval: number, margin: number): number {
  return interval <= CATCH_UP_MS ? CATCH_UP_MS : Math.min(CATCH_UP_MS, margin * interval);
}
