import { check, type Rule } from '../core/validate.js';
import { draw } from './draw.js';
import type { Jitter } from './jitter.js';

const FACTOR: Rule = { max: 1, fix: 'A factor of 0.5 spreads each delay over ±50 %.' };

/**
 * Proportional jitter: each wait is `d·(1 − f + 2·f·r)`, uniform in [d(1−f), d(1+f)], mean d —
 * the Google HTTP client's randomization factor, gRPC's ±20 %. It can push a wait above the
 * curve's `maxIntervalMs` (as both sources do); `maxDelayMs` clamps it.
 *
 * @param factor the spread, from 0 to 1: 0.2 is ±20 %.
 * @example
 * exponential({ initialDelayMs: 1_000, multiplier: 1.6, jitter: proportionalJitter(0.2) })
 */
export function proportionalJitter(factor: number): Jitter {
  const f = check('proportionalJitter()', 'factor', factor, FACTOR);
  return Object.freeze({
    name: `proportional:${f}`,
    toString: () => `±${+(f * 100).toPrecision(3)} % jitter`,
    draw: (d: number, random: () => number) => d * (1 - f + 2 * f * draw(random)),
    span: (d: number) => [d * (1 - f), d * (1 + f)] as const,
  });
}
