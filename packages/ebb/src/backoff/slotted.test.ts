import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describePolicy } from './describe.js';
import { fullJitter } from './jitter-full.js';
import { SEGMENTS } from './segment.js';
import { slotted } from './slotted.js';
import { always, NEXT_BELOW_ONE } from './test-helpers.js';
import { withOptions } from './with-options.js';

describe('slotted', () => {
  it('doubles the window from cwMin+1 up to cwMax+1 and waits (W−1)·slot at most', () => {
    const b = slotted({ slotMs: 1, cwMin: 15, cwMax: 1023, maxAttempts: 9 });
    expect(describePolicy(b, 8).rows.map((r) => r.maxDelayMs)).toEqual([31, 63, 127, 255, 511, 1023, 1023, 1023]);
  });

  it('defaults to the 802.3 window: cwMin 0, cwMax 1023', () => {
    const rows = describePolicy(slotted({ slotMs: 1, maxAttempts: Infinity }), 12).rows;
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
    expect(describePolicy(slotted({ slotMs: 1, ceiling: 2 }), 4).rows.map((r) => r.maxDelayMs)).toEqual([1, 3, 3, 3]);
    expect(describePolicy(slotted({ slotMs: 1, maxDelayMs: 5 }), 4).rows.map((r) => r.maxDelayMs)).toEqual([
      1, 3, 5, 5,
    ]);
  });

  it('never draws above maxDelayMs, float residue included, and describePolicy() reports that exact max', () => {
    // 17 slots of 0.1 ms is 1.7000000000000002 in doubles: one ulp above the 1.7 ms cap.
    const b = slotted({ slotMs: 0.1, cwMin: 1023, maxDelayMs: 1.7 });
    const top = b.start(always(NEXT_BELOW_ONE));
    expect([top.next(), top.next()]).toEqual([1.7, 1.7]);
    expect(describePolicy(b, 1).rows[0]).toEqual({
      attempt: 1,
      delayMs: 1.7,
      minDelayMs: 0,
      maxDelayMs: 1.7,
      meanDelayMs: 0.85,
    });
    fc.assert(
      fc.property(
        fc.double({ min: 1e-6, max: 1e3, noNaN: true }),
        fc.integer({ min: 0, max: 1023 }),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.constantFrom('maxDelayMs', 'maxIntervalMs'),
        fc.integer({ min: 1, max: 12 }),
        (slotMs, cwMin, cap, option, row) => {
          const policy = slotted({ slotMs, cwMin, cwMax: 1023, [option]: cap, maxAttempts: Infinity });
          const run = policy.start(always(NEXT_BELOW_ONE));
          let d = 0;
          for (let i = 0; i < row; i++) d = run.next();
          const described = describePolicy(policy, row).rows[row - 1];
          expect(d).toBeLessThanOrEqual(cap);
          expect(described?.maxDelayMs).toBe(d);
          expect(described?.delayMs).toBe(d);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('takes no jitter: the slot draw is its jitter', () => {
    expect(() => slotted({ slotMs: 1, jitter: fullJitter } as object as { slotMs: number })).toThrow(
      /unknown option `jitter`/,
    );
    expect(() => withOptions(slotted({ slotMs: 1 }), { jitter: fullJitter })).toThrow(
      /slotted policy draws its own random slot count/,
    );
    // Options that leave the jitter alone keep the slot draw.
    expect(describePolicy(withOptions(slotted({ slotMs: 1 }), { maxDelayMs: 2 }), 2).rows[1]?.maxDelayMs).toBe(2);
  });

  it('rejects bad options', () => {
    expect(() => slotted({ slotMs: 0 })).toThrow(/`slotMs` to be a finite number > 0/);
    expect(() => slotted({} as { slotMs: number })).toThrow(/`slotMs`/);
    expect(() => slotted({ slotMs: 1, cwMin: 1.5 })).toThrow(/`cwMin`/);
    expect(() => slotted({ slotMs: 1, cwMin: 15, cwMax: 7 })).toThrow(/`cwMax`.*>= 15/);
  });

  it('names the option, the value and the fix in each rejection, and admits no infinite window', () => {
    const windows = 'Windows are counted in slots minus one, as the standards write CWmin and CWmax.';
    expect(() => slotted({ slotMs: 0 })).toThrow(
      new RangeError(
        'slotted(): expected `slotMs` to be a finite number > 0, got 0. The 802.3 slot at 10 Mb/s is 0.0512 ms.',
      ),
    );
    expect(() => slotted({ slotMs: Infinity })).toThrow(
      new RangeError(
        'slotted(): expected `slotMs` to be a finite number >= 0, got Infinity. Durations are milliseconds, such as 500.',
      ),
    );
    expect(() => slotted({ slotMs: 1, cwMin: Infinity })).toThrow(
      new RangeError(`slotted(): expected \`cwMin\` to be a whole number >= 0, got Infinity. ${windows}`),
    );
    expect(() => slotted({ slotMs: 1, cwMin: -1 })).toThrow(
      new RangeError(`slotted(): expected \`cwMin\` to be a whole number >= 0, got -1. ${windows}`),
    );
    expect(() => slotted({ slotMs: 1, cwMax: Infinity })).toThrow(
      new RangeError(
        `slotted(): expected \`cwMax\` to be a whole number >= 0, got Infinity. ${windows} It must be >= cwMin (0).`,
      ),
    );
    expect(() => slotted({ slotMs: 1, cwMin: 15, cwMax: 7 })).toThrow(
      new RangeError(
        `slotted(): expected \`cwMax\` to be a whole number >= 15, got 7. ${windows} It must be >= cwMin (15).`,
      ),
    );
    // cwMax equal to cwMin is a fixed window: no doubling.
    expect(describePolicy(slotted({ slotMs: 1, cwMin: 3, cwMax: 3 }), 3).rows.map((r) => r.maxDelayMs)).toEqual([
      3, 3, 3,
    ]);
  });

  it('defaults cwMax to cwMin when cwMin is above 1023', () => {
    const b = slotted({ slotMs: 1, cwMin: 2000 });
    expect(describePolicy(b, 2).rows.map((r) => r.maxDelayMs)).toEqual([2000, 2000]);
    expect(b[SEGMENTS][0]?.curve).toEqual({ type: 'slotted', slotMs: 1, cwMin: 2000, cwMax: 2000 });
  });
});
