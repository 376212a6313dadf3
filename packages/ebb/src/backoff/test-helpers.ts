import type { Random } from '../core/random.js';
import type { Backoff } from './backoff.js';
import { describePolicy } from './describe.js';
import type { LimitOptions } from './limits.js';
import { withOptions } from './with-options.js';

/** A `Random` that always returns `r`. */
export const always =
  (r: number): Random =>
  () =>
    r;

/** The largest value a `Random` may return. */
export const NEXT_BELOW_ONE = 1 - 2 ** -53;

/** The first `n` rows' un-randomized delays. */
export const delays = (b: Backoff, n: number): number[] => describePolicy(b, n).rows.map((r) => r.delayMs);

/** The first `n` waits of a run driven by a fixed random value. */
export function run(b: Backoff, n: number, r = 0.5): number[] {
  const it = b.start(always(r));
  return Array.from({ length: n }, () => it.next());
}

/**
 * `make(limits)`; or, where the constructor refuses a cap below the first wait, the policy made
 * without its caps and capped by `withOptions()` (which narrows as told), so that tests over any
 * options still reach the clamped rows. The caps keep their meaning: a `maxIntervalMs` given
 * lifts the default `maxDelayMs` as the constructor does.
 */
export function capped(make: (limits: LimitOptions) => Backoff, limits: LimitOptions): Backoff {
  try {
    return make(limits);
  } catch (error) {
    if (!(error instanceof RangeError && error.message.includes('is below the first wait'))) throw error;
    const { maxIntervalMs, maxDelayMs, ...rest } = limits;
    return withOptions(make(rest), {
      maxIntervalMs,
      maxDelayMs: maxDelayMs ?? (maxIntervalMs === undefined ? undefined : Number.POSITIVE_INFINITY),
    });
  }
}
