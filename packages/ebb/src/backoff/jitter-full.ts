import { draw } from './draw.js';
import type { JitterKind, Span } from './jitter.js';

/**
 * `'full'`: `r·d`, uniform in [0, d), mean d/2 (AWS Architecture Blog, "Exponential Backoff and
 * Jitter", Brooker, 2015).
 */
export const fullJitter: JitterKind = {
  draw: (d, random) => draw(random) * d,
};

/** The bounds of {@link fullJitter}'s draw, for `describeRow()`. */
export const fullSpan: Span = (d) => [0, d];
