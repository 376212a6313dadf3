/**
 * Where a segment's curve and jitter meet: which kind draws its delays, which combinations it
 * refuses, and the draw of one row under the final clamp.
 */
import type { Random } from '../core/random.js';
import { type JitterKind, jitterKind } from './jitter.js';
import { capped, clampOf, type Segment } from './segment.js';

/** The jitter kind that draws a segment's delays: the curve's own (slotted) or the jitter's. @internal */
export function kindOf(s: Segment): JitterKind {
  return s.curve.own ?? jitterKind(s.jitter);
}

/** Checks the combinations a segment cannot honour, so that no option is silently ignored. @internal */
export function checkSegment(where: string, s: Segment): Segment {
  s.curve.check?.(where, s);
  jitterKind(s.jitter).check?.(where, s);
  return s;
}

/**
 * Draws the wait of row `k` of segment `s`. `previous` is the last delay of this segment (for
 * decorrelated jitter; ignored by the others and on row 1). Finite and non-negative for every
 * `k` up to `Number.MAX_SAFE_INTEGER` and every `random` in [0, 1). @internal
 */
export function drawDelay(s: Segment, k: number, random: Random, previous: number, kind = kindOf(s)): number {
  const delay = kind.draw(capped(s, k), random, s, k, previous);
  const clamp = clampOf(s);
  return delay < clamp ? delay : clamp;
}
