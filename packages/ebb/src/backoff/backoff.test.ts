import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { show } from '../core/validate.js';
import type { Backoff } from './backoff.js';
import { chain } from './chain.js';
import { constant } from './constant.js';
import { decorrelatedJitter } from './decorrelated.js';
import { defaultBackoff } from './default.js';
import { describePolicy, describeRow } from './describe.js';
import { exponential } from './exponential.js';
import { additiveJitter } from './jitter-additive.js';
import { equalJitter } from './jitter-equal.js';
import { fullJitter } from './jitter-full.js';
import { jitterNamed } from './jitter-named.js';
import { noJitter } from './jitter-none.js';
import { proportionalJitter } from './jitter-proportional.js';
import { linear } from './linear.js';
import { presets } from './presets.js';
import { SEGMENTS } from './segment.js';
import { sequence } from './sequence.js';
import { slotted } from './slotted.js';
import { always, delays, NEXT_BELOW_ONE, run } from './test-helpers.js';
import { withOptions } from './with-options.js';

describe('Backoff values', () => {
  it('are immutable: withOptions() returns a new value and leaves the original alone', () => {
    const a = exponential({ initialDelayMs: 10, jitter: noJitter });
    const b = withOptions(a, { maxAttempts: 3, jitter: fullJitter, maxDelayMs: 15, maxElapsedMs: 99 });
    expect(a.maxAttempts).toBe(5);
    expect(a[SEGMENTS][0]?.jitter).toBe(noJitter);
    expect(a[SEGMENTS][0]?.maxDelayMs).toBe(20_000);
    expect(b.maxAttempts).toBe(3);
    expect(b.maxElapsedMs).toBe(99);
    expect(b[SEGMENTS][0]?.jitter).toBe(fullJitter);
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(a[SEGMENTS])).toBe(true);
    expect(Object.isFrozen(a[SEGMENTS][0])).toBe(true);
    expect(() => {
      (a as { maxAttempts: number }).maxAttempts = 5;
    }).toThrow(TypeError);
  });

  it('give every run fresh state, so one value serves concurrent operations', () => {
    const b = exponential({ initialDelayMs: 1, jitter: noJitter });
    const r1 = b.start();
    const r2 = b.start();
    expect([r1.next(), r1.next(), r1.next()]).toEqual([1, 2, 4]);
    expect(r2.next()).toBe(1);
  });

  it('withOptions() changes exactly the options it is given', () => {
    const b = exponential({ initialDelayMs: 100, jitter: noJitter, maxDelayMs: Infinity });
    expect(run(withOptions(b, { jitter: fullJitter }), 2, 0.5)).toEqual([50, 100]);
    expect(run(withOptions(b, { maxAttempts: 2 }), 2)).toEqual([100, -1]);
    expect(run(withOptions(b, { maxAttempts: Infinity }), 6)).toEqual([100, 200, 400, 800, 1_600, 3_200]);
    expect(delays(withOptions(b, { maxDelayMs: 300 }), 4)).toEqual([100, 200, 300, 300]);
    expect(delays(withOptions(b, { maxIntervalMs: 300 }), 4)).toEqual([100, 200, 300, 300]);
    expect(delays(withOptions(b, { ceiling: 2 }), 4)).toEqual([100, 200, 200, 200]);
    expect(withOptions(b, { maxElapsedMs: 1_000 }).maxElapsedMs).toBe(1_000);
    // Options left out, or given as undefined, stay the policy's own.
    const same = withOptions(b, { maxAttempts: undefined });
    expect([same.maxAttempts, run(same, 2)]).toEqual([5, [100, 200]]);
    expect(withOptions(b, {})).not.toBe(b);
  });

  it('withOptions() with Infinity means "none": it lifts a limit set before', () => {
    const b = exponential({
      initialDelayMs: 100,
      jitter: noJitter,
      maxDelayMs: 300,
      maxIntervalMs: 250,
      ceiling: 2,
      maxElapsedMs: 9,
      maxAttempts: 10,
    });
    const uncapped = withOptions(b, { maxDelayMs: Infinity, maxIntervalMs: Infinity });
    expect(delays(uncapped, 4)).toEqual([100, 200, 200, 200]);
    expect(delays(withOptions(uncapped, { ceiling: Infinity }), 5)).toEqual([100, 200, 400, 800, 1_600]);
    // Each lifts only its own limit: the other cap still holds.
    expect(delays(withOptions(b, { maxDelayMs: Infinity }), 3)).toEqual([100, 200, 200]);
    expect(delays(withOptions(b, { ceiling: Infinity, maxIntervalMs: Infinity }), 4)).toEqual([100, 200, 300, 300]);
    expect(withOptions(b, { maxElapsedMs: Infinity }).maxElapsedMs).toBe(Infinity);
    expect(withOptions(withOptions(b, { maxAttempts: 4 }), { maxAttempts: Infinity }).maxAttempts).toBe(Infinity);
    // Jittered draws follow: with no cap left, full jitter reaches the whole uncapped row.
    const free = withOptions(uncapped, { ceiling: Infinity, maxAttempts: Infinity });
    expect(run(withOptions(free, { jitter: fullJitter }), 5, 0.5)).toEqual([50, 100, 200, 400, 800]);
    // And the waits stay finite however far the row: growth saturates at MAX_DELAY_MS.
    const far = free.start(always(0.5));
    let d = 0;
    for (let i = 0; i < 2_000; i++) d = far.next();
    expect(d).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('withOptions() refuses to make a policy endless by accident: lifting the only stop needs maxAttempts', () => {
    const sip = exponential({ initialDelayMs: 500, jitter: noJitter, maxElapsedMs: 32_000 });
    expect(sip.maxAttempts).toBe(Infinity);
    expect(() => withOptions(sip, { maxElapsedMs: Infinity })).toThrow(
      new RangeError(
        'withOptions(): `maxElapsedMs: Infinity` lifts the only limit of this policy, so it would never stop; give `maxAttempts` too (Infinity to retry until success).',
      ),
    );
    expect(withOptions(sip, { maxElapsedMs: Infinity, maxAttempts: Infinity }).maxAttempts).toBe(Infinity);
    expect(withOptions(sip, { maxElapsedMs: Infinity, maxAttempts: 3 }).maxAttempts).toBe(3);
    // A policy that stops by attempts keeps them when its budget goes.
    expect(withOptions(exponential({ maxElapsedMs: 9, maxAttempts: 4 }), { maxElapsedMs: Infinity }).maxAttempts).toBe(
      4,
    );
    // One already endless on purpose stays so through any other option.
    const forever = exponential({ maxAttempts: Infinity });
    expect(withOptions(forever, { maxDelayMs: 50 }).maxAttempts).toBe(Infinity);
  });

  it('withOptions() validates like the constructors', () => {
    const b = exponential();
    expect(() => withOptions(b, { maxAttempts: 0 })).toThrow(/withOptions\(\): expected `maxAttempts`/);
    expect(() => withOptions(b, { maxDelayMs: -1 })).toThrow(RangeError);
    expect(() => withOptions(b, { maxIntervalMs: Number.NaN })).toThrow(RangeError);
    expect(() => withOptions(b, { maxElapsedMs: '5' as never })).toThrow(/`maxElapsedMs`/);
    expect(() => withOptions(b, { ceiling: 1.5 })).toThrow(/`ceiling`/);
    expect(() => withOptions(withOptions(b, { jitter: decorrelatedJitter }), { ceiling: 3 })).toThrow(/decorrelated/);
    expect(() => withOptions(b, { jitter: 'full' as never })).toThrow(/jitter: fullJitter/);
    expect(() => withOptions(b, { initialDelayMs: 5 } as never)).toThrow(/unknown option `initialDelayMs`/);
    expect(() => withOptions(b, 5 as never)).toThrow(/expected an options object, got 5/);
    expect(() => withOptions({ maxElapsedMs: 1, start: b.start } as never, {})).toThrow(
      /`backoff` to be a Backoff value/,
    );
  });
});

describe('defaults: jittered, capped and finite unless told otherwise', () => {
  it('exponential() is the default policy: 100 ms ×2, 20 s cap, full jitter, 5 attempts', () => {
    const b = exponential();
    expect(describePolicy(b, 10).rows.map((r) => [r.delayMs, r.minDelayMs, r.maxDelayMs])).toEqual([
      [100, 0, 100],
      [200, 0, 200],
      [400, 0, 400],
      [800, 0, 800],
    ]);
    expect(describeRow(b, 1_000).delayMs).toBe(20_000);
    expect([b.maxAttempts, b.maxElapsedMs]).toEqual([5, Infinity]);
    expect(String(b)).toBe(String(defaultBackoff));
    expect(b.toJSON()).toEqual(defaultBackoff.toJSON());
  });

  it('every curve draws full jitter unless given another jitter', () => {
    for (const b of [exponential(), linear(), constant(), sequence({ delaysMs: [100] })]) {
      expect(b[SEGMENTS][0]?.jitter).toBe(fullJitter);
      expect(run(b, 1, 0.5)).toEqual([50]);
    }
    expect(run(constant({ jitter: noJitter }), 1, 0.5)).toEqual([100]);
  });

  it('every curve stops after 5 attempts unless maxAttempts or a finite maxElapsedMs says otherwise', () => {
    for (const b of [exponential(), linear(), constant(), sequence({ delaysMs: [1] }), slotted({ slotMs: 1 })]) {
      expect(b.maxAttempts).toBe(5);
      expect(describePolicy(b, 10).stopsAfterAttempt).toBe(5);
      expect(run(b, 5, 0)[4]).toBe(-1);
    }
    expect(constant({ maxElapsedMs: 1_000 }).maxAttempts).toBe(Infinity);
    // An explicit Infinity budget is no budget: the 5 attempts still apply.
    expect(constant({ maxElapsedMs: Infinity }).maxAttempts).toBe(5);
    expect(constant({ maxAttempts: Infinity }).maxAttempts).toBe(Infinity);
    expect(constant({ maxAttempts: 2, maxElapsedMs: 1_000 }).maxAttempts).toBe(2);
  });

  it('exponential() caps at 20 s unless given maxDelayMs or maxIntervalMs; the other curves have no cap', () => {
    const far = (b: Backoff) => describeRow(b, 100).delayMs;
    expect(far(exponential())).toBe(20_000);
    expect(far(exponential({ maxDelayMs: 1_000 }))).toBe(1_000);
    expect(far(exponential({ maxDelayMs: Infinity }))).toBe(Number.MAX_SAFE_INTEGER);
    // An interval cap is the cap the caller chose: jitter may pass it, and no 20 s clamp applies.
    const interval = exponential({ maxIntervalMs: 60_000, jitter: proportionalJitter(0.5) });
    expect(describeRow(interval, 100)).toMatchObject({ delayMs: 60_000, maxDelayMs: 90_000 });
    expect(far(linear({ initialDelayMs: 1_000 }))).toBe(100_000);
  });

  it("p-retry's `retries` passed to a curve points to maxAttempts, which counts calls", () => {
    expect(() => exponential({ retries: 3 } as never)).toThrow(
      new TypeError(
        'exponential(): unknown option `retries`; use `maxAttempts`, which counts calls, the first included: retries + 1.',
      ),
    );
  });

  it('a cap given below the first wait is refused (every wait would be the cap: a swap, most likely); the default cap, an equal cap and withOptions() are not', () => {
    const fix = 'Raise it, or lower the first wait; constant({ delayMs: 0 }) retries without waiting.';
    expect(() => exponential({ initialDelayMs: 1_000, maxDelayMs: 10 })).toThrow(
      new RangeError(
        `exponential(): \`maxDelayMs\` (10 ms) is below the first wait (1 s), so every wait would be 10 ms. ${fix}`,
      ),
    );
    // The default first wait (100 ms) counts, and so does maxIntervalMs (Google's Builder refuses it too).
    expect(() => exponential({ maxIntervalMs: 50 })).toThrow(
      new RangeError(
        `exponential(): \`maxIntervalMs\` (50 ms) is below the first wait (100 ms), so every wait would be 50 ms. ${fix}`,
      ),
    );
    expect(() => linear({ initialDelayMs: 500, maxDelayMs: 499 })).toThrow(RangeError);
    expect(() => constant({ delayMs: 2_000, maxIntervalMs: 1_000 })).toThrow(RangeError);
    expect(() => sequence({ delaysMs: [300, 10], maxDelayMs: 200 })).toThrow(RangeError);
    // Equal is a constant wait the caller asked for; a first wait of 0 takes any cap.
    expect(delays(exponential({ initialDelayMs: 1_000, maxDelayMs: 1_000, jitter: noJitter }), 2)).toEqual([
      1_000, 1_000,
    ]);
    expect(delays(linear({ initialDelayMs: 0, incrementMs: 50, maxDelayMs: 0 }), 2)).toEqual([0, 0]);
    // The default 20 s cap bounds a longer first wait: not refused.
    expect(delays(exponential({ initialDelayMs: 30_000, jitter: noJitter }), 2)).toEqual([20_000, 20_000]);
    // withOptions() narrows as told, a preset included.
    expect(
      delays(withOptions(exponential({ initialDelayMs: 1_000, jitter: noJitter }), { maxDelayMs: 10 }), 2),
    ).toEqual([10, 10]);
    // A curve that draws its own waits (slotted) has no un-randomized first wait to compare.
    expect(() => slotted({ slotMs: 100, cwMin: 3, maxDelayMs: 50 })).not.toThrow();
  });

  it('a string or 0.x object jitter is refused with the import that replaces it', () => {
    const cases: [unknown, string][] = [
      ['full', 'fullJitter'],
      ['none', 'noJitter'],
      ['equal', 'equalJitter'],
      ['decorrelated', 'decorrelatedJitter'],
      [{ kind: 'proportional', factor: 0.5 }, 'proportionalJitter(…)'],
      [{ kind: 'additive', maxMs: 10 }, 'additiveJitter(…)'],
      ['fulll', 'fullJitter'],
      [{}, 'fullJitter'],
      [null, 'fullJitter'],
      // A draw alone, without bounds describePolicy() could read, is not a jitter value.
      [{ name: 'mine', draw: () => 1 }, 'fullJitter'],
    ];
    for (const [jitter, fix] of cases) {
      expect(() => exponential({ jitter: jitter as never })).toThrow(
        new TypeError(
          `exponential(): expected \`jitter\` to be a jitter value, got ${show(jitter)}. Import it from 'ebb': jitter: ${fix}.`,
        ),
      );
    }
    expect(() => constant({ jitter: 5 as never })).toThrow(TypeError);
  });
});

describe('a policy prints as the schedule it is', () => {
  it('String(): each stretch (curve, caps, jitter), then what stops it, in units a person reads', () => {
    const cases: [Backoff, string][] = [
      [exponential(), 'exponential 100 ms ×2, 20 s cap, full jitter, 5 attempts'],
      [
        exponential({
          initialDelayMs: 91.566,
          multiplier: 1.5,
          maxIntervalMs: 120_000,
          jitter: proportionalJitter(0.2),
        }),
        'exponential 91.6 ms ×1.5, 2 min interval cap, ±20 % jitter, 5 attempts',
      ],
      [
        exponential({
          initialDelayMs: 1_000,
          ceiling: 10,
          maxDelayMs: 32_000,
          jitter: additiveJitter(1_500),
          maxAttempts: 1,
        }),
        'exponential 1 s ×2, ceiling 10, 32 s cap, +0–1.5 s jitter, 1 attempt',
      ],
      [
        linear({ initialDelayMs: 100, incrementMs: 50, jitter: equalJitter }),
        'linear 100 ms +50 ms, equal jitter, 5 attempts',
      ],
      [constant({ delayMs: 0, jitter: noJitter, maxElapsedMs: 90_000 }), 'constant 0 ms, no jitter, within 1.5 min'],
      [
        constant({ delayMs: 5, maxAttempts: 3, maxElapsedMs: 60_000 }),
        'constant 5 ms, full jitter, 3 attempts within 1 min',
      ],
      [sequence({ delaysMs: [0, 1_000, 5_000], maxAttempts: Infinity }), 'sequence 0 ms 1 s 5 s, full jitter, forever'],
      [
        slotted({ slotMs: 0.0512, maxAttempts: 16 }),
        'slotted 51.2 µs slots, CW 0…1023, random slot count, 16 attempts',
      ],
      [
        exponential({ initialDelayMs: 5, multiplier: 3, maxDelayMs: 2_000, jitter: decorrelatedJitter }),
        'exponential 5 ms ×3, 2 s cap, decorrelated jitter, 5 attempts',
      ],
      [
        chain(
          constant({ delayMs: 1_000, jitter: noJitter, maxAttempts: 3 }),
          exponential({ initialDelayMs: 1_600, multiplier: 1.6, maxAttempts: Infinity }),
        ),
        'constant 1 s, no jitter, 2 waits, then exponential 1.6 s ×1.6, 20 s cap, full jitter, forever',
      ],
    ];
    for (const [b, text] of cases) {
      expect(String(b)).toBe(text);
      expect(`${b}`).toBe(text);
    }
  });

  it("Node's util.inspect (and console.log) show the same line as Backoff { … }", () => {
    expect(inspect(exponential())).toBe('Backoff { exponential 100 ms ×2, 20 s cap, full jitter, 5 attempts }');
    expect(inspect({ backoff: constant({ jitter: noJitter }) })).toBe(
      '{ backoff: Backoff { constant 100 ms, no jitter, 5 attempts } }',
    );
  });

  it('toJSON(): the options that build it, jitter by name, only the limits that are set', () => {
    expect(exponential().toJSON()).toEqual({
      type: 'exponential',
      initialDelayMs: 100,
      multiplier: 2,
      jitter: 'full',
      maxDelayMs: 20_000,
      maxAttempts: 5,
    });
    const b = linear({
      initialDelayMs: 10,
      incrementMs: 5,
      ceiling: 4,
      maxIntervalMs: 25,
      jitter: proportionalJitter(0.2),
      maxAttempts: Infinity,
      maxElapsedMs: 3_000,
    });
    expect(b.toJSON()).toEqual({
      type: 'linear',
      initialDelayMs: 10,
      incrementMs: 5,
      jitter: 'proportional:0.2',
      ceiling: 4,
      maxIntervalMs: 25,
      maxAttempts: Infinity,
      maxElapsedMs: 3_000,
    });
    // JSON has no Infinity: an endless maxAttempts is null there.
    expect(JSON.parse(JSON.stringify(b))).toMatchObject({ maxAttempts: null, maxElapsedMs: 3_000 });
    expect(JSON.stringify(slotted({ slotMs: 1, cwMax: 7 }))).toBe(
      '{"type":"slotted","slotMs":1,"cwMin":0,"cwMax":7,"maxAttempts":5}',
    );
    // A slotted policy takes no jitter option, so its JSON names none (not even as undefined).
    expect(slotted({ slotMs: 1 }).toJSON()).toStrictEqual({
      type: 'slotted',
      slotMs: 1,
      cwMin: 0,
      cwMax: 1023,
      maxAttempts: 5,
    });
    const c = chain(
      constant({ delayMs: 1, jitter: noJitter, maxAttempts: 2 }),
      constant({ jitter: additiveJitter(5) }),
    );
    expect(c.toJSON()).toEqual({
      chain: [
        { type: 'constant', delayMs: 1, jitter: 'none', rows: 1 },
        { type: 'constant', delayMs: 100, jitter: 'additive:5' },
      ],
      maxAttempts: 6,
    });
  });

  it("toJSON()'s jitter names read back through jitterNamed()", () => {
    for (const j of [
      noJitter,
      fullJitter,
      equalJitter,
      decorrelatedJitter,
      proportionalJitter(0.25),
      additiveJitter(7),
    ]) {
      const named = jitterNamed(String(exponential({ jitter: j }).toJSON().jitter));
      expect(named.name).toBe(j.name);
      expect(run(exponential({ jitter: named }), 3, 0.3)).toEqual(run(exponential({ jitter: j }), 3, 0.3));
    }
  });
});

describe('Backoff validation messages name the function, the option, the value and the fix', () => {
  const ceiling = 'It is the failure count after which delays stop growing, such as 10.';
  const attempts = '`maxAttempts` counts calls, the first included: 3 means one call and two retries.';
  const cases: [string, () => unknown, Error][] = [
    [
      'withOptions maxAttempts 0',
      () => withOptions(exponential(), { maxAttempts: 0 }),
      new RangeError(
        `withOptions(): expected \`maxAttempts\` to be a whole number >= 1 (or Infinity), got 0. ${attempts}`,
      ),
    ],
    [
      'withOptions maxElapsedMs null',
      () => withOptions(exponential(), { maxElapsedMs: null as never }),
      new TypeError(
        'withOptions(): expected `maxElapsedMs` to be a number >= 0 (or Infinity for no limit), got null. Leave it out for no limit.',
      ),
    ],
    [
      'withOptions maxDelayMs -1',
      () => withOptions(exponential(), { maxDelayMs: -1 }),
      new RangeError(
        'withOptions(): expected `maxDelayMs` to be a number >= 0 (or Infinity for no limit), got -1. It caps every wait, such as 20000 for 20 s; Infinity for none.',
      ),
    ],
    [
      'withOptions maxIntervalMs NaN',
      () => withOptions(exponential(), { maxIntervalMs: Number.NaN }),
      new RangeError(
        'withOptions(): expected `maxIntervalMs` to be a number >= 0 (or Infinity for no limit), got NaN. Leave it out for no limit.',
      ),
    ],
    [
      'withOptions ceiling 0',
      () => withOptions(exponential(), { ceiling: 0 }),
      new RangeError(`withOptions(): expected \`ceiling\` to be a whole number >= 1 (or Infinity), got 0. ${ceiling}`),
    ],
    [
      'withOptions ceiling on a chain',
      () => withOptions(chain(constant({ maxAttempts: 2 }), constant()), { ceiling: 2 }),
      new TypeError('withOptions(): a chained policy has no single ceiling; set `ceiling` on its parts.'),
    ],
    [
      'slotted with a jitter',
      () => withOptions(slotted({ slotMs: 1 }), { jitter: fullJitter }),
      new TypeError('withOptions(): a slotted policy draws its own random slot count; `jitter` cannot apply to it.'),
    ],
    [
      'decorrelated on constant',
      () => withOptions(constant(), { jitter: decorrelatedJitter }),
      new TypeError(
        'withOptions(): decorrelated jitter grows from `initialDelayMs` by `multiplier`, so it needs an exponential curve, not constant.',
      ),
    ],
    [
      'decorrelated on constant, at construction',
      () => constant({ jitter: decorrelatedJitter }),
      new TypeError(
        'constant(): decorrelated jitter grows from `initialDelayMs` by `multiplier`, so it needs an exponential curve, not constant.',
      ),
    ],
    [
      'decorrelated from 0',
      () => withOptions(exponential({ initialDelayMs: 0 }), { jitter: decorrelatedJitter }),
      new RangeError(
        'withOptions(): expected `initialDelayMs` to be a number > 0 with decorrelated jitter, got 0. Decorrelated jitter never grows from 0.',
      ),
    ],
    [
      'decorrelated with a ceiling',
      () => withOptions(exponential({ ceiling: 3 }), { jitter: decorrelatedJitter }),
      new TypeError(
        'withOptions(): decorrelated jitter has no un-randomized curve for `ceiling` to act on; cap it with `maxDelayMs`.',
      ),
    ],
    [
      'decorrelated with maxIntervalMs',
      () => withOptions(exponential({ jitter: decorrelatedJitter }), { maxIntervalMs: 3 }),
      new TypeError(
        'withOptions(): decorrelated jitter has no un-randomized curve for `maxIntervalMs` to act on; cap it with `maxDelayMs`.',
      ),
    ],
    [
      'decorrelated with both',
      () => withOptions(exponential({ ceiling: 3, maxIntervalMs: 300 }), { jitter: decorrelatedJitter }),
      new TypeError(
        'withOptions(): decorrelated jitter has no un-randomized curve for `ceiling` to act on; cap it with `maxDelayMs`.',
      ),
    ],
    [
      'withOptions of a non-Backoff',
      () => withOptions(5 as never, {}),
      new TypeError(
        'withOptions(): expected `backoff` to be a Backoff value, got 5. Build one with exponential() or take a preset.',
      ),
    ],
    [
      'chain with an endless first',
      () => chain(constant({ maxAttempts: Infinity }), constant()),
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
      new TypeError(
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

  it.each(Object.entries(presets))(
    'start(5) of the preset %s is refused the same way, before any draw',
    (_, policy) => {
      expect(() => policy.start(5 as never)).toThrow(
        new TypeError(
          'start(): expected `random` to be a function returning a number in [0, 1), got 5. Leave it out for Math.random.',
        ),
      );
    },
  );

  it('random() outside [0, 1): a RangeError for a number, a TypeError for anything else', () => {
    const tail = 'expected a number in [0, 1). A Random works like Math.random; seeded(42) gives a reproducible one.';
    const full = exponential({ jitter: fullJitter });
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
    const tiny = constant({ delayMs: 1.5e-323, jitter: equalJitter });
    expect(run(tiny, 1, NEXT_BELOW_ONE)).toEqual([1.5e-323]);
    expect(run(tiny, 1, 0)).toEqual([1e-323]);
  });

  it('proportional jitter: d · (1 − f + 2f · r) at both ends of r', () => {
    const b = constant({ delayMs: 100, jitter: proportionalJitter(0.25) });
    expect(run(b, 1, 0)).toEqual([75]);
    expect(run(b, 1, 0.5)).toEqual([100]);
    expect(run(b, 1, 0.75)).toEqual([112.5]);
  });

  it('decorrelated draws grow from the previous delay, capped by the envelope initial · m^k', () => {
    const b = exponential({ initialDelayMs: 10, multiplier: 2, jitter: decorrelatedJitter });
    // r = 0.5: U[10, 20] → 15; U[10, 30] → 20; U[10, 40] → 25.
    expect(run(b, 3, 0.5)).toEqual([15, 20, 25]);
    // maxDelayMs clamps after the draw.
    expect(run(withOptions(b, { maxDelayMs: 18 }), 3, 0.5)).toEqual([15, 18, 18]);
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
    const c = chain(
      constant({ delayMs: 0, jitter: noJitter, maxAttempts: 3 }),
      exponential({ initialDelayMs: 100, jitter: noJitter, maxAttempts: 3 }),
    );
    expect(run(c, 6)).toEqual([0, 0, 100, 200, -1, -1]);
    expect(c.maxAttempts).toBe(5);
    expect(describePolicy(c, 10).rows.map((r) => r.delayMs)).toEqual([0, 0, 100, 200]);
  });

  it('chains chains, and restarts decorrelated state in the next segment', () => {
    const inner = chain(
      constant({ delayMs: 1, jitter: noJitter, maxAttempts: 2 }),
      constant({ delayMs: 2, jitter: noJitter, maxAttempts: 2 }),
    );
    const outer = chain(inner, exponential({ initialDelayMs: 5, multiplier: 3, jitter: decorrelatedJitter }));
    expect(run(outer, 4, 0.5)).toEqual([1, 2, 10, 17.5]);
  });

  it('takes the time budget of second', () => {
    const c = chain(constant({ maxAttempts: 2 }), constant({ maxElapsedMs: 500 }));
    expect(c.maxElapsedMs).toBe(500);
    expect(c.maxAttempts).toBe(Infinity);
  });

  it('refuses a first part that never ends or has its own budget', () => {
    expect(() => chain(constant({ maxAttempts: Infinity }), constant())).toThrow(/never runs out of attempts/);
    expect(() => chain(constant({ maxAttempts: 2, maxElapsedMs: 5 }), constant())).toThrow(/time budget/);
    expect(() => chain({} as Backoff, constant())).toThrow(/`first` to be a Backoff value/);
  });

  it('a chained policy has no single ceiling', () => {
    const c = chain(constant({ maxAttempts: 2 }), constant());
    expect(() => withOptions(c, { ceiling: 2 })).toThrow(/chained policy/);
    // …but the per-segment options apply to every part.
    expect(delays(withOptions(c, { maxDelayMs: 50 }), 2)).toEqual([50, 50]);
  });

  it('withOptions() of a chained policy runs through its parts', () => {
    const c = chain(
      constant({ delayMs: 1, jitter: noJitter, maxAttempts: 2 }),
      constant({ delayMs: 2, jitter: noJitter, maxAttempts: 3 }),
    );
    expect(run(withOptions(c, { maxDelayMs: 50 }), 4)).toEqual([1, 2, 2, -1]);
    expect(run(withOptions(c, { maxAttempts: 3 }), 3)).toEqual([1, 2, -1]);
  });

  it('cuts a chained first part at its own maxAttempts, dropping the rows it never reaches', () => {
    const inner = chain(
      constant({ delayMs: 1, jitter: noJitter, maxAttempts: 3 }),
      constant({ delayMs: 2, jitter: noJitter, maxAttempts: 5 }),
    );
    expect(inner.maxAttempts).toBe(7);
    const c = chain(withOptions(inner, { maxAttempts: 3 }), constant({ delayMs: 9, jitter: noJitter, maxAttempts: 3 }));
    expect(run(c, 6)).toEqual([1, 1, 9, 9, -1, -1]);
    expect(c[SEGMENTS].map((s) => s.rows)).toEqual([2, Infinity]);
    expect(c.maxAttempts).toBe(5);
    // The end is second's: its endless maxAttempts, its attempts, its time budget.
    expect(chain(constant({ maxAttempts: 2 }), constant({ maxAttempts: Infinity })).maxAttempts).toBe(Infinity);
    expect(chain(constant({ maxAttempts: 2 }), constant()).maxAttempts).toBe(6);
    expect(chain(constant({ maxAttempts: 2 }), constant({ maxElapsedMs: 50 })).maxElapsedMs).toBe(50);
  });

  it('a first part of one attempt contributes no rows', () => {
    const c = chain(slotted({ slotMs: 1, maxAttempts: 1 }), constant({ delayMs: 7, jitter: noJitter }));
    expect(c[SEGMENTS].length).toBe(1);
    expect(c.start(always(0)).next()).toBe(7);
  });
});
