import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Backoff, MAX_DELAY_MS } from './backoff.js';
import { constant } from './constant.js';
import { decorrelatedJitter } from './decorrelated.js';
import { describePolicy, describeRow } from './describe.js';
import { exponential } from './exponential.js';
import { googleExponentialBackoff } from './google.js';
import { additiveJitter } from './jitter-additive.js';
import { capped, locate, nominal, SEGMENTS } from './segment.js';
import { slotted } from './slotted.js';
import { delays, NEXT_BELOW_ONE, run } from './test-helpers.js';
import { withOptions } from './with-options.js';

// Exact specifications of backoff.ts written against the survivors of a mutation run
// (docs/dev/mutation-backoff.md): each asserts the precise value or message a mutant changed.

describe('withOptions(): named in every message; nothing endless by accident', () => {
  it('names itself when the jitter value is refused', () => {
    expect(() => withOptions(exponential(), { jitter: 'bogus' as never })).toThrow(
      new TypeError(
        `withOptions(): expected \`jitter\` to be a jitter value, got "bogus". Import it from 'ebb': jitter: fullJitter.`,
      ),
    );
  });

  it('names itself when the segment cannot take a ceiling', () => {
    expect(() => withOptions(exponential({ jitter: decorrelatedJitter }), { ceiling: 3 })).toThrow(
      new TypeError(
        'withOptions(): decorrelated jitter has no un-randomized curve for `ceiling` to act on; cap it with `maxDelayMs`.',
      ),
    );
  });

  it('a policy without attempts or budget is one that was told maxAttempts: Infinity (or budget Infinity, for Google)', () => {
    expect(withOptions(exponential(), { maxAttempts: Infinity }).maxAttempts).toBe(Infinity);
    expect(withOptions(withOptions(exponential(), { maxAttempts: Infinity }), { maxAttempts: 5 }).maxAttempts).toBe(5);
    // Google's budget is its run's rule: lifting it is Google's own "no budget" (Infinity).
    const unlimited = withOptions(googleExponentialBackoff({ maxElapsedTimeMs: Infinity }), { maxDelayMs: 1_000 });
    expect([unlimited.maxAttempts, unlimited.maxElapsedMs]).toEqual([Infinity, Infinity]);
    // A Google policy made ordinary keeps its budget as ebb's deadline.
    expect(withOptions(googleExponentialBackoff(), { maxDelayMs: 1_000 }).maxElapsedMs).toBe(900_000);
  });
});

describe('slotted windows', () => {
  it('stop at cwMax + 1 slots when cwMax + 1 is not a power of two', () => {
    // W = min((cwMin + 1)·2^k, cwMax + 1): 2, min(4, 3) = 3, 3 — the longest waits are W − 1 slots.
    const b = slotted({ slotMs: 1, cwMin: 0, cwMax: 2 });
    expect(delays(b, 3)).toEqual([1, 2, 2]);
    expect(run(b, 3, NEXT_BELOW_ONE)).toEqual([1, 2, 2]);
    // cwMin 2: W = min(6, 5) = 5 from row 1.
    expect(run(slotted({ slotMs: 1, cwMin: 2, cwMax: 4 }), 2, NEXT_BELOW_ONE)).toEqual([4, 4]);
  });

  it('narrow to the cap in the draw itself, not only in the clamp after it', () => {
    // maxDelayMs 5 with 1 ms slots: at most floor(5 / 1) + 1 = 6 slots. Windows 2, 4, 6, 6, and
    // r = 0.5 draws floor(0.5 · W) slots: 1, 2, 3, 3 (an unnarrowed window of 8 would draw 4).
    expect(run(slotted({ slotMs: 1, maxDelayMs: 5 }), 4, 0.5)).toEqual([1, 2, 3, 3]);
    expect(run(slotted({ slotMs: 1, maxIntervalMs: 5 }), 4, 0.5)).toEqual([1, 2, 3, 3]);
  });

  it('the longest draw is exactly W − 1 slots for every window up to 2^53 (floor(r·W) < W)', () => {
    // cwMin = cwMax = c: the window is c + 1 from row 1. The draw at the largest Random value
    // must give c slots, never c + 1: (1 − 2^−53)·W rounds below W for every W >= 1.
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER - 1 }), (c) => {
        const b = slotted({ slotMs: 1, cwMin: c, cwMax: c });
        expect(run(b, 1, NEXT_BELOW_ONE)).toEqual([c]);
        expect(run(b, 1, 0)).toEqual([0]);
        expect(describeRow(b, 1).maxDelayMs).toBe(c);
      }),
      { numRuns: 200 },
    );
    for (const c of [0, 1, 2 ** 31, 2 ** 52 - 1, 2 ** 52, 2 ** 53 - 2]) {
      expect(run(slotted({ slotMs: 1, cwMin: c, cwMax: c }), 1, NEXT_BELOW_ONE)).toEqual([c]);
    }
    // The cap still governs past it: MAX_DELAY_MS slots of 1 ms.
    const top = slotted({ slotMs: 1, cwMin: MAX_DELAY_MS, cwMax: MAX_DELAY_MS });
    expect(run(top, 1, NEXT_BELOW_ONE)).toEqual([MAX_DELAY_MS]);
  });

  it("nominal() and capped() of a slotted segment are describePolicy()'s delayMs: (W − 1) slots", () => {
    // slotMs 0.5, cwMin 1, cap 7: windows min(4, 15) = 4, 8, min(16, 15) = 15, 15 → 1.5, 3.5, 7, 7.
    const b = slotted({ slotMs: 0.5, cwMin: 1, cwMax: 20, maxDelayMs: 7 });
    const s = b[SEGMENTS][0] as Backoff[typeof SEGMENTS][number];
    const rows = [1, 2, 3, 4];
    expect(rows.map((k) => nominal(s, k))).toEqual([1.5, 3.5, 7, 7]);
    expect(rows.map((k) => capped(s, k))).toEqual([1.5, 3.5, 7, 7]);
    expect(delays(b, 4)).toEqual([1.5, 3.5, 7, 7]);
  });
});

