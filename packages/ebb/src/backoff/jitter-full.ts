import { draw } from './draw.js';
import type { JitterKind } from './jitter.js';

/**
 * `'full'`: `r·d`, uniform in [0, d), mean d/2 (AWS Architecture Blog, "Exponential Backoff and
 * Jitter", Brooker, 2015).
 */
export const fullJitter: JitterKind = {
  draw: (d, random) => draw(random) * d,
  span: (d) => [0, d],
};
