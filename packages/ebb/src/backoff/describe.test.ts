import { expect, it, describe as suite } from 'vitest';
import { constant } from './constant.js';
import { clampedUniformMean, describe, describeRow, MAX_ROWS } from './describe.js';
import { exponential } from './exponential.js';

suite('describe', () => {
  it('gives the un-randomized delay and the exact min, max and mean of each row', () => {
    const b = exponential({ initialDelayMs: 100, jitter: 'equal', maxAttempts: 4 });
    expect(describe(b, 10)).toEqual({
      rows: [
        { attempt: 1, delayMs: 100, minDelayMs: 50, maxDelayMs: 100, meanDelayMs: 75 },
        { attempt: 2, delayMs: 200, minDelayMs: 100, maxDelayMs: 200, meanDelayMs: 150 },
        { attempt: 3, delayMs: 400, minDelayMs: 200, maxDelayMs: 400, meanDelayMs: 300 },
      ],
      stopsAfterAttempt: 4,
    });
  });

  it('gives count rows when nothing stops the policy, and stopsAfterAttempt null', () => {
    const s = describe(exponential({ maxElapsedMs: 1_000 }), 7);
    expect(s.rows).toHaveLength(7);
    expect(s.stopsAfterAttempt).toBeNull();
    expect(describe(exponential(), 0).rows).toEqual([]);
  });

  it('accounts for the clamp in the mean of jitter that can exceed maxDelayMs', () => {
    // additive: U[100, 300] clamped at 200 → half the mass at 200, half uniform on [100, 200].
    const b = constant({ delayMs: 100, jitter: { kind: 'additive', maxMs: 200 }, maxDelayMs: 200 });
    expect(describe(b, 1).rows[0]).toEqual({
      attempt: 1,
      delayMs: 100,
      minDelayMs: 100,
      maxDelayMs: 200,
      meanDelayMs: 175,
    });
  });

  it('computes any row directly, up to Number.MAX_SAFE_INTEGER', () => {
    const b = exponential({ initialDelayMs: 1, maxDelayMs: 60_000, jitter: 'full' });
    expect(describeRow(b, Number.MAX_SAFE_INTEGER)).toEqual({
      attempt: Number.MAX_SAFE_INTEGER,
      delayMs: 60_000,
      minDelayMs: 0,
      maxDelayMs: 60_000,
      meanDelayMs: 30_000,
    });
  });

  it('rejects bad arguments', () => {
    expect(() => describe(exponential(), -1)).toThrow(/`count`/);
    // No hang on an endless policy: a million rows at most, describeRow for a far one.
    expect(describe(constant(), MAX_ROWS).rows).toHaveLength(MAX_ROWS);
    expect(() => describe(exponential(), MAX_ROWS + 1)).toThrow(
      new RangeError(
        'describe(): expected `count` to be at most 1000000, got 1000001. For one far row, use describeRow(backoff, attempt).',
      ),
    );
    expect(() => describe(exponential(), 2 ** 53 - 1)).toThrow(RangeError);
    expect(() => describe({} as never, 1)).toThrow(/Backoff value/);
    expect(() => describeRow(exponential(), 0)).toThrow(/`attempt`/);
  });

  it('clampedUniformMean covers the three cases', () => {
    expect(clampedUniformMean(0, 10, 20)).toBe(5);
    expect(clampedUniformMean(30, 40, 20)).toBe(20);
    expect(clampedUniformMean(0, 10, 5)).toBe(0.5 * 2.5 + 0.5 * 5);
    expect(clampedUniformMean(7, 7, 7)).toBe(7);
  });
});