describe('locate', () => {
  it('finds the segment and the row within it, and names a row past a malformed policy', () => {
    const [a, b] = [constant({ delayMs: 1 })[SEGMENTS][0], constant({ delayMs: 2 })[SEGMENTS][0]];
    const chained = new Backoff([{ ...a, rows: 2 } as never, b as never], Infinity, Infinity);
    expect(locate(chained, 2)).toEqual([chained[SEGMENTS][0], 2]);
    expect(locate(chained, 3)).toEqual([chained[SEGMENTS][1], 1]);
    // The constructor trusts its input: a last segment with finite rows is a bug, reported as one.
    const short = new Backoff([{ ...a, rows: 2 } as never], Infinity, Infinity);
    expect(() => locate(short, 3)).toThrow(new RangeError('row 3 is past the end of the policy'));
  });
});

describe('the final clamp at MAX_DELAY_MS', () => {
  it('additive jitter on a saturated row waits MAX_DELAY_MS, never more', () => {
    const b = constant({ delayMs: MAX_DELAY_MS, jitter: additiveJitter(1_000) });
    expect(run(b, 2, 0.5)).toEqual([MAX_DELAY_MS, MAX_DELAY_MS]);
    expect(describePolicy(b, 1).rows).toEqual([
      {
        attempt: 1,
        delayMs: MAX_DELAY_MS,
        minDelayMs: MAX_DELAY_MS,
        maxDelayMs: MAX_DELAY_MS,
        meanDelayMs: MAX_DELAY_MS,
      },
    ]);
  });
});

describe('decorrelated jitter where previous · multiplier overflows', () => {
  it('a draw of 0 is initialDelayMs, the minimum describePolicy() reports, not the cap (bug: 0 × Infinity)', () => {
    // 1000 · 1e306 overflows on row 1: high = Infinity. Before the fix, 1000 + 0 · Infinity was
    // NaN, which the final clamp turned into MAX_DELAY_MS.
    const b = exponential({
      initialDelayMs: 1_000,
      multiplier: 1e306,
      jitter: decorrelatedJitter,
      maxDelayMs: Infinity,
    });
    expect(run(b, 2, 0)).toEqual([1_000, 1_000]);
    expect(describePolicy(b, 2).rows.map((r) => r.minDelayMs)).toEqual([1_000, 1_000]);
    // Any draw above 0 lands on the cap: U[1000, Infinity) clamped.
    expect(run(b, 2, Number.MIN_VALUE)).toEqual([MAX_DELAY_MS, MAX_DELAY_MS]);
    expect(run(withOptions(b, { maxDelayMs: 5_000 }), 1, 0.5)).toEqual([5_000]);
    // Row 2 after a clamped row 1: previous · m = MAX_DELAY_MS · 1e306 overflows too.
    const draws = [0.5, 0];
    const mixed = b.start(() => draws.shift() as number);
    expect([mixed.next(), mixed.next()]).toEqual([MAX_DELAY_MS, 1_000]);
  });
});
