import { describe, expect, it } from 'vitest';
import { exponential } from '../backoff/exponential.js';
import { presets } from '../backoff/presets.js';
import { slotted } from '../backoff/slotted.js';
import { slotLengthOf, slotsOf } from './slots.js';

describe('slotsOf', () => {
  it('turns k · slotMs back into k, for every k a 20-doubling window can draw', () => {
    for (const slotMs of [0.0512, 0.009, 0.05, 0.02, 1 / 3]) {
      for (let k = 0; k < 2 ** 20; k += 997) expect(slotsOf(k * slotMs, slotMs)).toBe(k);
    }
    // 0.1536 / 0.0512 is 2.9999999999999996 in floating point.
    expect(0.1536 / 0.0512).not.toBe(3);
    expect(slotsOf(3 * 0.0512, 0.0512)).toBe(3);
  });

  it('waits until the next slot boundary for a delay that is not a whole number of slots', () => {
    expect(slotsOf(0.06, 0.0512)).toBe(2);
    expect(slotsOf(2.5, 1)).toBe(3);
    expect(slotsOf(0, 1)).toBe(0);
  });
});

describe('slotLengthOf', () => {
  it('reads the slot of slotted policies and refuses others', () => {
    expect(slotLengthOf(presets.ethernet)).toBe(0.0512);
    expect(slotLengthOf(presets.wifi)).toBe(0.009);
    expect(slotLengthOf(slotted({ slotMs: 2 }))).toBe(2);
    expect(slotLengthOf(exponential({ initialDelayMs: 1 }))).toBeUndefined();
  });
});
