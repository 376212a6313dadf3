import { describe, expect, it } from 'vitest';
import { show } from '../core/validate.js';
import { decorrelatedJitter } from './decorrelated.js';
import { describePolicy } from './describe.js';
import { exponential } from './exponential.js';
import type { Jitter } from './jitter.js';
import { additiveJitter } from './jitter-additive.js';
import { equalJitter } from './jitter-equal.js';
import { fullJitter } from './jitter-full.js';
import { jitterNamed } from './jitter-named.js';
import { noJitter } from './jitter-none.js';
import { proportionalJitter } from './jitter-proportional.js';
import { SEGMENTS, type Segment } from './segment.js';
import { NEXT_BELOW_ONE, run } from './test-helpers.js';

const base = { initialDelayMs: 100, multiplier: 2 } as const;

describe('jitter', () => {
  it('none: the curve itself', () => {
    expect(run(exponential({ ...base, jitter: noJitter }), 3, 0.3)).toEqual([100, 200, 400]);
  });

  it('full: r·d, from 0 up to (not including) d', () => {
    expect(run(exponential({ ...base, jitter: fullJitter }), 2, 0)).toEqual([0, 0]);
    expect(run(exponential({ ...base, jitter: fullJitter }), 2, 0.5)).toEqual([50, 100]);
    expect(run(exponential({ ...base, jitter: fullJitter }), 1, NEXT_BELOW_ONE)[0]).toBeLessThan(100);
  });

  it('equal: d/2 + r·d/2', () => {
    expect(run(exponential({ ...base, jitter: equalJitter }), 2, 0)).toEqual([50, 100]);
    expect(run(exponential({ ...base, jitter: equalJitter }), 2, 0.5)).toEqual([75, 150]);
  });

  it('proportional: d·(1 − f + 2f·r), the factor matters', () => {
    const half = exponential({ ...base, jitter: proportionalJitter(0.5) });
    const fifth = exponential({ ...base, jitter: proportionalJitter(0.2) });
    expect(run(half, 2, 0)).toEqual([50, 100]);
    expect(run(fifth, 2, 0)).toEqual([80, 160]);
    expect(run(half, 1, NEXT_BELOW_ONE)[0]).toBeCloseTo(150, 9);
  });

  it('additive: d + r·maxMs, the amount matters', () => {
    expect(run(exponential({ ...base, jitter: additiveJitter(1_000) }), 2, 0.5)).toEqual([600, 700]);
    expect(run(exponential({ ...base, jitter: additiveJitter(10) }), 2, 0.5)).toEqual([105, 205]);
  });

  it('decorrelated: min(cap, U[initial, previous·multiplier]), starting from initial', () => {
    const b = exponential({
      initialDelayMs: 5,
      multiplier: 3,
      maxDelayMs: 100,
      jitter: decorrelatedJitter,
      maxAttempts: 6,
    });
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
    expect(() => exponential({ jitter: decorrelatedJitter, ceiling: 3 })).toThrow(
      /`ceiling`.*cap it with `maxDelayMs`/,
    );
    expect(() => exponential({ jitter: decorrelatedJitter, maxIntervalMs: 3 })).toThrow(/`maxIntervalMs`/);
    expect(() => exponential({ jitter: decorrelatedJitter, initialDelayMs: 0 })).toThrow(/`initialDelayMs`.*> 0/);
  });

  it('proportionalJitter() and additiveJitter() check their parameter, naming it', () => {
    const factorFix = 'A factor of 0.5 spreads each delay over ±50 %.';
    for (const bad of [1.5, -0.1, Number.NaN, Infinity]) {
      expect(() => proportionalJitter(bad)).toThrow(
        new RangeError(
          `proportionalJitter(): expected \`factor\` to be a number from 0 to 1, got ${show(bad)}. ${factorFix}`,
        ),
      );
    }
    expect(() => proportionalJitter(undefined as never)).toThrow(
      new TypeError(
        `proportionalJitter(): expected \`factor\` to be a number from 0 to 1, got undefined. ${factorFix}`,
      ),
    );
    const msFix = 'Durations are milliseconds, such as 500.';
    expect(() => additiveJitter(Infinity)).toThrow(
      new RangeError(`additiveJitter(): expected \`maxMs\` to be a finite number >= 0, got Infinity. ${msFix}`),
    );
    expect(() => additiveJitter(-1)).toThrow(RangeError);
    expect(() => additiveJitter('5' as never)).toThrow(
      new TypeError(`additiveJitter(): expected \`maxMs\` to be a finite number >= 0, got "5". ${msFix}`),
    );
  });

  it('accepts the bounds of a factor; every jitter value is frozen', () => {
    expect(run(exponential({ ...base, jitter: proportionalJitter(0) }), 1, 0)).toEqual([100]);
    expect(run(exponential({ ...base, jitter: proportionalJitter(1) }), 1, 0)).toEqual([0]);
    expect(run(exponential({ ...base, jitter: additiveJitter(0) }), 1, 0.5)).toEqual([100]);
    for (const j of [
      noJitter,
      fullJitter,
      equalJitter,
      decorrelatedJitter,
      proportionalJitter(0.5),
      additiveJitter(9),
    ]) {
      expect(Object.isFrozen(j)).toBe(true);
      expect(exponential({ ...base, jitter: j })[SEGMENTS][0]?.jitter).toBe(j);
    }
  });

  it('names and phrases: the name jitterNamed() reads, the words a policy prints', () => {
    const cases: [Jitter, string, string][] = [
      [noJitter, 'none', 'no jitter'],
      [fullJitter, 'full', 'full jitter'],
      [equalJitter, 'equal', 'equal jitter'],
      [decorrelatedJitter, 'decorrelated', 'decorrelated jitter'],
      [proportionalJitter(0.5), 'proportional:0.5', '±50 % jitter'],
      [proportionalJitter(0.07), 'proportional:0.07', '±7 % jitter'],
      [additiveJitter(1_000), 'additive:1000', '+0–1 s jitter'],
      [additiveJitter(0.25), 'additive:0.25', '+0–250 µs jitter'],
    ];
    for (const [j, name, words] of cases) {
      expect([j.name, String(j)]).toEqual([name, words]);
    }
  });
});

