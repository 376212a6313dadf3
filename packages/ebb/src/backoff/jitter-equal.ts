import { draw } from './draw.js';
import type { Jitter } from './jitter.js';

/**
 * Equal jitter: each wait is `d/2 + r·d/2`, uniform in [d/2, d), mean 3d/4 — half the delay kept,
 * half spread (Brooker, 2015, as {@link fullJitter}). Never shorter than half the curve.
 */
export const equalJitter: Jitter = /* @__PURE__ */ Object.freeze({
  name: 'equal',
  toString: () => 'equal jitter',
  // In subnormals d / 2 rounds up (1.5e-323 / 2 is 1e-323), and the sum could pass d.
  draw: (d: number, random: () => number) => Math.min(d / 2 + (draw(random) * d) / 2, d),
  span: (d: number) => [d / 2, d] as const,
});
