import type { Random } from '../core/random.js';
import type { Backoff } from './backoff.js';
import { describePolicy } from './describe.js';

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
