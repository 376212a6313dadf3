import { expect, it, describe as suite } from 'vitest';
import { seeded } from '../core/random.js';
import { constant } from './constant.js';
import { MAX_ROWS } from './describe.js';
import { exponential } from './exponential.js';
import { presets } from './presets.js';
import { sample } from './sample.js';
import { always } from './test-helpers.js';

suite('sample', () => {
  it('returns the delays a run would sleep, stopping at maxAttempts', () => {
    expect(sample(exponential({ initialDelayMs: 10, maxAttempts: 4 }))).toEqual([10, 20, 40]);
  });

  it('stops before a delay that would end past the time budget (never sleeps past the deadline)', () => {
    // 100 + 200 + 400 = 700 <= 1000; the next (800) would end at 1500.
    expect(sample(exponential({ initialDelayMs: 100, maxElapsedMs: 1_000 }), { count: 100 })).toEqual([100, 200, 400]);
    // exactly on the deadline is allowed
    expect(sample(exponential({ initialDelayMs: 100, maxElapsedMs: 700 }), { count: 100 })).toEqual([100, 200, 400]);
  });

  it('count caps the number of delays', () => {
    expect(sample(constant({ delayMs: 1 }), { count: 3 })).toEqual([1, 1, 1]);
  });

  it('random drives the jitter, so a seed reproduces a run', () => {
    const b = exponential({ jitter: 'full', maxAttempts: 6 });
    expect(sample(b, { random: always(0.5) })).toEqual([50, 100, 200, 400, 800]);
    expect(sample(b, { random: seeded(9) })).toEqual(sample(b, { random: seeded(9) }));
    expect(sample(b, { random: seeded(9) })).not.toEqual(sample(b, { random: seeded(10) }));
  });

  it('asks for count when the policy may never stop', () => {
    expect(() => sample(constant({ delayMs: 0, maxElapsedMs: 10 }))).toThrow(/pass `count`/);
    expect(() => sample(constant(), { count: Infinity })).toThrow(/`count`/);
    expect(() => sample(constant(), { count: -1 })).toThrow(RangeError);
  });

  it('refuses what would never return: more than MAX_ROWS delays, by count or by maxAttempts', () => {
    expect(sample(constant({ delayMs: 0 }), { count: MAX_ROWS })).toHaveLength(MAX_ROWS);
    expect(() => sample(constant(), { count: MAX_ROWS + 1 })).toThrow(
      `sample(): this would draw ${MAX_ROWS + 1} delays, more than ${MAX_ROWS}; pass a smaller \`count\``,
    );
    expect(() => sample(constant(), { count: 2 ** 53 })).toThrow(RangeError);
    expect(() => sample(constant({ maxAttempts: 2 ** 53 - 1 }))).toThrow(/more than 1000000; pass a smaller `count`/);
    // A count above the limit is fine when maxAttempts ends the run first.
    expect(sample(constant({ maxAttempts: 3 }), { count: 2 ** 53 - 1 })).toHaveLength(2);
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
