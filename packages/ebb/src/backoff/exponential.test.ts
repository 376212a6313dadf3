import { describe, expect, it } from 'vitest';
import { describePolicy } from './describe.js';
import { exponential } from './exponential.js';
import { fullJitter } from './jitter-full.js';
import { noJitter } from './jitter-none.js';
import { proportionalJitter } from './jitter-proportional.js';
import { SEGMENTS } from './segment.js';
import { always, delays, NEXT_BELOW_ONE, run } from './test-helpers.js';
import { withOptions } from './with-options.js';

describe('exponential', () => {
  it('defaults to 100 ms ×2, full jitter, 20 s cap, 5 attempts, no time budget', () => {
    const b = exponential();
    expect(run(b, 6)).toEqual([50, 100, 200, 400, -1, -1]);
    expect(delays(b, 4)).toEqual([100, 200, 400, 800]);
    expect(delays(withOptions(b, { maxAttempts: Infinity }), 10).slice(7)).toEqual([12_800, 20_000, 20_000]);
    expect(b.maxAttempts).toBe(5);
    expect(b.maxElapsedMs).toBe(Infinity);
  });

  it('initialDelayMs and multiplier shape the curve', () => {
    expect(delays(exponential({ initialDelayMs: 500, multiplier: 1.5 }), 4)).toEqual([500, 750, 1125, 1687.5]);
    expect(delays(exponential({ initialDelayMs: 3, multiplier: 3 }), 4)).toEqual([3, 9, 27, 81]);
  });

  it('ceiling truncates the growth: rows after it repeat it', () => {
    expect(delays(exponential({ initialDelayMs: 1, ceiling: 3, maxAttempts: 7 }), 6)).toEqual([1, 2, 4, 4, 4, 4]);
  });

  it('maxIntervalMs caps the curve but lets proportional jitter exceed it', () => {
    const b = exponential({ initialDelayMs: 100, maxIntervalMs: 250, jitter: proportionalJitter(0.5) });
    expect(delays(b, 4)).toEqual([100, 200, 250, 250]);
    expect(run(b, 4, NEXT_BELOW_ONE)[3]).toBeCloseTo(375, 9);
  });

  it('maxDelayMs caps the curve and clamps the jittered delay', () => {
    const b = exponential({ initialDelayMs: 100, maxDelayMs: 250, jitter: proportionalJitter(0.5) });
    expect(delays(b, 4)).toEqual([100, 200, 250, 250]);
    expect(run(b, 4, NEXT_BELOW_ONE)[3]).toBe(250);
    expect(run(b, 4, 0)[3]).toBe(125);
  });

  it('jitter randomizes each delay', () => {
    const b = exponential({ initialDelayMs: 100, jitter: fullJitter });
    expect(run(b, 3, 0.25)).toEqual([25, 50, 100]);
  });

  it('maxAttempts counts calls: 3 attempts give 2 waits, then -1', () => {
    expect(run(exponential({ maxAttempts: 3, jitter: noJitter }), 4)).toEqual([100, 200, -1, -1]);
    expect(run(exponential({ maxAttempts: 1 }), 1)).toEqual([-1]);
    expect(describePolicy(exponential({ maxAttempts: 3 }), 10).stopsAfterAttempt).toBe(3);
  });

  it('maxElapsedMs is carried on the value for the executor', () => {
    expect(exponential({ maxElapsedMs: 5_000 }).maxElapsedMs).toBe(5_000);
  });

  it('never overflows: huge rows saturate instead of reaching Infinity or NaN', () => {
    const zero = exponential({ initialDelayMs: 0, multiplier: 10, maxAttempts: Infinity });
    expect(describePolicy(zero, 2000).rows.every((r) => r.delayMs === 0)).toBe(true);
    const big = exponential({ initialDelayMs: 1e300, multiplier: 1e10, maxDelayMs: Infinity, maxAttempts: Infinity });
    const it2 = big.start(always(NEXT_BELOW_ONE));
    for (let i = 0; i < 2000; i++) expect(Number.isFinite(it2.next())).toBe(true);
  });

  it('rejects bad options at construction, naming them', () => {
    expect(() => exponential({ multiplier: 0.5 })).toThrow(/`multiplier` to be a finite number >= 1, got 0.5/);
    expect(() => exponential({ multiplier: Infinity })).toThrow(RangeError);
    expect(() => exponential({ initialDelayMs: -1 })).toThrow(/`initialDelayMs`.*got -1/);
    expect(() => exponential({ initialDelayMs: Number.NaN })).toThrow(RangeError);
    expect(() => exponential({ maxAttempts: 2.5 })).toThrow(/`maxAttempts`.*got 2.5/);
    expect(() => exponential({ maxAttempts: 0 })).toThrow(RangeError);
    expect(() => exponential({ ceiling: 0 })).toThrow(/`ceiling`/);
    expect(() => exponential({ maxDelayMs: -5 })).toThrow(/`maxDelayMs`/);
    expect(() => exponential({ maxElapsedMs: Number.NaN })).toThrow(/`maxElapsedMs`/);
    expect(() => exponential({ jitter: 'fulll' as never })).toThrow(/`jitter`.*"fulll"/);
    expect(() => exponential({ initialDelay: 5 } as object)).toThrow(/unknown option `initialDelay`/);
    expect(() => exponential(7 as unknown as object)).toThrow(TypeError);
  });

  it('names the function, the option, the value and the fix in each message', () => {
    const cases: [object, Error][] = [
      [
        { multiplier: 0.5 },
        new RangeError(
          'exponential(): expected `multiplier` to be a finite number >= 1, got 0.5. Use 1 for a constant delay, or a growth factor such as 2.',
        ),
      ],
      [
        { multiplier: Infinity },
        new RangeError(
          'exponential(): expected `multiplier` to be a finite number >= 1, got Infinity. Use 1 for a constant delay, or a growth factor such as 2.',
        ),
      ],
      [
        { initialDelayMs: Infinity },
        new RangeError(
          'exponential(): expected `initialDelayMs` to be a finite number >= 0, got Infinity. Durations are milliseconds, such as 500.',
        ),
      ],
      [
        { maxAttempts: 0 },
        new RangeError(
          'exponential(): expected `maxAttempts` to be a whole number >= 1 (or Infinity), got 0. `maxAttempts` counts calls, the first included: 3 means one call and two retries.',
        ),
      ],
      [
        { ceiling: 0 },
        new RangeError(
          'exponential(): expected `ceiling` to be a whole number >= 1 (or Infinity), got 0. It is the failure count after which delays stop growing, such as 10.',
        ),
      ],
      [
        { maxIntervalMs: -1 },
        new RangeError(
          'exponential(): expected `maxIntervalMs` to be a number >= 0 (or Infinity for no limit), got -1. Leave it out for no limit.',
        ),
      ],
      [
        { maxElapsedMs: Number.NaN },
        new RangeError(
          'exponential(): expected `maxElapsedMs` to be a number >= 0 (or Infinity for no limit), got NaN. Leave it out for no limit.',
        ),
      ],
      [
        { initialDelay: 5 },
        new TypeError(
          'exponential(): unknown option `initialDelay`. Did you mean `initialDelayMs`? Known options: initialDelayMs, multiplier, jitter, ceiling, maxIntervalMs, maxDelayMs, maxAttempts, maxElapsedMs.',
        ),
      ],
    ];
    for (const [options, error] of cases) expect(() => exponential(options)).toThrow(error);
  });

  it('accepts the bounds of its own options: multiplier 1 (a constant curve) and an initial delay of 0', () => {
    expect(delays(exponential({ initialDelayMs: 7, multiplier: 1 }), 3)).toEqual([7, 7, 7]);
    expect(delays(exponential({ initialDelayMs: 0 }), 2)).toEqual([0, 0]);
    expect(delays(exponential({ multiplier: 1e308, maxDelayMs: Infinity }), 2)).toEqual([100, Number.MAX_SAFE_INTEGER]);
    expect(exponential({ multiplier: 3 })[SEGMENTS][0]?.curve).toEqual({
      type: 'exponential',
      initialDelayMs: 100,
      multiplier: 3,
    });
  });
});
