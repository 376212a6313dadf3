import { formatMs } from '../core/format-ms.js';
import { check, DURATION_MS } from '../core/validate.js';
import { draw } from './draw.js';
import type { Jitter } from './jitter.js';

/**
 * Additive jitter: each wait is `d + r·maxMs`, uniform in [d, d + maxMs], mean d + maxMs/2 —
 * Google Drive's "+ random_number_milliseconds". It can push a wait above the curve's cap;
 * `maxDelayMs` clamps it.
 *
 * @param maxMs the most added to each wait, in ms.
 * @example
 * exponential({ initialDelayMs: 1_000, jitter: additiveJitter(1_000), maxDelayMs: 32_000 }) // Drive
 */
export function additiveJitter(maxMs: number): Jitter {
  const most = check('additiveJitter()', 'maxMs', maxMs, DURATION_MS);
  return Object.freeze({
    name: `additive:${most}`,
    toString: () => `+0–${formatMs(most)} jitter`,
    draw: (d: number, random: () => number) => d + draw(random) * most,
    span: (d: number) => [d, d + most] as const,
  });
}
