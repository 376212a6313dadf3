import { expect, it, describe as suite } from 'vitest';
import { seeded } from '../core/random.js';
import { constant } from './constant.js';
import { exponential } from './exponential.js';
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
});
