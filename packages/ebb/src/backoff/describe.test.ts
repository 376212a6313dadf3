import { describe, expect, it } from 'vitest';
import { chain } from './chain.js';
import { constant } from './constant.js';
import { decorrelatedJitter } from './decorrelated.js';
import { clampedUniformMean, describePolicy, describeRow, MAX_ROWS } from './describe.js';
import { exponential } from './exponential.js';
import { additiveJitter } from './jitter-additive.js';
import { equalJitter } from './jitter-equal.js';
import { fullJitter } from './jitter-full.js';
import { proportionalJitter } from './jitter-proportional.js';
import { slotted } from './slotted.js';
import { withOptions } from './with-options.js';

describe('describe', () => {
  it('gives the un-randomized delay and the exact min, max and mean of each row', () => {
    const b = exponential({ initialDelayMs: 100, jitter: equalJitter, maxAttempts: 4 });
    expect(describePolicy(b, 10)).toEqual({
      rows: [
        { attempt: 1, delayMs: 100, minDelayMs: 50, maxDelayMs: 100, meanDelayMs: 75 },
        { attempt: 2, delayMs: 200, minDelayMs: 100, maxDelayMs: 200, meanDelayMs: 150 },
        { attempt: 3, delayMs: 400, minDelayMs: 200, maxDelayMs: 400, meanDelayMs: 300 },
      ],
      stopsAfterAttempt: 4,
    });
  });

  it('gives count rows when nothing stops the policy, and stopsAfterAttempt null', () => {
    const s = describePolicy(exponential({ maxElapsedMs: 1_000 }), 7);
    expect(s.rows).toHaveLength(7);
    expect(s.stopsAfterAttempt).toBeNull();
    expect(describePolicy(exponential(), 0).rows).toEqual([]);
  });

  it('accounts for the clamp in the mean of jitter that can exceed maxDelayMs', () => {
    // additive: U[100, 300] clamped at 200 → half the mass at 200, half uniform on [100, 200].
    const b = constant({ delayMs: 100, jitter: additiveJitter(200), maxDelayMs: 200 });
    expect(describePolicy(b, 1).rows[0]).toEqual({
      attempt: 1,
      delayMs: 100,
      minDelayMs: 100,
      maxDelayMs: 200,
      meanDelayMs: 175,
    });
  });

  it('computes any row directly, up to Number.MAX_SAFE_INTEGER', () => {
    const b = exponential({ initialDelayMs: 1, maxDelayMs: 60_000, jitter: fullJitter });
    expect(describeRow(b, Number.MAX_SAFE_INTEGER)).toEqual({
      attempt: Number.MAX_SAFE_INTEGER,
      delayMs: 60_000,
      minDelayMs: 0,
      maxDelayMs: 60_000,
      meanDelayMs: 30_000,
    });
  });

  it('rejects bad arguments', () => {
    expect(() => describePolicy(exponential(), -1)).toThrow(/`count`/);
    // No hang on an endless policy: a million rows at most, describeRow for a far one.
    expect(describePolicy(constant({ maxAttempts: Infinity }), MAX_ROWS).rows).toHaveLength(MAX_ROWS);
    expect(() => describePolicy(exponential(), MAX_ROWS + 1)).toThrow(
      new RangeError(
        'describePolicy(): expected `count` to be at most 1000000, got 1000001. For one far row, use describeRow(backoff, attempt).',
      ),
    );
    expect(() => describePolicy(exponential(), 2 ** 53 - 1)).toThrow(RangeError);
    expect(() => describePolicy({} as never, 1)).toThrow(/Backoff value/);
    expect(() => describeRow(exponential(), 0)).toThrow(/`attempt`/);
  });

  it('names the function, the argument, the value and the fix in each message', () => {
    expect(() => describePolicy({} as never, 1)).toThrow(
      new TypeError(
        'describePolicy(): expected `backoff` to be a Backoff value, got an object. Build one with exponential() or take a preset.',
      ),
    );
    // A number where the policy goes is of the wrong kind: a TypeError, not a RangeError.
    expect(() => describePolicy(5 as never, 1)).toThrow(TypeError);
    // Another copy's policy (the CommonJS build beside the ESM one): its caller did build one.
    class Backoff {
      start() {
        return { next: () => -1 };
      }
    }
    const other =
      'It comes from another copy of ebb (its CommonJS build beside the ESM one, or another version): import both from one.';
    for (const call of [
      () => describePolicy(new Backoff() as never, 1),
      () => withOptions(new Backoff() as never, {}),
      () => chain(new Backoff() as never, exponential()),
    ]) {
      expect(call).toThrow(
        new RegExp(
          `expected \`(backoff|first)\` to be this copy of ebb's Backoff, not another copy's, got an object. ${other.replace(/[().]/g, '\\$&')}$`,
        ),
      );
    }
    const rows = 'It is the number of rows, such as 10.';
    expect(() => describePolicy(exponential(), -1)).toThrow(
      new RangeError(`describePolicy(): expected \`count\` to be a whole number >= 0, got -1. ${rows}`),
    );
    expect(() => describePolicy(exponential(), Infinity)).toThrow(
      new RangeError(`describePolicy(): expected \`count\` to be a whole number >= 0, got Infinity. ${rows}`),
    );
    expect(() => describePolicy(exponential(), '3' as never)).toThrow(
      new TypeError(`describePolicy(): expected \`count\` to be a whole number >= 0, got "3". ${rows}`),
    );
    const row = 'Row 1 is the wait after the first call failed.';
    expect(() => describeRow(exponential(), 0)).toThrow(
      new RangeError(`describeRow(): expected \`attempt\` to be a whole number >= 1, got 0. ${row}`),
    );
    expect(() => describeRow(exponential(), Infinity)).toThrow(
      new RangeError(`describeRow(): expected \`attempt\` to be a whole number >= 1, got Infinity. ${row}`),
    );
    expect(() => describeRow(exponential(), 2.5)).toThrow(
      new RangeError(`describeRow(): expected \`attempt\` to be a whole number >= 1, got 2.5. ${row}`),
    );
  });

  it('stops the rows where maxAttempts stops the policy, also for one attempt', () => {
    expect(describePolicy(exponential({ maxAttempts: 1 }), 5)).toEqual({ rows: [], stopsAfterAttempt: 1 });
    expect(describePolicy(exponential({ maxAttempts: 3 }), 1).rows.map((r) => r.attempt)).toEqual([1]);
    expect(describePolicy(exponential({ maxAttempts: 3 }), 2).rows.map((r) => r.attempt)).toEqual([1, 2]);
  });

  it('gives the clamped range and mean of proportional jitter, and of a curve capped by maxIntervalMs', () => {
    // U[50, 150] clamped at 120: 70 % uniform on [50, 120] (mean 85), 30 % at 120.
    const wide = constant({ delayMs: 100, jitter: proportionalJitter(0.5), maxDelayMs: 120 });
    expect(describeRow(wide, 1)).toEqual({
      attempt: 1,
      delayMs: 100,
      minDelayMs: 50,
      maxDelayMs: 120,
      meanDelayMs: 95.5,
    });
    // The cap also caps the curve: d = 40, U[20, 60] clamped at 40.
    // Caps below the first wait: applied by withOptions(), as the constructors refuse them.
    const low = withOptions(constant({ delayMs: 100, jitter: proportionalJitter(0.5) }), { maxDelayMs: 40 });
    expect(describeRow(low, 1)).toEqual({ attempt: 1, delayMs: 40, minDelayMs: 20, maxDelayMs: 40, meanDelayMs: 35 });
    const interval = withOptions(constant({ delayMs: 100, jitter: fullJitter }), { maxIntervalMs: 60 });
    expect(describeRow(interval, 1)).toEqual({
      attempt: 1,
      delayMs: 60,
      minDelayMs: 0,
      maxDelayMs: 60,
      meanDelayMs: 30,
    });
    // Additive jitter is not clamped without maxDelayMs.
    const added = constant({ delayMs: 100, jitter: additiveJitter(50) });
    expect(describeRow(added, 1)).toEqual({
      attempt: 1,
      delayMs: 100,
      minDelayMs: 100,
      maxDelayMs: 150,
      meanDelayMs: 125,
    });
  });

  it('gives decorrelated rows: envelope, initial delay as the minimum, means by E[d_k] = b + (m·E[d_k−1] − b)/2', () => {
    const free = exponential({ initialDelayMs: 10, multiplier: 3, jitter: decorrelatedJitter });
    const rows = describePolicy(free, 3).rows;
    expect(rows.map((r) => [r.attempt, r.delayMs, r.minDelayMs, r.maxDelayMs])).toEqual([
      [1, 30, 10, 30],
      [2, 90, 10, 90],
      [3, 270, 10, 270],
    ]);
    // Uncapped, the mean is linear: 10 + (30 − 10)/2 = 20, 10 + (60 − 10)/2 = 35, 10 + (105 − 10)/2 = 57.5.
    expect(rows[0]?.meanDelayMs).toBeCloseTo(20, 9);
    expect(rows[1]?.meanDelayMs).toBeCloseTo(35, 9);
    expect(rows[2]?.meanDelayMs).toBeCloseTo(57.5, 9);
    // The same policy described twice (the means are cached per segment) gives the same rows.
    expect(describePolicy(free, 3)).toEqual(describePolicy(free, 3));
    const capped = exponential({ initialDelayMs: 10, multiplier: 3, maxDelayMs: 50, jitter: decorrelatedJitter });
    expect(describePolicy(capped, 3).rows.map((r) => [r.delayMs, r.minDelayMs, r.maxDelayMs])).toEqual([
      [30, 10, 30],
      [50, 10, 50],
      [50, 10, 50],
    ]);
    // A cap below the initial delay: every wait is the cap.
    const under = withOptions(exponential({ initialDelayMs: 100, jitter: decorrelatedJitter }), { maxDelayMs: 50 });
    expect(describeRow(under, 2)).toEqual({ attempt: 2, delayMs: 50, minDelayMs: 50, maxDelayMs: 50, meanDelayMs: 50 });
  });

  it('truncates a slotted window at the ceiling', () => {
    const b = slotted({ slotMs: 2, cwMin: 1, ceiling: 2 });
    expect(describePolicy(b, 4).rows.map((r) => [r.maxDelayMs, r.meanDelayMs])).toEqual([
      [6, 3],
      [14, 7],
      [14, 7],
      [14, 7],
    ]);
  });

  it('clampedUniformMean covers the three cases', () => {
    expect(clampedUniformMean(0, 10, 20)).toBe(5);
    expect(clampedUniformMean(30, 40, 20)).toBe(20);
    expect(clampedUniformMean(0, 10, 5)).toBe(0.5 * 2.5 + 0.5 * 5);
    expect(clampedUniformMean(7, 7, 7)).toBe(7);
  });
});
