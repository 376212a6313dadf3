import { describe, expect, it } from 'vitest';
import { type Backoff, saidForever } from './backoff.js';
import { chain } from './chain.js';
import { constant } from './constant.js';
import { describePolicy } from './describe.js';
import { exponential } from './exponential.js';
import { SEGMENTS } from './segment.js';
import { slotted } from './slotted.js';
import { always, delays, NEXT_BELOW_ONE, run } from './test-helpers.js';

describe('Backoff values', () => {
  it('are immutable: combinators return new values and leave the original alone', () => {
    const a = exponential({ initialDelayMs: 10 });
    const b = a.withMaxAttempts(3).withJitter('full').withMaxDelay(15).withMaxElapsed(99);
    expect(a.maxAttempts).toBe(Infinity);
    expect(a[SEGMENTS][0]?.jitter).toBe('none');
    expect(b.maxAttempts).toBe(3);
    expect(b.maxElapsedMs).toBe(99);
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(a[SEGMENTS])).toBe(true);
    expect(Object.isFrozen(a[SEGMENTS][0])).toBe(true);
    expect(() => {
      (a as { maxAttempts: number }).maxAttempts = 5;
    }).toThrow(TypeError);
  });

  it('give every run fresh state, so one value serves concurrent operations', () => {
    const b = exponential({ initialDelayMs: 1 });
    const r1 = b.start();
    const r2 = b.start();
    expect([r1.next(), r1.next(), r1.next()]).toEqual([1, 2, 4]);
    expect(r2.next()).toBe(1);
  });

  it('with… methods each change exactly their own parameter', () => {
    const b = exponential({ initialDelayMs: 100 });
    expect(run(b.withJitter('full'), 2, 0.5)).toEqual([50, 100]);
    expect(run(b.withMaxAttempts(2), 2)).toEqual([100, -1]);
    expect(run(b.withMaxAttempts(Infinity), 3)).toEqual([100, 200, 400]);
    expect(delays(b.withMaxDelay(300), 4)).toEqual([100, 200, 300, 300]);
    expect(delays(b.withMaxInterval(300), 4)).toEqual([100, 200, 300, 300]);
    expect(delays(b.withCeiling(2), 4)).toEqual([100, 200, 200, 200]);
    expect(b.withMaxElapsed(1_000).maxElapsedMs).toBe(1_000);
  });

  it('with…(Infinity) means "none": it lifts a limit set before', () => {
    const b = exponential({ initialDelayMs: 100, maxDelayMs: 300, maxIntervalMs: 250, ceiling: 2, maxElapsedMs: 9 });
    const uncapped = b.withMaxDelay(Infinity).withMaxInterval(Infinity);
    expect(delays(uncapped, 4)).toEqual([100, 200, 200, 200]);
    expect(delays(uncapped.withCeiling(Infinity), 5)).toEqual([100, 200, 400, 800, 1_600]);
    // Each lifts only its own limit: the other cap still holds.
    expect(delays(b.withMaxDelay(Infinity), 3)).toEqual([100, 200, 200]);
    expect(delays(b.withCeiling(Infinity).withMaxInterval(Infinity), 4)).toEqual([100, 200, 300, 300]);
    expect(b.withMaxElapsed(Infinity).maxElapsedMs).toBe(Infinity);
    expect(b.withMaxAttempts(4).withMaxAttempts(Infinity).maxAttempts).toBe(Infinity);
    // Jittered draws follow: with no cap left, full jitter reaches the whole uncapped row.
    expect(run(uncapped.withCeiling(Infinity).withJitter('full'), 5, 0.5)).toEqual([50, 100, 200, 400, 800]);
    // And the waits stay finite however far the row: growth saturates at MAX_DELAY_MS.
    const far = uncapped.withCeiling(Infinity).start(always(0.5));
    let d = 0;
    for (let i = 0; i < 2_000; i++) d = far.next();
    expect(d).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('with… methods validate like the constructors', () => {
    const b = exponential();
    expect(() => b.withMaxAttempts(0)).toThrow(/withMaxAttempts\(\): expected `maxAttempts`/);
    expect(() => b.withMaxAttempts(undefined as unknown as number)).toThrow(/got undefined/);
    expect(() => b.withMaxDelay(-1)).toThrow(RangeError);
    expect(() => b.withMaxInterval(Number.NaN)).toThrow(RangeError);
    expect(() => b.withMaxElapsed(undefined as unknown as number)).toThrow(/`maxElapsedMs`/);
    expect(() => b.withCeiling(1.5)).toThrow(/`ceiling`/);
    expect(() => b.withJitter('decorrelated').withCeiling(3)).toThrow(/decorrelated/);
  });
});

describe('Backoff validation messages name the method, the option, the value and the fix', () => {
  const limit = 'Leave it out for no limit.';
  const ceiling = 'It is the failure count after which delays stop growing, such as 10.';
  const attempts = '`maxAttempts` counts calls, the first included: 3 means one call and two retries.';
  const cases: [string, () => unknown, Error][] = [
    [
      'withMaxAttempts(0)',
      () => exponential().withMaxAttempts(0),
      new RangeError(
        `withMaxAttempts(): expected \`maxAttempts\` to be a whole number >= 1 (or Infinity), got 0. ${attempts}`,
      ),
    ],
    [
      'withMaxAttempts(undefined)',
      () => exponential().withMaxAttempts(undefined as never),
      new TypeError(
        `withMaxAttempts(): expected \`maxAttempts\` to be a whole number >= 1 (or Infinity), got undefined. ${attempts}`,
      ),
    ],
    [
      'withMaxElapsed(undefined)',
      () => exponential().withMaxElapsed(undefined as never),
      new TypeError(
        `withMaxElapsed(): expected \`maxElapsedMs\` to be a number >= 0 (or Infinity for no limit), got undefined. ${limit}`,
      ),
    ],
    [
      'withMaxDelay(undefined)',
      () => exponential().withMaxDelay(undefined as never),
      new TypeError(
        `withMaxDelay(): expected \`maxDelayMs\` to be a number >= 0 (or Infinity for no limit), got undefined. ${limit}`,
      ),
    ],
    [
      'withMaxInterval(NaN)',
      () => exponential().withMaxInterval(Number.NaN),
      new RangeError(
        `withMaxInterval(): expected \`maxIntervalMs\` to be a number >= 0 (or Infinity for no limit), got NaN. ${limit}`,
      ),
    ],
    [
      'withMaxInterval(undefined)',
      () => exponential().withMaxInterval(undefined as never),
      new TypeError(
        `withMaxInterval(): expected \`maxIntervalMs\` to be a number >= 0 (or Infinity for no limit), got undefined. ${limit}`,
      ),
    ],
    [
      'withCeiling(undefined)',
      () => exponential().withCeiling(undefined as never),
      new TypeError(
        `withCeiling(): expected \`ceiling\` to be a whole number >= 1 (or Infinity), got undefined. ${ceiling}`,
      ),
    ],
    [
      'withCeiling(0)',
      () => exponential().withCeiling(0),
      new RangeError(`withCeiling(): expected \`ceiling\` to be a whole number >= 1 (or Infinity), got 0. ${ceiling}`),
    ],
    [
      'withCeiling on a chain',
      () => chain(constant({ maxAttempts: 2 }), constant()).withCeiling(2),
      new TypeError('withCeiling(): a chained policy has no single ceiling; set `ceiling` on its parts.'),
    ],
    [
      'slotted withJitter',
      () => slotted({ slotMs: 1 }).withJitter('full'),
      new TypeError('withJitter(): a slotted policy draws its own random slot count; `jitter` cannot apply to it.'),
    ],
    [
      'decorrelated on constant',
      () => constant().withJitter('decorrelated'),
      new TypeError(
        'withJitter(): decorrelated jitter grows from `initialDelayMs` by `multiplier`, so it needs an exponential curve, not constant.',
      ),
    ],
    [
      'decorrelated from 0',
      () => exponential({ initialDelayMs: 0 }).withJitter('decorrelated'),
      new RangeError(
        'withJitter(): expected `initialDelayMs` to be a number > 0 with decorrelated jitter, got 0. Decorrelated jitter never grows from 0.',
      ),
    ],
    [
      'decorrelated with a ceiling',
      () => exponential({ ceiling: 3 }).withJitter('decorrelated'),
      new TypeError(
        'withJitter(): decorrelated jitter has no un-randomized curve for `ceiling` to act on; cap it with `maxDelayMs`.',
      ),
    ],
    [
      'decorrelated with maxIntervalMs',
      () => exponential({ jitter: 'decorrelated' }).withMaxInterval(3),
      new TypeError(
        'withMaxInterval(): decorrelated jitter has no un-randomized curve for `maxIntervalMs` to act on; cap it with `maxDelayMs`.',
      ),
    ],
    [
      'decorrelated with both',
      () => exponential({ ceiling: 3, maxIntervalMs: 3 }).withJitter('decorrelated'),
      new TypeError(
        'withJitter(): decorrelated jitter has no un-randomized curve for `ceiling` to act on; cap it with `maxDelayMs`.',
      ),
    ],
    [
      'chain with an endless first',
      () => chain(constant(), constant()),
      new TypeError(
        'chain(): `first` never runs out of attempts, so `second` would never start; give it `maxAttempts`.',
      ),
    ],
    [
      'chain with a budget on first',
      () => chain(constant({ maxAttempts: 2, maxElapsedMs: 5 }), constant()),
      new TypeError(
        'chain(): `first` has a time budget (`maxElapsedMs`); put the budget on `second`, which governs the whole run.',
      ),
    ],
    [
      'chain of a non-Backoff second',
      () => chain(constant({ maxAttempts: 2 }), 5 as never),
      new RangeError(
        'chain(): expected `second` to be a Backoff value, got 5. Build one with exponential() or take a preset.',
      ),
    ],
    [
      'chain of a non-Backoff first',
      () => chain({} as never, constant()),
      new TypeError(
        'chain(): expected `first` to be a Backoff value, got an object. Build one with exponential() or take a preset.',
      ),
    ],
    [
      'start(5)',
      () => exponential().start(5 as never),
      new TypeError(
        'start(): expected `random` to be a function returning a number in [0, 1), got 5. Leave it out for Math.random.',
      ),
    ],
  ];
  for (const [name, build, error] of cases) {
    it(name, () => {
      expect(build).toThrow(error);
    });
  }

  it('random() outside [0, 1): a RangeError for a number, a TypeError for anything else', () => {
    const tail = 'expected a number in [0, 1). A Random works like Math.random; seeded(42) gives a reproducible one.';
    const full = exponential({ jitter: 'full' });
    expect(() => full.start(() => 1).next()).toThrow(new RangeError(`random() returned 1; ${tail}`));
    expect(() => full.start(() => -Number.MIN_VALUE).next()).toThrow(
      new RangeError(`random() returned -5e-324; ${tail}`),
    );
    expect(() => full.start(() => '0.5' as never).next()).toThrow(new TypeError(`random() returned "0.5"; ${tail}`));
    expect(full.start(() => 0).next()).toBe(0);
  });
});

describe('Backoff arithmetic at the edges', () => {
  it('equal jitter never passes d, even where d / 2 rounds up in subnormals', () => {
    // 1.5e-323 / 2 is 1e-323, and 1e-323 + 1e-323 would be 2e-323 > d.
    const tiny = constant({ delayMs: 1.5e-323, jitter: 'equal' });
    expect(run(tiny, 1, NEXT_BELOW_ONE)).toEqual([1.5e-323]);
    expect(run(tiny, 1, 0)).toEqual([1e-323]);
  });

  it('proportional jitter: d · (1 − f + 2f · r) at both ends of r', () => {
    const b = constant({ delayMs: 100, jitter: { kind: 'proportional', factor: 0.25 } });
    expect(run(b, 1, 0)).toEqual([75]);
    expect(run(b, 1, 0.5)).toEqual([100]);
    expect(run(b, 1, 0.75)).toEqual([112.5]);
  });

  it('decorrelated draws grow from the previous delay, capped by the envelope initial · m^k', () => {
    const b = exponential({ initialDelayMs: 10, multiplier: 2, jitter: 'decorrelated' });
    // r = 0.5: U[10, 20] → 15; U[10, 30] → 20; U[10, 40] → 25.
    expect(run(b, 3, 0.5)).toEqual([15, 20, 25]);
    // maxDelayMs clamps after the draw.
    expect(run(b.withMaxDelay(18), 3, 0.5)).toEqual([15, 18, 18]);
  });

  it('the cap of a segment is the smaller of maxIntervalMs and maxDelayMs', () => {
    expect(delays(exponential({ initialDelayMs: 100, maxIntervalMs: 300, maxDelayMs: 500 }), 4)).toEqual([
      100, 200, 300, 300,
    ]);
    expect(delays(exponential({ initialDelayMs: 100, maxIntervalMs: 500, maxDelayMs: 300 }), 4)).toEqual([
      100, 200, 300, 300,
    ]);
    // The slot window narrows to the smaller cap too.
    expect(delays(slotted({ slotMs: 1, maxIntervalMs: 5, maxDelayMs: 9 }), 4)).toEqual([1, 3, 5, 5]);
  });
});

describe('chain', () => {
  it("runs first's rows, then second's from its row 1", () => {
    const c = chain(constant({ delayMs: 0, maxAttempts: 3 }), exponential({ initialDelayMs: 100, maxAttempts: 3 }));
    expect(run(c, 6)).toEqual([0, 0, 100, 200, -1, -1]);
    expect(c.maxAttempts).toBe(5);
    expect(describePolicy(c, 10).rows.map((r) => r.delayMs)).toEqual([0, 0, 100, 200]);
  });

  it('chains chains, and restarts decorrelated state in the next segment', () => {
    const inner = chain(constant({ delayMs: 1, maxAttempts: 2 }), constant({ delayMs: 2, maxAttempts: 2 }));
    const outer = chain(inner, exponential({ initialDelayMs: 5, multiplier: 3, jitter: 'decorrelated' }));
    expect(run(outer, 4, 0.5)).toEqual([1, 2, 10, 17.5]);
  });

  it('takes the time budget of second', () => {
    const c = chain(constant({ maxAttempts: 2 }), constant({ maxElapsedMs: 500 }));
    expect(c.maxElapsedMs).toBe(500);
    expect(c.maxAttempts).toBe(Infinity);
  });

  it('refuses a first part that never ends or has its own budget', () => {
    expect(() => chain(constant(), constant())).toThrow(/never runs out of attempts/);
    expect(() => chain(constant({ maxAttempts: 2, maxElapsedMs: 5 }), constant())).toThrow(/time budget/);
    expect(() => chain({} as Backoff, constant())).toThrow(/`first` to be a Backoff value/);
  });

  it('a chained policy has no single ceiling', () => {
    const c = chain(constant({ maxAttempts: 2 }), constant());
    expect(() => c.withCeiling(2)).toThrow(/chained policy/);
    // …but the per-segment combinators apply to every part.
    expect(delays(c.withMaxDelay(50), 2)).toEqual([50, 50]);
  });

  it('cuts a chained first part at its own maxAttempts, dropping the rows it never reaches', () => {
    const inner = chain(constant({ delayMs: 1, maxAttempts: 3 }), constant({ delayMs: 2, maxAttempts: 5 }));
    expect(inner.maxAttempts).toBe(7);
    const c = chain(inner.withMaxAttempts(3), constant({ delayMs: 9, maxAttempts: 3 }));
    expect(run(c, 6)).toEqual([1, 1, 9, 9, -1, -1]);
    expect(c[SEGMENTS].map((s) => s.rows)).toEqual([2, Infinity]);
    expect(c.maxAttempts).toBe(5);
    // The explicit "forever" of second carries over; without it, the chain is not said forever.
    expect(saidForever(chain(constant({ maxAttempts: 2 }), constant({ maxAttempts: Infinity })))).toBe(true);
    expect(saidForever(chain(constant({ maxAttempts: 2 }), constant()))).toBe(false);
    expect(chain(constant({ maxAttempts: 2 }), constant({ maxElapsedMs: 50 })).maxElapsedMs).toBe(50);
  });

  it('a first part of one attempt contributes no rows', () => {
    const c = chain(slotted({ slotMs: 1, maxAttempts: 1 }), constant({ delayMs: 7 }));
    expect(c[SEGMENTS].length).toBe(1);
    expect(c.start(always(0)).next()).toBe(7);
  });
});
