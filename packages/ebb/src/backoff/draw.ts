import { describe } from '../core/boundary.js';
import { DEV } from '../core/dev.js';
import type { Random } from '../core/random.js';

/**
 * One draw of `random`, checked: a `Random` is user code, and a value outside [0, 1) would turn
 * into a silent wait of 2^53 ms (NaN), a negative delay that reads as "stop", or a wait past the
 * cap (1 or more). Such a draw throws, so the operation that drew it rejects with a named error
 * while every other operation goes on. −0 becomes 0. @internal
 */
export function draw(random: Random): number {
  const r = random();
  if (typeof r === 'number' && r >= 0 && r < 1) return r + 0;
  throw new (typeof r === 'number' ? RangeError : TypeError)(
    DEV
      ? `random() returned ${describe(r)}; expected a number in [0, 1). A Random works like Math.random; seeded(42) gives a reproducible one.`
      : `random() ${describe(r)}`,
  );
}