describe('jitterNamed(): the catalogue of every kind, by name', () => {
  it('gives the value each name stands for', () => {
    expect(jitterNamed('none')).toBe(noJitter);
    expect(jitterNamed('full')).toBe(fullJitter);
    expect(jitterNamed('equal')).toBe(equalJitter);
    expect(jitterNamed('decorrelated')).toBe(decorrelatedJitter);
    expect(run(exponential({ ...base, jitter: jitterNamed('proportional:0.2') }), 1, 0)).toEqual([80]);
    expect(run(exponential({ ...base, jitter: jitterNamed('additive:10') }), 1, 0.5)).toEqual([105]);
    expect(jitterNamed('additive:1e3').name).toBe('additive:1000');
  });

  it("refuses any other name, naming the forms it reads; a bad parameter is its factory's error", () => {
    const forms = "one of 'none', 'full', 'equal', 'decorrelated', 'proportional:FACTOR' or 'additive:MS'";
    for (const bad of ['', 'gauss', 'full:1', 'proportional', 'constructor', 'toString', 'proportional:0.5:1']) {
      expect(() => jitterNamed(bad)).toThrow(
        new TypeError(
          `jitterNamed(): expected \`name\` to be ${forms}, got ${show(bad)}. Full jitter ('full') suits most clients.`,
        ),
      );
    }
    expect(() => jitterNamed(5 as never)).toThrow(TypeError);
    expect(() => jitterNamed(null as never)).toThrow(/got null/);
    expect(() => jitterNamed('proportional:2')).toThrow(/proportionalJitter\(\): expected `factor`.*got 2\./);
    expect(() => jitterNamed('proportional:')).toThrow(/got NaN/);
    expect(() => jitterNamed('additive: ')).toThrow(/additiveJitter\(\): expected `maxMs`.*got NaN/);
    expect(() => jitterNamed('additive:-1')).toThrow(RangeError);
  });
});

describe('one object per jitter kind, read by the run and by describePolicy()', () => {
  it('every kind draws inside the bounds it declares, for random at 0, 1 − 2⁻⁵³ and in between', () => {
    const jitters = [noJitter, fullJitter, equalJitter, proportionalJitter(0.3), additiveJitter(7)];
    for (const jitter of jitters) {
      const s = exponential({ initialDelayMs: 10, jitter })[SEGMENTS][0] as Segment;
      for (const d of [0, 5e-324, 1, 37.5, 1e300]) {
        const [low, high] = (jitter.span as NonNullable<Jitter['span']>)(d, s);
        for (const r of [0, 0.25, 0.5, 1 - 2 ** -53]) {
          const x = jitter.draw(d, () => r, s, 1, 0);
          expect(x, `${jitter.name} d=${d} r=${r}`).toBeGreaterThanOrEqual(low);
          expect(x, `${jitter.name} d=${d} r=${r}`).toBeLessThanOrEqual(high);
        }
      }
    }
  });

  it('decorrelated jitter has rows instead of a span (its draws form a Markov chain)', () => {
    expect(decorrelatedJitter.span).toBeUndefined();
    expect(typeof decorrelatedJitter.row).toBe('function');
    expect(decorrelatedJitter.chained).toBe(true);
    for (const j of [noJitter, fullJitter, equalJitter, proportionalJitter(0.3), additiveJitter(7)]) {
      expect([typeof j.span, j.row, j.chained]).toEqual(['function', undefined, undefined]);
    }
  });
});
