import { draw } from './draw.js';
import type { JitterKind, Span } from './jitter.js';

/** `'equal'`: `d/2 + r·d/2`, uniform in [d/2, d), mean 3d/4 (Brooker, 2015, as `'full'`). */
export const equalJitter: JitterKind = {
  // In subnormals d / 2 rounds up (1.5e-323 / 2 is 1e-323), and the sum could pass d.
  draw: (d, random) => Math.min(d / 2 + (draw(random) * d) / 2, d),
};

/** The bounds of {@link equalJitter}'s draw, for `describeRow()`. */
export const equalSpan: Span = (d) => [d / 2, d];
