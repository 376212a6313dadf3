import { expect, it, describe as suite } from 'vitest';
import { describe } from './describe.js';
import { exponential } from './exponential.js';
import { jitterLabel } from './jitter.js';
import { NEXT_BELOW_ONE, run } from './test-helpers.js';

const base = { initialDelayMs: 100, multiplier: 2 } as const;

suite('jitter', () => {
  it('none: the curve itself', () => {
    expect(run(exponential({ ...base, jitter: 'none' }), 3, 0.3)).toEqual([100, 200, 400]);
  });

  it('full: r·d, from 0 up to (not including) d', () => {
    expect(run(exponential({ ...base, jitter: 'full' }), 2, 0)).toEqual([0, 0]);
    expect(run(exponential({ ...base, jitter: 'full' }), 2, 0.5)).toEqual([50, 100]);
    expect(run(exponential({ ...base, jitter: 'full' }), 1, NEXT_BELOW_ONE)[0]).toBeLessThan(100);
  });

  it('equal: d/2 + r·d/2', () => {
    expect(run(exponential({ ...base, jitter: 'equal' }), 2, 0)).toEqual([50, 100]);
    expect(run(exponential({ ...base, jitter: 'equal' }), 2, 0.5)).toEqual([75, 150]);
  });

  it('proportional: d·(1 − f + 2f·r), the factor matters', () => {
    const half = exponential({ ...base, jitter: { kind: 'proportional', factor: 0.5 } });
    const fifth = exponential({ ...base, jitter: { kind: 'proportional', factor: 0.2 } });
    expect(run(half, 2, 0)).toEqual([50, 100]);
    expect(run(fifth, 2, 0)).toEqual([80, 160]);
    expect(run(half, 1, NEXT_BELOW_ONE)[0]).toBeCloseTo(150, 9);
  });

  it('additive: d + r·maxMs, the amount matters', () => {
    expect(run(exponential({ ...base, jitter: { kind: 'additive', maxMs: 1_000 } }), 2, 0.5)).toEqual([600, 700]);
    expect(run(exponential({ ...base, jitter: { kind: 'additive', maxMs: 10 } }), 2, 0.5)).toEqual([105, 205]);
  });

  it('decorrelated: min(cap, U[initial, previous·multiplier]), starting from initial', () => {
    const b = exponential({ initialDelayMs: 5, multiplier: 3, maxDelayMs: 100, jitter: 'decorrelated' });
    // r = 1-ε: each draw is (almost) previous × 3, until the cap.
    const top = run(b, 5, NEXT_BELOW_ONE);
    expect(top.map((d) => Math.round(d))).toEqual([15, 45, 100, 100, 100]);
    // r = 0: always the initial delay.
    expect(run(b, 3, 0)).toEqual([5, 5, 5]);
    // r = 0.5 from 5: U[5, 15] → 10; then U[5, 30] → 17.5; then U[5, 52.5] → 28.75.
    expect(run(b, 3, 0.5)).toEqual([10, 17.5, 28.75]);
    expect(describe(b, 2).rows.map((r) => [r.minDelayMs, r.maxDelayMs])).toEqual([
      [5, 15],
      [5, 45],
    ]);
  });

  it('decorrelated jitter refuses options it could not honour', () => {
    expect(() => exponential({ jitter: 'decorrelated', ceiling: 3 })).toThrow(/`ceiling`.*cap it with `maxDelayMs`/);
    expect(() => exponential({ jitter: 'decorrelated', maxIntervalMs: 3 })).toThrow(/`maxIntervalMs`/);
    expect(() => exponential({ jitter: 'decorrelated', initialDelayMs: 0 })).toThrow(/`initialDelayMs`.*> 0/);
  });

  it('rejects malformed jitter, naming the field', () => {
    expect(() => exponential({ jitter: { kind: 'proportional', factor: 1.5 } })).toThrow(
      /`jitter.factor`.*from 0 to 1, got 1.5/,
    );
    expect(() => exponential({ jitter: { kind: 'proportional' } as never })).toThrow(/`jitter.factor`.*got undefined/);
    expect(() => exponential({ jitter: { kind: 'additive', maxMs: -1 } })).toThrow(/`jitter.maxMs`/);
    expect(() => exponential({ jitter: { kind: 'additive', maxMs: 1, factor: 2 } as never })).toThrow(
      /unknown option `factor`/,
    );
    expect(() => exponential({ jitter: { kind: 'gaussian' } as never })).toThrow(/`jitter`/);
  });

  it('labels jitter the way the CLI writes it', () => {
    expect(jitterLabel('full')).toBe('full');
    expect(jitterLabel({ kind: 'proportional', factor: 0.5 })).toBe('proportional:0.5');
    expect(jitterLabel({ kind: 'additive', maxMs: 1000 })).toBe('additive:1000ms');
  });
});
