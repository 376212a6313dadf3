import { expect, it, describe as suite } from 'vitest';
import { describe } from './describe.js';
import { exponential } from './exponential.js';
import { always, delays, NEXT_BELOW_ONE, run } from './test-helpers.js';

suite('exponential', () => {
  it('defaults to 100 ms ×2, no jitter, no limits', () => {
    const b = exponential();
    expect(run(b, 6)).toEqual([100, 200, 400, 800, 1600, 3200]);
    expect(b.maxAttempts).toBe(Infinity);
    expect(b.maxElapsedMs).toBe(Infinity);
  });

  it('initialDelayMs and multiplier shape the curve', () => {
    expect(delays(exponential({ initialDelayMs: 500, multiplier: 1.5 }), 4)).toEqual([500, 750, 1125, 1687.5]);
    expect(delays(exponential({ initialDelayMs: 3, multiplier: 3 }), 4)).toEqual([3, 9, 27, 81]);
  });

  it('ceiling truncates the growth: rows after it repeat it', () => {
    expect(delays(exponential({ initialDelayMs: 1, ceiling: 3 }), 6)).toEqual([1, 2, 4, 4, 4, 4]);
  });

  it('maxIntervalMs caps the curve but lets proportional jitter exceed it', () => {
    const b = exponential({ initialDelayMs: 100, maxIntervalMs: 250, jitter: { kind: 'proportional', factor: 0.5 } });
    expect(delays(b, 4)).toEqual([100, 200, 250, 250]);
    expect(run(b, 4, NEXT_BELOW_ONE)[3]).toBeCloseTo(375, 9);
  });

  it('maxDelayMs caps the curve and clamps the jittered delay', () => {
    const b = exponential({ initialDelayMs: 100, maxDelayMs: 250, jitter: { kind: 'proportional', factor: 0.5 } });
    expect(delays(b, 4)).toEqual([100, 200, 250, 250]);
    expect(run(b, 4, NEXT_BELOW_ONE)[3]).toBe(250);
    expect(run(b, 4, 0)[3]).toBe(125);
  });

  it('jitter randomizes each delay', () => {
    const b = exponential({ initialDelayMs: 100, jitter: 'full' });
    expect(run(b, 3, 0.25)).toEqual([25, 50, 100]);
  });

  it('maxAttempts counts calls: 3 attempts give 2 waits, then -1', () => {
    expect(run(exponential({ maxAttempts: 3 }), 4)).toEqual([100, 200, -1, -1]);
    expect(run(exponential({ maxAttempts: 1 }), 1)).toEqual([-1]);
    expect(describe(exponential({ maxAttempts: 3 }), 10).stopsAfterAttempt).toBe(3);
  });

  it('maxElapsedMs is carried on the value for the executor', () => {
    expect(exponential({ maxElapsedMs: 5_000 }).maxElapsedMs).toBe(5_000);
  });

  it('never overflows: huge rows saturate instead of reaching Infinity or NaN', () => {
    const zero = exponential({ initialDelayMs: 0, multiplier: 10 });
    expect(describe(zero, 2000).rows.every((r) => r.delayMs === 0)).toBe(true);
    const big = exponential({ initialDelayMs: 1e300, multiplier: 1e10, jitter: 'full' });
    const it2 = big.start(always(NEXT_BELOW_ONE));
    for (let i = 0; i < 2000; i++) expect(Number.isFinite(it2.next())).toBe(true);
  });

  it('rejects bad options at construction, naming them', () => {
    expect(() => exponential({ multiplier: 0.5 })).toThrow(/`multiplier` to be a finite number >= 1, got 0.5/);
    expect(() => exponential({ multiplier: Infinity })).toThrow(RangeError);
    expect(() => exponential({ initialDelayMs: -1 })).toThrow(/`initialDelayMs`.*got -1/);
    expect(() => exponential({ initialDelayMs: Number.NaN })).toThrow(RangeError);
    expect(() => exponential({ maxAttempts: 2.5 })).toThrow(/`maxAttempts`.*got 2.5/);
    expect(() => exponential({ maxAttempts: 0 })).toThrow(RangeError);
    expect(() => exponential({ ceiling: 0 })).toThrow(/`ceiling`/);
    expect(() => exponential({ maxDelayMs: -5 })).toThrow(/`maxDelayMs`/);
    expect(() => exponential({ maxElapsedMs: Number.NaN })).toThrow(/`maxElapsedMs`/);
    expect(() => exponential({ jitter: 'fulll' as 'full' })).toThrow(/`jitter`.*"fulll"/);
    expect(() => exponential({ initialDelay: 5 } as object)).toThrow(/unknown option `initialDelay`/);
    expect(() => exponential(7 as unknown as object)).toThrow(TypeError);
  });
});
