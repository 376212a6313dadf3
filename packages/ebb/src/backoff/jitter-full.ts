import { draw } from './draw.js';
import type { Jitter } from './jitter.js';

/**
 * Full jitter, ebb's default: each wait is `r·d`, uniform in [0, d), mean d/2 — the most spread
 * and the least work for a crowd of clients (AWS Architecture Blog, "Exponential Backoff and
 * Jitter", Brooker, 2015).
 *
 * @example
 * exponential({ initialDelayMs: 200, jitter: fullJitter }) // waits in [0, 200), [0, 400), …
 */
export const fullJitter: Jitter = /* @__PURE__ */ Object.freeze({
  name: 'full',
  toString: () => 'full jitter',
  draw: (d: number, random: () => number) => draw(random) * d,
  span: (d: number) => [0, d] as const,
});
