import type { Backoff } from '../backoff/backoff.js';
import { SEGMENTS } from '../backoff/segment.js';

/**
 * The number of whole slots a wait of `delayMs` spans, for simulators of slotted channels.
 *
 * A slotted policy returns `k · slotMs`, computed in floating point, so dividing back gives `k`
 * give or take a rounding error in the last bits: such a quotient is rounded to `k` (a plain
 * `Math.ceil` would turn `3.0000000000000004` into 4 slots). Any other delay — from a policy
 * that is not slotted — waits until the next slot boundary at or after it (`Math.ceil`), since a
 * station may only start at a boundary and must wait at least the delay.
 *
 * @example
 * slotsOf(3 * 0.0512, 0.0512) // 3, although 0.1536 / 0.0512 is 2.9999999999999996
 */
export function slotsOf(delayMs: number, slotMs: number): number {
  const x = delayMs / slotMs;
  const k = Math.round(x);
  return Math.abs(x - k) <= 1e-9 * (k > 1 ? k : 1) ? k : Math.ceil(x);
}

/**
 * The slot length of a policy built by `slotted()` (every segment slotted with one slot
 * length), or `undefined` for any other policy.
 */
export function slotLengthOf(backoff: Backoff): number | undefined {
  let slot: number | undefined;
  for (const s of backoff[SEGMENTS]) {
    if (s.curve.type !== 'slotted') return undefined;
    if (slot !== undefined && s.curve.slotMs !== slot) return undefined;
    slot = s.curve.slotMs;
  }
  return slot;
}
