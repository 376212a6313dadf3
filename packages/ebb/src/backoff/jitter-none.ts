import type { JitterKind } from './jitter.js';

/** `'none'`: every wait is the curve's delay `d`. */
export const noJitter: JitterKind = {
  draw: (d) => d,
  span: (d) => [d, d],
};
