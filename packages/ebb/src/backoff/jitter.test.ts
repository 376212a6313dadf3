import { describe, expect, it } from 'vitest';
import { describePolicy, SPANS } from './describe.js';
import { exponential } from './exponential.js';
import { FORMS, jitterKind, jitterLabel, jitterName, KINDS, type Span } from './jitter.js';
import { SEGMENTS, type Segment } from './segment.js';
import { NEXT_BELOW_ONE, run } from './test-helpers.js';

const base = { initialDelayMs: 100, multiplier: 2 } as const;

describe('jitter', () => {
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
    expect(describePolicy(b, 2).rows.map((r) => [r.minDelayMs, r.maxDelayMs])).toEqual([
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

  it('names the option, the value and the fix in each message', () => {
    const kinds =
      "'none', 'full', 'equal', 'decorrelated', { kind: 'proportional', factor } or { kind: 'additive', maxMs }";
    const fix = "Full jitter ('full') suits most clients.";
    expect(() => exponential({ jitter: null as never })).toThrow(
      new TypeError(`exponential(): expected \`jitter\` to be ${kinds}, got null. ${fix}`),
    );
    expect(() => exponential({ jitter: { kind: 'gaussian' } as never })).toThrow(
      new TypeError(`exponential(): expected \`jitter\` to be ${kinds}, got an object. ${fix}`),
    );
    expect(() => exponential({ jitter: 5 as never })).toThrow(
      new RangeError(`exponential(): expected \`jitter\` to be ${kinds}, got 5. ${fix}`),
    );
    expect(() => exponential({ jitter: { kind: 'proportional', factor: 1.5 } })).toThrow(
      new RangeError(
        'exponential(): expected `jitter.factor` to be a number from 0 to 1, got 1.5. A factor of 0.5 spreads each delay over ±50 %.',
      ),
    );
    expect(() => exponential({ jitter: { kind: 'proportional', factor: -0.1 } })).toThrow(RangeError);
    expect(() => exponential({ jitter: { kind: 'additive', maxMs: Infinity } })).toThrow(
      new RangeError(
        'exponential(): expected `jitter.maxMs` to be a finite number >= 0, got Infinity. Durations are milliseconds, such as 500.',
      ),
    );
    expect(() => exponential({ jitter: { kind: 'additive', maxMs: 1, factor: 2 } as never })).toThrow(
      new TypeError('exponential() jitter: unknown option `factor`. Known options: kind, maxMs.'),
    );
    expect(() => exponential({ jitter: { kind: 'proportional', factor: 0.5, maxMs: 2 } as never })).toThrow(
      new TypeError('exponential() jitter: unknown option `maxMs`. Known options: kind, factor.'),
    );
  });

  it('accepts the bounds of a factor, and keeps a frozen copy of the object forms', () => {
    expect(run(exponential({ ...base, jitter: { kind: 'proportional', factor: 0 } }), 1, 0)).toEqual([100]);
    expect(run(exponential({ ...base, jitter: { kind: 'proportional', factor: 1 } }), 1, 0)).toEqual([0]);
    expect(run(exponential({ ...base, jitter: { kind: 'additive', maxMs: 0 } }), 1, 0.5)).toEqual([100]);
    const given = { kind: 'proportional' as const, factor: 0.5 };
    const b = exponential({ ...base, jitter: given });
    (given as { factor: number }).factor = 1;
    expect(run(b, 1, 0)).toEqual([50]);
    expect(b[SEGMENTS][0]?.jitter).toEqual({ kind: 'proportional', factor: 0.5 });
    expect(Object.isFrozen(b[SEGMENTS][0]?.jitter)).toBe(true);
    const added = exponential({ ...base, jitter: { kind: 'additive', maxMs: 10 } })[SEGMENTS][0]?.jitter;
    expect(added).toEqual({ kind: 'additive', maxMs: 10 });
    expect(Object.isFrozen(added)).toBe(true);
    expect(exponential({ ...base, jitter: 'none' })[SEGMENTS][0]?.jitter).toBe('none');
    expect(exponential(base)[SEGMENTS][0]?.jitter).toBe('none');
    for (const kind of ['full', 'equal', 'decorrelated'] as const) {
      expect(exponential({ ...base, jitter: kind })[SEGMENTS][0]?.jitter).toBe(kind);
    }
  });

  it('labels jitter the way the CLI writes it', () => {
    expect(jitterLabel('full')).toBe('full');
    expect(jitterLabel({ kind: 'proportional', factor: 0.5 })).toBe('proportional:0.5');
    expect(jitterLabel({ kind: 'additive', maxMs: 1000 })).toBe('additive:1000ms');
  });
});

describe('one module per jitter kind, one table of them', () => {
  it("the message's written forms name every kind of the table, in its order", () => {
    expect([...FORMS.matchAll(/'(\w+)'/g)].map((m) => m[1])).toEqual(Object.keys(KINDS));
  });

  it('every kind but decorrelated (a Markov chain) has its bounds in describe’s table', () => {
    expect(Object.keys(SPANS)).toEqual(Object.keys(KINDS).filter((k) => k !== 'decorrelated'));
  });

  it('every kind draws inside the bounds it declares, for random at 0, 1 − 2⁻⁵³ and in between', () => {
    const jitters = [
      'none',
      'full',
      'equal',
      { kind: 'proportional', factor: 0.3 },
      { kind: 'additive', maxMs: 7 },
    ] as const;
    for (const jitter of jitters) {
      const s = exponential({ initialDelayMs: 10, jitter })[SEGMENTS][0] as Segment;
      const kind = jitterKind(s.jitter);
      for (const d of [0, 5e-324, 1, 37.5, 1e300]) {
        const [low, high] = (SPANS[jitterName(s.jitter)] as Span)(d, s);
        for (const r of [0, 0.25, 0.5, 1 - 2 ** -53]) {
          const x = kind.draw(d, () => r, s, 1, 0);
          expect(x, `${JSON.stringify(jitter)} d=${d} r=${r}`).toBeGreaterThanOrEqual(low);
          expect(x, `${JSON.stringify(jitter)} d=${d} r=${r}`).toBeLessThanOrEqual(high);
        }
      }
    }
  });
});
