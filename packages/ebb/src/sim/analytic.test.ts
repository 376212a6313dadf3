import { describe, expect, it } from 'vitest';
import { describePolicy as schedule } from '../backoff/describe.js';
import { exponential } from '../backoff/exponential.js';
import { presets } from '../backoff/presets.js';
import { slotted } from '../backoff/slotted.js';
import { expectedBackoff, meanBackoffSlots, scheduleBounds } from './analytic.js';

describe('expectedBackoff', () => {
  it("is the Wikipedia article's E(c) = (2^c − 1)/2: 3.5 slots after the third collision", () => {
    expect([0, 1, 2, 3, 4, 10].map((c) => expectedBackoff(c))).toEqual([0, 0.5, 1.5, 3.5, 7.5, 511.5]);
  });

  it('stops growing at the ceiling', () => {
    expect(expectedBackoff(12, 10)).toBe(511.5);
    expect(expectedBackoff(3, 2)).toBe(1.5);
  });

  it('rejects what is not a collision count', () => {
    expect(() => expectedBackoff(-1)).toThrow(RangeError);
    expect(() => expectedBackoff(1.5)).toThrow(/`collisions` to be a whole number/);
    expect(() => expectedBackoff(2, 0)).toThrow(/`ceiling`/);
  });
});

describe('meanBackoffSlots', () => {
  it('is E(c) for 802.3 up to its window limit of 1024 slots, then stays', () => {
    for (let c = 1; c <= 15; c++) expect(meanBackoffSlots(presets.ethernet, c)).toBeCloseTo(expectedBackoff(c, 10), 9);
  });

  it('follows the window from cwMin for 802.11: (W − 1)/2 with W = 16 · 2^c', () => {
    expect([1, 2, 6, 7].map((c) => meanBackoffSlots(presets.wifi, c))).toEqual([15.5, 31.5, 511.5, 511.5]);
    expect(meanBackoffSlots(slotted({ slotMs: 2, cwMin: 3, cwMax: 63 }), 1)).toBe(3.5);
  });

  it('refuses a policy that is not slotted', () => {
    expect(() => meanBackoffSlots(exponential({ initialDelayMs: 1 }), 1)).toThrow(/must be a slotted policy/);
    expect(() => meanBackoffSlots({} as never, 1)).toThrow(/`backoff` to be a Backoff value/);
  });
});

describe('scheduleBounds', () => {
  it('accumulates the exact min, mean and max of describePolicy()', () => {
    const rows = scheduleBounds(presets.awsStandard, 10);
    expect(rows).toHaveLength(2);
    expect(rows.map((r) => [r.elapsedMinMs, r.elapsedMeanMs, r.elapsedMaxMs])).toEqual([
      [0, 25, 50],
      [0, 75, 150],
    ]);
    const google = scheduleBounds(presets.googleHttpClient, 3);
    const exact = schedule(presets.googleHttpClient, 3).rows;
    expect(google.map((r) => r.meanDelayMs)).toEqual(exact.map((r) => r.meanDelayMs));
    // Google draws whole ms: (int) (min + r·(max − min + 1)), so 562 to 1688 at row 3.
    expect(google[2]?.elapsedMinMs).toBe(250 + 375 + 562);
    expect(google[2]?.elapsedMaxMs).toBe(751 + 1126 + 1688);
  });
});
