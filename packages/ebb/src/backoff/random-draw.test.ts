import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seeded } from '../core/random.js';
import { virtualClock } from '../core/virtual-clock.js';
import { RetryError } from '../retry/errors.js';
import { retry } from '../retry/retry.js';
import type { Backoff } from './backoff.js';
import { chain } from './chain.js';
import { constant } from './constant.js';
import { decorrelatedJitter } from './decorrelated.js';
import { exponential } from './exponential.js';
import { additiveJitter } from './jitter-additive.js';
import { equalJitter } from './jitter-equal.js';
import { fullJitter } from './jitter-full.js';
import { noJitter } from './jitter-none.js';
import { proportionalJitter } from './jitter-proportional.js';
import { presets } from './presets.js';
import { sample } from './sample.js';
import { slotted } from './slotted.js';
import { NEXT_BELOW_ONE } from './test-helpers.js';

/** Every way a policy draws: each jitter kind, the slotted window, decorrelated jitter, a chain. */
const drawing: Record<string, Backoff> = {
  full: exponential({ initialDelayMs: 100, jitter: fullJitter }),
  equal: exponential({ initialDelayMs: 100, jitter: equalJitter }),
  proportional: exponential({ initialDelayMs: 100, jitter: proportionalJitter(0.5) }),
  additive: exponential({ initialDelayMs: 100, jitter: additiveJitter(50) }),
  decorrelated: exponential({ initialDelayMs: 100, multiplier: 3, jitter: decorrelatedJitter, maxDelayMs: 5_000 }),
  slotted: slotted({ slotMs: 1, cwMin: 15 }),
  chain: chain(constant({ delayMs: 0, jitter: noJitter, maxAttempts: 2 }), exponential({ jitter: fullJitter })),
  googleHttpClient: presets.googleHttpClient,
};

const hostile: [value: unknown, shown: string, type: typeof TypeError | typeof RangeError][] = [
  [Number.NaN, 'NaN', RangeError],
  [-0.5, '-0.5', RangeError],
  [1, '1', RangeError],
  [1.5, '1.5', RangeError],
  [Infinity, 'Infinity', RangeError],
  [-Infinity, '-Infinity', RangeError],
  [-Number.MIN_VALUE, '-5e-324', RangeError],
  ['0.5', '"0.5"', TypeError],
  [null, 'null', TypeError],
  [undefined, 'undefined', TypeError],
  [{ valueOf: () => 0.5 }, 'an object', TypeError],
  [5n, '5n', TypeError],
];

const message = (shown: string) => `random() returned ${shown}; expected a number in [0, 1)`;

describe('a Random outside [0, 1): refused by name, never a NaN or negative delay', () => {
  it('makes the draw throw a named error, for every kind of draw and every bad value', () => {
    for (const [name, policy] of Object.entries(drawing)) {
      for (const [value, shown, type] of hostile) {
        const run = policy.start(() => value as number);
        let thrown: unknown;
        try {
          // A chain's first row is constant (no draw); the second draws.
          for (let i = 0; i < 2; i++) run.next();
        } catch (error) {
          thrown = error;
        }
        expect(thrown, `${name} with ${shown}`).toBeInstanceOf(type);
        expect((thrown as Error).message, name).toContain(message(shown));
      }
    }
  });

  it('lets the largest double below 1 and both zeros through; -0 becomes +0', () => {
    for (const policy of Object.values(drawing)) {
      for (const r of [0, -0, NEXT_BELOW_ONE]) {
        const run = policy.start(() => r);
        // Four waits: the default 5 attempts of most of these policies.
        for (let i = 0; i < 4; i++) {
          const d = run.next();
          expect(Number.isFinite(d) && d >= 0).toBe(true);
          expect(Object.is(d, -0)).toBe(false);
        }
      }
    }
  });

  it('leaves a seeded() generator unaffected: the same delays as the formula fed the same stream', () => {
    const policy = exponential({ initialDelayMs: 100, multiplier: 2, jitter: fullJitter, maxAttempts: 9 });
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const stream = seeded(seed);
        const expected = Array.from({ length: 8 }, (_, i) => stream() * 100 * 2 ** i);
        expect(sample(policy, { random: seeded(seed) })).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });

  it('makes retry() reject with that error, neither a 2^53 ms wait (NaN) nor a false give-up (-0.5)', async () => {
    const backoff = constant({ delayMs: 100, jitter: fullJitter, maxAttempts: 3 });
    for (const [value, shown, type] of hostile) {
      const clock = virtualClock(1_000);
      let calls = 0;
      const done = retry(
        () => {
          calls++;
          throw new Error('down');
        },
        { backoff, clock, random: () => value as number },
      ).then(
        () => 'resolved',
        (error: unknown) => error,
      );
      await clock.runAll(10);
      const error = await done;
      expect(error, shown).toBeInstanceOf(type);
      expect(error).not.toBeInstanceOf(RetryError);
      expect((error as Error).message).toContain(message(shown));
      expect(calls).toBe(1);
      expect(clock.now()).toBe(1_000);
    }
  });

  it("passes a Random's own exception through unchanged, as the operation's rejection", async () => {
    const oops = new Error('entropy ran out');
    const clock = virtualClock();
    const done = retry(
      () => {
        throw new Error('down');
      },
      {
        backoff: presets.default,
        clock,
        random: () => {
          throw oops;
        },
      },
    ).catch((error: unknown) => error);
    await clock.runAll(10);
    expect(await done).toBe(oops);
  });

  it('makes sample() throw the same error', () => {
    expect(() => sample(presets.default, { random: () => Number.NaN })).toThrow(RangeError);
    expect(() => sample(presets.default, { random: () => Number.NaN })).toThrow(message('NaN'));
  });

  it('rejects a `random` that is not a function where the run starts, naming the option', () => {
    expect(() => presets.default.start(0.5 as never)).toThrow(TypeError);
    expect(() => presets.default.start(0.5 as never)).toThrow(/start\(\): expected `random` to be a function/);
    expect(() => sample(presets.default, { random: 'x' as never })).toThrow(/`random`/);
  });
});
