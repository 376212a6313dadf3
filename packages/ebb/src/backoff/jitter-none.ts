import type { JitterKind, Span } from './jitter.js';

/** `'none'`: every wait is the curve's delay `d`. */
export const noJitter: JitterKind = {
  draw: (d) => d,
};

/** The bounds of {@link noJitter}'s draw, for `describeRow()`. */
export const noneSpan: Span = (d) => [d, d];
