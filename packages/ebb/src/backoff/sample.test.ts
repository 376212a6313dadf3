import { describe, expect, it } from 'vitest';
import { seeded } from '../core/random.js';
import { constant } from './constant.js';
import { MAX_ROWS } from './describe.js';
import { exponential } from './exponential.js';
import { fullJitter } from './jitter-full.js';
import { noJitter } from './jitter-none.js';
import { presets } from './presets.js';
import { sample } from './sample.js';
import { always } from './test-helpers.js';

describe('sample', () => {
  it('returns the delays a run would sleep, stopping at maxAttempts', () => {
    expect(sample(exponential({ initialDelayMs: 10, jitter: noJitter, maxAttempts: 4 }))).toEqual([10, 20, 40]);
    // The default: 5 attempts, so 4 delays.
    expect(sample(exponential(), { random: always(0.5) })).toEqual([50, 100, 200, 400]);
  });

  it('stops before a delay that would end past the time budget (never sleeps past the deadline)', () => {
    // 100 + 200 + 400 = 700 <= 1000; the next (800) would end at 1500.
    const within = (maxElapsedMs: number) => exponential({ initialDelayMs: 100, jitter: noJitter, maxElapsedMs });
    expect(sample(within(1_000), { count: 100 })).toEqual([100, 200, 400]);
    // exactly on the deadline is allowed
    expect(sample(within(700), { count: 100 })).toEqual([100, 200, 400]);
  });

  it('count caps the number of delays', () => {
    expect(sample(constant({ delayMs: 1, jitter: noJitter, maxAttempts: Infinity }), { count: 3 })).toEqual([1, 1, 1]);
    expect(sample(constant({ delayMs: 1, jitter: noJitter }), { count: 3 })).toEqual([1, 1, 1]);
    // maxAttempts ends the run before the count.
    expect(sample(constant({ delayMs: 1, jitter: noJitter }), { count: 9 })).toEqual([1, 1, 1, 1]);
  });

  it('random drives the jitter, so a seed reproduces a run', () => {
    const b = exponential({ jitter: fullJitter, maxAttempts: 6 });
    expect(sample(b, { random: always(0.5) })).toEqual([50, 100, 200, 400, 800]);
    expect(sample(b, { random: seeded(9) })).toEqual(sample(b, { random: seeded(9) }));
    expect(sample(b, { random: seeded(9) })).not.toEqual(sample(b, { random: seeded(10) }));
  });

  it('asks for count when the policy may never stop', () => {
    expect(() => sample(constant({ delayMs: 0, maxElapsedMs: 10 }))).toThrow(/pass `count`/);
    const forever = constant({ maxAttempts: Infinity });
    expect(() => sample(forever)).toThrow(/pass `count`/);
    expect(() => sample(forever, { count: Infinity })).toThrow(/`count`/);
    expect(() => sample(constant(), { count: -1 })).toThrow(RangeError);
  });

  it('refuses what would never return: more than MAX_ROWS delays, by count or by maxAttempts', () => {
    const forever = constant({ delayMs: 0, maxAttempts: Infinity });
    expect(sample(forever, { count: MAX_ROWS })).toHaveLength(MAX_ROWS);
    expect(() => sample(forever, { count: MAX_ROWS + 1 })).toThrow(
      `sample(): this would draw ${MAX_ROWS + 1} delays, more than ${MAX_ROWS}; pass a smaller \`count\``,
    );
    expect(() => sample(forever, { count: 2 ** 53 })).toThrow(RangeError);
    expect(() => sample(constant({ maxAttempts: 2 ** 53 - 1 }))).toThrow(/more than 1000000; pass a smaller `count`/);
    // A count above the limit is fine when maxAttempts ends the run first.
    expect(sample(constant({ maxAttempts: 3 }), { count: 2 ** 53 - 1 })).toHaveLength(2);
  });

  it('names the argument, the value and the fix in each message', () => {
    const policy = 'Build one with exponential() or take one from presets.';
    expect(() => sample(5 as never)).toThrow(
      new TypeError(`sample(): expected \`backoff\` to be a backoff policy, got 5. ${policy}`),
    );
    expect(() => sample({ start: 5 } as never)).toThrow(
      new TypeError(`sample(): expected \`backoff\` to be a backoff policy, got an object. ${policy}`),
    );
    expect(() => sample(presets.default, { foo: 1 } as never)).toThrow(
      new TypeError('sample(): unknown option `foo`. Known options: count, random.'),
    );
    expect(() => sample(exponential({ maxAttempts: Infinity }))).toThrow(
      new TypeError('sample(): this policy has no `maxAttempts`, so it may never stop; pass `count`.'),
    );
    expect(() => sample(exponential({ maxAttempts: Infinity }), { count: Infinity })).toThrow(
      new RangeError(
        'sample(): expected `count` to be a whole number >= 0, got Infinity. It is the number of delays, such as 10.',
      ),
    );
    expect(() => sample(constant({ maxAttempts: 2_000_000 }))).toThrow(
      new RangeError(
        'sample(): this would draw 1999999 delays, more than 1000000; pass a smaller `count`, such as 10.',
      ),
    );
    expect(() => sample(presets.default, { random: 5 as never })).toThrow(
      new TypeError(
        'sample(): expected `random` to be a function returning a number in [0, 1), got 5. Leave it out for Math.random, or pass seeded(1) from ebb for a repeatable run.',
      ),
    );
    expect(() => sample(presets.default, { random: null as never })).toThrow(TypeError);
    // A policy is an object: a function that happens to carry `start` is refused, not run.
    const callable = Object.assign(() => undefined, { maxElapsedMs: Infinity, start: () => ({ next: () => 1 }) });
    expect(() => sample(callable as never, { count: 1 })).toThrow(
      new TypeError(`sample(): expected \`backoff\` to be a backoff policy, got a function. ${policy}`),
    );
  });

  it('takes count: Infinity where maxAttempts ends the run, and hands a custom policy the elapsed time', () => {
    const three = exponential({ maxAttempts: 3, jitter: noJitter });
    expect(sample(three, { count: Infinity })).toEqual([100, 200]);
    expect(sample(three, { count: 1 })).toEqual([100]);
    expect(sample(three, { count: 0 })).toEqual([]);
    const seen: unknown[] = [];
    const custom = {
      maxElapsedMs: 10,
      start: () => ({
        next: (elapsed?: number) => {
          seen.push(elapsed);
          return 4;
        },
      }),
    };
    // Waits of 4 ms: 4 and 8 end within 10 ms, 12 would not.
    expect(sample(custom, { count: 5 })).toEqual([4, 4]);
    expect(seen).toEqual([0, 4, 8]);
    // A custom policy's zero wait is a wait, not a stop.
    const zero = { maxElapsedMs: Infinity, start: () => ({ next: () => 0 }) };
    expect(sample(zero, { count: 2 })).toEqual([0, 0]);
  });

  it("checks its options and a custom policy's waits, naming them", () => {
    expect(() => sample(presets.default, null as never)).toThrow(/options object/);
    expect(() => sample(presets.default, { cuont: 3 } as never)).toThrow(/unknown option `cuont`/);
    expect(() => sample(null as never, { count: 1 })).toThrow(/`backoff`/);
    const custom = (value: unknown) => ({ maxElapsedMs: Infinity, start: () => ({ next: () => value as number }) });
    expect(() => sample(custom(Number.NaN), { count: 3 })).toThrow(
      new RangeError('sample(): backoff.next() returned NaN; expected a finite number of ms >= 0, or -1 to stop.'),
    );
    expect(() => sample(custom(Infinity), { count: 3 })).toThrow(RangeError);
    expect(() => sample(custom('5000'), { count: 3 })).toThrow(TypeError);
    expect(() => sample(custom(undefined), { count: 3 })).toThrow(/returned undefined/);
    expect(sample(custom(7), { count: 3 })).toEqual([7, 7, 7]);
    expect(sample(custom(-1), { count: 3 })).toEqual([]);
  });
});
