import { expect, it, describe as suite } from 'vitest';
import { describe } from './describe.js';
import { slotted } from './slotted.js';
import { always, NEXT_BELOW_ONE } from './test-helpers.js';

suite('slotted', () => {
  it('doubles the window from cwMin+1 up to cwMax+1 and waits (W−1)·slot at most', () => {
    const b = slotted({ slotMs: 1, cwMin: 15, cwMax: 1023 });
    expect(describe(b, 8).rows.map((r) => r.maxDelayMs)).toEqual([31, 63, 127, 255, 511, 1023, 1023, 1023]);
  });

  it('defaults to the 802.3 window: cwMin 0, cwMax 1023', () => {
    const rows = describe(slotted({ slotMs: 1 }), 12).rows;
    expect(rows.map((r) => r.maxDelayMs)).toEqual([1, 3, 7, 15, 31, 63, 127, 255, 511, 1023, 1023, 1023]);
  });

  it('draws a whole number of slots, 0 … W−1', () => {
    const b = slotted({ slotMs: 2, cwMin: 0, cwMax: 7 });
    const low = b.start(always(0));
    const high = b.start(always(NEXT_BELOW_ONE));
    expect([low.next(), low.next(), low.next()]).toEqual([0, 0, 0]);
    expect([high.next(), high.next(), high.next(), high.next()]).toEqual([2, 6, 14, 14]);
    const mid = b.start(always(0.5));
    expect([mid.next(), mid.next(), mid.next()]).toEqual([2, 4, 8]);
  });

  it('ceiling and maxDelayMs narrow the window', () => {
    expect(describe(slotted({ slotMs: 1, ceiling: 2 }), 4).rows.map((r) => r.maxDelayMs)).toEqual([1, 3, 3, 3]);
    expect(describe(slotted({ slotMs: 1, maxDelayMs: 5 }), 4).rows.map((r) => r.maxDelayMs)).toEqual([1, 3, 5, 5]);
  });

  it('takes no jitter: the slot draw is its jitter', () => {
    expect(() => slotted({ slotMs: 1, jitter: 'full' } as object as { slotMs: number })).toThrow(
      /unknown option `jitter`/,
    );
    expect(() => slotted({ slotMs: 1 }).withJitter('full')).toThrow(/slotted policy draws its own random slot count/);
  });

  it('rejects bad options', () => {
    expect(() => slotted({ slotMs: 0 })).toThrow(/`slotMs` to be a finite number > 0/);
    expect(() => slotted({} as { slotMs: number })).toThrow(/`slotMs`/);
    expect(() => slotted({ slotMs: 1, cwMin: 1.5 })).toThrow(/`cwMin`/);
    expect(() => slotted({ slotMs: 1, cwMin: 15, cwMax: 7 })).toThrow(/`cwMax`.*>= 15/);
  });
});
