import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../core/clock.js';
import { virtualClock } from '../core/virtual-clock.js';
import { Backoff } from './backoff.js';
import { describePolicy } from './describe.js';
import { GoogleBackoff, googleExponentialBackoff, googleNextInterval, googleRandomizedInterval } from './google.js';
import { noJitter } from './jitter-none.js';
import { presets } from './presets.js';
import { sample } from './sample.js';
import { SEGMENTS } from './segment.js';
import { always, NEXT_BELOW_ONE } from './test-helpers.js';
import { withOptions } from './with-options.js';

/** Waits of a run whose attempts all fail at once, on a clock that moves by each wait. */
function instantFailures(b: Backoff, random: number, max = 50): number[] {
  let now = 0;
  const clock: Clock = { now: () => now, sleep: () => Promise.resolve() };
  const run = (b as GoogleBackoff).start(always(random), clock);
  const out: number[] = [];
  for (let i = 0; i < max; i++) {
    const wait = run.next();
    out.push(wait);
    if (wait < 0) break;
    now += wait;
  }
  return out;
}

describe("googleExponentialBackoff reproduces Google's ExponentialBackOff", () => {
  it('draws whole milliseconds: ExponentialBackOffTest#testGetRandomValueFromInterval', () => {
    // google-http-java-client, ExponentialBackOffTest: interval 2, factor 0.5 → [1, 3].
    expect([0, 0.33, 0.34, 0.66, 0.67, 0.99].map((r) => googleRandomizedInterval(0.5, r, 2))).toEqual([
      1, 1, 2, 2, 3, 3,
    ]);
    // The same through a run: the first wait is the initial interval randomized.
    const b = googleExponentialBackoff({ initialIntervalMs: 2, randomizationFactor: 0.5 });
    expect([0, 0.33, 0.34, 0.66, 0.67, 0.99].map((r) => b.start(always(r), virtualClock()).next())).toEqual([
      1, 1, 2, 2, 3, 3,
    ]);
  });

  it('stops only once the budget is already spent, checked before the wait: 1000 ms, 500 ms ×1.5 → 3 calls', () => {
    const b = googleExponentialBackoff({
      initialIntervalMs: 500,
      multiplier: 1.5,
      randomizationFactor: 0,
      maxElapsedTimeMs: 1_000,
    });
    // Calls at 0, 500 and 1250 ms: the second wait ends past the budget, the third call stops.
    expect(instantFailures(b, 0.5)).toEqual([500, 750, -1]);
    // Elapsed counts in whole ms (Java divides nanoseconds by 10^6): 1000.9 ms is not past 1000.
    const run = b.start(always(0), virtualClock()) as { next(elapsedMs: number): number };
    expect([run.next(1000.9), run.next(1001)]).toEqual([500, -1]);
    // No executor deadline: the budget is the run's rule.
    expect(b.maxElapsedMs).toBe(Infinity);
    expect(b.maxElapsedTimeMs).toBe(1_000);
  });

  it('sample() applies the stop rule to attempts that fail at once', () => {
    const b = googleExponentialBackoff({ randomizationFactor: 0, maxElapsedTimeMs: 1_000 });
    expect(sample(b, { count: 10 })).toEqual([500, 750]);
    expect(sample(withOptions(b, { maxElapsedMs: 1_250 }), { count: 10 })).toEqual([500, 750, 1125]);
  });

  it('measures elapsed time on the clock given to start() when next() is not told it', () => {
    let now = 7_000; // a clock that does not start at 0
    const clock: Clock = { now: () => now, sleep: () => Promise.resolve() };
    const run = googleExponentialBackoff({ randomizationFactor: 0, maxElapsedTimeMs: 10 }).start(always(0), clock);
    now += 10;
    expect(run.next()).toBe(500);
    now += 1;
    expect(run.next()).toBe(-1);
  });

  it('refuses what would keep its time budget from ever stopping a run: a NaN or non-number elapsed time, a clock that is no clock or reads NaN', () => {
    const b = googleExponentialBackoff({ randomizationFactor: 0 });
    expect(() => b.start(always(0), {} as never)).toThrow(
      new TypeError('start(): expected `clock` to be a Clock { now(), sleep(ms, signal) }, got an object.'),
    );
    let now = 0;
    const clock: Clock = { now: () => now, sleep: () => Promise.resolve() };
    const run = b.start(always(0), clock);
    expect(() => run.next(Number.NaN)).toThrow(
      new RangeError(
        'next(): expected `elapsedMs` to be a number of milliseconds, got NaN. Leave it out for the run to read its clock.',
      ),
    );
    expect(() => run.next('10' as never)).toThrow(TypeError);
    now = Number.NaN;
    expect(() => run.next()).toThrow(
      new RangeError('clock.now() returned NaN; expected a finite number of milliseconds.'),
    );
    expect(() => b.start(always(0), clock)).toThrow(RangeError);
    now = 0;
    expect(b.start(always(0), clock).next()).toBe(500);
  });

  it('keeps an interval that stops growing constant, without looping (multiplier 1; 3 ms ×1.2; 1000 ms ×1.001)', () => {
    for (const [initialIntervalMs, multiplier] of [
      [500, 1],
      [3, 1.2],
      [1_000, 1.001],
    ] as const) {
      const b = googleExponentialBackoff({ initialIntervalMs, multiplier, randomizationFactor: 0 });
      expect(describePolicy(b, 5).rows.map((r) => r.delayMs)).toEqual(Array(5).fill(initialIntervalMs));
      expect(instantFailures(b, 0.5, 5)).toEqual(Array(5).fill(initialIntervalMs));
    }
    // Slow growth is tabulated up to a bound, and runs keep computing past it.
    const slow = googleExponentialBackoff({
      initialIntervalMs: 1_000_000_000,
      multiplier: 1 + 1e-9,
      maxIntervalMs: 2_000_000_000,
      randomizationFactor: 0,
    });
    expect(describePolicy(slow, 3).rows.map((r) => r.delayMs)).toEqual([1_000_000_000, 1_000_000_001, 1_000_000_002]);
  });

  it("grows the int interval as Java's incrementCurrentInterval: the Javadoc table, the cap at max / multiplier", () => {
    expect(describePolicy(presets.googleHttpClient, 13).rows.map((r) => r.delayMs)).toEqual([
      500, 750, 1125, 1687, 2530, 3795, 5692, 8538, 12807, 19210, 28815, 43222, 60000,
    ]);
    // current >= max / multiplier jumps to max: 40 000 >= 60 000 / 1.5.
    expect(googleNextInterval(40_000, 1.5, 60_000)).toBe(60_000);
    expect(googleNextInterval(39_999, 1.5, 60_000)).toBe(59_998);
    // A product past 2^31 − 1 saturates as Java's (int) does; Infinity jumps to the cap.
    expect(googleNextInterval(2_000_000_000, 2, 2_147_483_647)).toBe(2_147_483_647);
    expect(googleNextInterval(1, Infinity, 9)).toBe(9);
  });

  it('describePolicy() gives the mean of the draws, and where they saturate at 2^31 − 1 the mean counts the clamp', () => {
    // The mean over 200,000 evenly spaced random values of the draw itself.
    const quadrature = (f: number, interval: number) => {
      const n = 200_000;
      let sum = 0;
      for (let i = 0; i < n; i++) sum += googleRandomizedInterval(f, (i + 0.5) / n, interval);
      return sum / n;
    };
    for (const [interval, f] of [
      [1_125, 0.5],
      [7, 0.3],
      [2_147_483_647, 0.5],
      [2_000_000_000, 0.25],
      [2_147_483_647, 0],
    ] as const) {
      const b = googleExponentialBackoff({
        initialIntervalMs: interval,
        maxIntervalMs: interval,
        randomizationFactor: f,
      });
      const row = describePolicy(b, 1).rows[0];
      const expected = quadrature(f, interval);
      expect(Math.abs((row?.meanDelayMs as number) - expected) / expected).toBeLessThan(1e-4);
    }
    // Interval 2^31 − 1, factor 0.5: draws from 1073741823 up, half of them clamped at 2^31 − 1,
    // so the mean is about (1.61e9 + 2.15e9) / 2, not 2^31 − 1.
    const top = googleExponentialBackoff({ initialIntervalMs: 2_147_483_647, maxIntervalMs: 2_147_483_647 });
    expect(describePolicy(top, 1).rows[0]?.meanDelayMs).toBeCloseTo(
      ((1_073_741_823.5 + 2_147_483_647) / 2 + 2_147_483_647) / 2,
      -2,
    );
  });

  it("narrows doubles to int as Java's (int) does (JLS §5.1.3): NaN → 0, saturation at both ends, toward zero", () => {
    // factor 0, random 0: the draw is (int) interval.
    expect(googleRandomizedInterval(Number.NaN, 0.5, 10)).toBe(0);
    expect(googleRandomizedInterval(0, 0, 2_147_483_647.5)).toBe(2_147_483_647);
    expect(googleRandomizedInterval(0, 0, 2_147_483_646.5)).toBe(2_147_483_646);
    expect(googleRandomizedInterval(0, 0, -3e9)).toBe(-2_147_483_648);
    expect(googleRandomizedInterval(0, 0, -2_147_483_648)).toBe(-2_147_483_648);
    expect(googleRandomizedInterval(0, 0, -2_147_483_647.5)).toBe(-2_147_483_647);
    expect(googleRandomizedInterval(0, 0, -1.5)).toBe(-1);
    expect(Object.is(googleRandomizedInterval(0, 0, -0.5), 0)).toBe(true);
    expect(googleNextInterval(3, 1.5, 60_000)).toBe(4);
    // current == max / multiplier exactly, where current · multiplier is 14.999999999999998:
    // Java's `>=` jumps to the cap (15), the product would truncate to 14.
    expect(googleNextInterval(11, 15 / 11, 15)).toBe(15);
  });

  it('tabulates at most 10,000 intervals for describePolicy(); runs compute every one', () => {
    const slow = googleExponentialBackoff({
      initialIntervalMs: 1_000_000_000,
      multiplier: 1 + 1e-9,
      maxIntervalMs: 2_000_000_000,
      randomizationFactor: 0,
    });
    const curve = slow[SEGMENTS][0]?.curve as { delaysMs: readonly number[] };
    expect(curve.delaysMs.length).toBe(10_000);
    expect(curve.delaysMs[9_999]).toBe(1_000_009_999);
  });

  it('withOptions() with maxIntervalMs or ceiling gives an ebb policy over the same intervals', () => {
    const g = googleExponentialBackoff({ randomizationFactor: 0, maxElapsedTimeMs: 5_000 });
    const interval = withOptions(g, { maxIntervalMs: 1_000 });
    expect(interval).not.toBeInstanceOf(GoogleBackoff);
    expect(interval.maxElapsedMs).toBe(5_000);
    expect(describePolicy(interval, 4).rows.map((r) => r.delayMs)).toEqual([500, 750, 1_000, 1_000]);
    const ceiling = withOptions(g, { ceiling: 2 });
    expect(ceiling).not.toBeInstanceOf(GoogleBackoff);
    expect(ceiling.maxElapsedMs).toBe(5_000);
    expect(describePolicy(ceiling, 4).rows.map((r) => r.delayMs)).toEqual([500, 750, 750, 750]);
  });

  it('saturates a randomized wait at 2^31 − 1 ms, as (int) does', () => {
    expect(googleRandomizedInterval(0.5, NEXT_BELOW_ONE, 2_147_483_647)).toBe(2_147_483_647);
    expect(googleRandomizedInterval(0.5, 0, 2_147_483_647)).toBe(1_073_741_823);
  });

  it('draws within [interval·(1−f), interval·(1+f)] in whole ms for any interval, factor and random', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2_147_483_647 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (interval, f, r) => {
          const w = googleRandomizedInterval(f, r, interval);
          expect(Number.isInteger(w)).toBe(true);
          expect(w).toBeGreaterThanOrEqual(Math.floor(interval - f * interval));
          expect(w).toBeLessThanOrEqual(Math.min(2_147_483_647, Math.floor(interval + f * interval) + 1));
        },
      ),
    );
  });

  it('refuses what the Java builder refuses, naming the option', () => {
    const bad: [object, RegExp][] = [
      [{ initialIntervalMs: 0 }, /`initialIntervalMs`/],
      [{ initialIntervalMs: 0.5 }, /`initialIntervalMs`.*whole number/],
      [{ initialIntervalMs: 2 ** 31 }, /`initialIntervalMs`.*2147483647/],
      [{ randomizationFactor: 1 }, /`randomizationFactor`/],
      [{ randomizationFactor: -0.1 }, /`randomizationFactor`/],
      [{ randomizationFactor: Number.NaN }, /`randomizationFactor`/],
      [{ multiplier: 0.99 }, /`multiplier`/],
      [{ multiplier: Number.NaN }, /`multiplier`/],
      [{ maxIntervalMs: 100 }, /`maxIntervalMs`.*>= initialIntervalMs \(500\)/],
      [{ maxElapsedTimeMs: 0 }, /`maxElapsedTimeMs`/],
      [{ maxElapsedTimeMs: -1 }, /`maxElapsedTimeMs`/],
    ];
    for (const [options, message] of bad) {
      expect(() => googleExponentialBackoff(options)).toThrow(RangeError);
      expect(() => googleExponentialBackoff(options)).toThrow(message);
    }
    for (const value of [null, '500', {}, [], true]) {
      for (const name of [
        'initialIntervalMs',
        'randomizationFactor',
        'multiplier',
        'maxIntervalMs',
        'maxElapsedTimeMs',
      ]) {
        expect(() => googleExponentialBackoff({ [name]: value })).toThrow(TypeError);
        expect(() => googleExponentialBackoff({ [name]: value })).toThrow(new RegExp(`\`${name}\``));
      }
    }
    // Java accepts these, and so does ebb.
    expect(googleExponentialBackoff({ multiplier: Infinity }).multiplier).toBe(Infinity);
    expect(googleExponentialBackoff({ randomizationFactor: 0 }).randomizationFactor).toBe(0);
  });

  it('names the option, the value and the fix in each message', () => {
    const w = 'googleExponentialBackoff()';
    const int = (name: string, min: number, got: string, fix: string) =>
      `${w}: expected \`${name}\` to be a whole number from ${min} to 2147483647 (a Java int), got ${got}. ${fix}`;
    const ms = 'The Java client counts whole milliseconds, such as 500.';
    const budget = 'Google requires a budget > 0 (900000 is 15 minutes); pass Infinity for none.';
    const cases: [object, Error][] = [
      [{ initialIntervalMs: 0 }, new RangeError(int('initialIntervalMs', 1, '0', ms))],
      [{ initialIntervalMs: 2 ** 31 }, new RangeError(int('initialIntervalMs', 1, '2147483648', ms))],
      [{ initialIntervalMs: 2.5 }, new RangeError(int('initialIntervalMs', 1, '2.5', ms))],
      [{ initialIntervalMs: '5' }, new TypeError(int('initialIntervalMs', 1, '"5"', ms))],
      [
        { maxIntervalMs: 100 },
        new RangeError(int('maxIntervalMs', 500, '100', 'It must be a whole number >= initialIntervalMs (500).')),
      ],
      [{ maxElapsedTimeMs: 0 }, new RangeError(int('maxElapsedTimeMs', 1, '0', budget))],
      [{ maxElapsedTimeMs: 2 ** 31 }, new RangeError(int('maxElapsedTimeMs', 1, '2147483648', budget))],
      [
        { randomizationFactor: 1 },
        new RangeError(`${w}: expected \`randomizationFactor\` to be a number >= 0 and < 1, got 1. Google uses 0.5.`),
      ],
      [
        { randomizationFactor: '0.5' },
        new TypeError(
          `${w}: expected \`randomizationFactor\` to be a number >= 0 and < 1, got "0.5". Google uses 0.5.`,
        ),
      ],
      [
        { multiplier: 0.99 },
        new RangeError(`${w}: expected \`multiplier\` to be a number >= 1, got 0.99. Google uses 1.5.`),
      ],
      [
        { multiplier: null },
        new TypeError(`${w}: expected \`multiplier\` to be a number >= 1, got null. Google uses 1.5.`),
      ],
      [
        { foo: 1 },
        new TypeError(
          `${w}: unknown option \`foo\`. Known options: initialIntervalMs, randomizationFactor, multiplier, maxIntervalMs, maxElapsedTimeMs, clock.`,
        ),
      ],
    ];
    for (const [options, error] of cases) expect(() => googleExponentialBackoff(options)).toThrow(error);
    expect(() => googleExponentialBackoff(5 as never)).toThrow(
      new TypeError(`${w}: expected an options object, got 5.`),
    );
    expect(() => withOptions(presets.googleHttpClient, { maxElapsedMs: null as never })).toThrow(
      new TypeError(
        `withOptions(): expected \`maxElapsedMs\` to be a whole number from 1 to 2147483647 (a Java int), got null. ${budget}`,
      ),
    );
    expect(() => withOptions(presets.googleHttpClient, { maxElapsedMs: 0 })).toThrow(
      new RangeError(
        `withOptions(): expected \`maxElapsedMs\` to be a whole number from 1 to 2147483647 (a Java int), got 0. ${budget}`,
      ),
    );
    expect(() => withOptions(presets.googleHttpClient, { maxAttempts: 0 })).toThrow(
      /withOptions\(\): expected `maxAttempts` to be a whole number >= 1/,
    );
    // The bounds themselves are accepted.
    const widest = googleExponentialBackoff({
      initialIntervalMs: 2_147_483_647,
      maxIntervalMs: 2_147_483_647,
      maxElapsedTimeMs: 2_147_483_647,
    });
    expect([widest.initialIntervalMs, widest.maxIntervalMs, widest.maxElapsedTimeMs]).toEqual([
      2_147_483_647, 2_147_483_647, 2_147_483_647,
    ]);
    expect(
      googleExponentialBackoff({ initialIntervalMs: 1, maxIntervalMs: 1, maxElapsedTimeMs: 1 }).maxIntervalMs,
    ).toBe(1);
    expect(googleExponentialBackoff({ multiplier: 1 }).multiplier).toBe(1);
  });

  it('prints as the Java class it reproduces', () => {
    expect(String(presets.googleHttpClient)).toBe(
      'Google ExponentialBackOff 500 ms ×1.5, ±50 % (whole ms), 1 min interval cap, within 15 min',
    );
    expect(
      String(googleExponentialBackoff({ randomizationFactor: 0, maxIntervalMs: 2_500, maxElapsedTimeMs: Infinity })),
    ).toBe('Google ExponentialBackOff 500 ms ×1.5, 2.5 s interval cap, no time budget');
    expect(String(withOptions(presets.googleHttpClient, { maxAttempts: 3 }))).toBe(
      'Google ExponentialBackOff 500 ms ×1.5, ±50 % (whole ms), 1 min interval cap, 3 attempts, within 15 min',
    );
    expect(presets.googleHttpClient.toJSON()).toEqual({
      type: 'google',
      initialIntervalMs: 500,
      randomizationFactor: 0.5,
      multiplier: 1.5,
      maxIntervalMs: 60_000,
      maxElapsedTimeMs: 900_000,
      maxAttempts: Infinity,
    });
  });

  it("has the Java builder's defaults, readable on the value", () => {
    const g = googleExponentialBackoff();
    expect([g.initialIntervalMs, g.randomizationFactor, g.multiplier, g.maxIntervalMs, g.maxElapsedTimeMs]).toEqual([
      500, 0.5, 1.5, 60_000, 900_000,
    ]);
    expect([g.maxAttempts, g.maxElapsedMs]).toEqual([Infinity, Infinity]);
    expect(g[SEGMENTS][0]?.jitter.name).toBe('proportional:0.5');
    expect(googleExponentialBackoff({ randomizationFactor: 0 })[SEGMENTS][0]?.jitter.name).toBe('none');
    const given = googleExponentialBackoff({
      initialIntervalMs: 7,
      randomizationFactor: 0.25,
      multiplier: 3,
      maxIntervalMs: 100,
      maxElapsedTimeMs: 5_000,
    });
    expect([
      given.initialIntervalMs,
      given.randomizationFactor,
      given.multiplier,
      given.maxIntervalMs,
      given.maxElapsedTimeMs,
    ]).toEqual([7, 0.25, 3, 100, 5_000]);
    expect(given[SEGMENTS][0]?.curve).toEqual({ type: 'sequence', delaysMs: [7, 21, 63, 100] });
  });

  it('withOptions() keeps Google rules for maxAttempts and maxElapsedMs; any other option gives an ebb policy with the budget as deadline', () => {
    const g = presets.googleHttpClient;
    const limited = withOptions(g, { maxAttempts: 3 });
    expect(limited).toBeInstanceOf(GoogleBackoff);
    expect(instantFailures(limited, 0)).toEqual([250, 375, -1]);
    const short = withOptions(g, { maxElapsedMs: 600 });
    expect(short).toBeInstanceOf(GoogleBackoff);
    expect((short as GoogleBackoff).maxElapsedTimeMs).toBe(600);
    expect([short.maxAttempts, short.maxElapsedMs]).toEqual([Infinity, Infinity]);
    const both = withOptions(g, { maxAttempts: 4, maxElapsedMs: Infinity });
    expect([both instanceof GoogleBackoff, (both as GoogleBackoff).maxElapsedTimeMs, both.maxAttempts]).toEqual([
      true,
      Infinity,
      4,
    ]);
    const plain = withOptions(short, { jitter: noJitter });
    expect(plain).not.toBeInstanceOf(GoogleBackoff);
    expect(plain.maxElapsedMs).toBe(600);
    expect(describePolicy(plain, 2).rows.map((r) => [r.minDelayMs, r.maxDelayMs])).toEqual([
      [500, 500],
      [750, 750],
    ]);
    // Made ordinary, it draws proportional jitter of the same factor (continuous, not whole ms).
    const ordinary = withOptions(g, { maxIntervalMs: 60_000 });
    expect(describePolicy(ordinary, 3).rows[2]).toMatchObject({
      delayMs: 1_125,
      minDelayMs: 562.5,
      maxDelayMs: 1_687.5,
    });
    const capped = withOptions(g, { maxDelayMs: 1_000 });
    expect(capped).not.toBeInstanceOf(GoogleBackoff);
    expect(capped).toBeInstanceOf(Backoff);
    expect(capped.maxElapsedMs).toBe(900_000);
    expect(describePolicy(capped, 3).rows.map((r) => r.maxDelayMs)).toEqual([750, 1_000, 1_000]);
  });
});
