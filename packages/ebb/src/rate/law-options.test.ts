// The law's options and their defaults, one table (lawOptions in adaptive-rate.ts) that adaptiveRate
// and ebb/redis's sharedRate both fill their options from, so that one process and a fleet run the
// same law when given the same options — or none.
import { describe, expect, it } from 'vitest';
import { lawOptions } from './law-options.js';
import { LAW_OPTIONS } from './test-helpers.js';

describe('lawOptions: the law options every rate controller takes', () => {
  it('the defaults: unlimited until the first throttle, halve, +10 % a step, 1 s cool-off up to 8 s, 5 % margin, 1 r/s floor', () => {
    expect(lawOptions('adaptiveRate()', {})).toEqual({
      initialRatePerSecond: Infinity,
      decreaseFactor: 0.5,
      coolOffMs: 1000,
      maxCoolOffMs: 8000,
      margin: 0.05,
      increase: 0.1,
      minRatePerSecond: 1,
      maxRatePerSecond: Infinity,
    });
  });

  it('the law’s own tests run at these defaults (test-helpers LAW_OPTIONS)', () => {
    expect(lawOptions('adaptiveRate()', {})).toEqual({ ...LAW_OPTIONS, initialRatePerSecond: Infinity });
  });

  it('defaults that follow other options: the initial rate is the maximum; the longest cool-off at least the cool-off', () => {
    expect(lawOptions('adaptiveRate()', { maxRatePerSecond: 40, coolOffMs: 20_000 })).toMatchObject({
      initialRatePerSecond: 40,
      maxCoolOffMs: 20_000,
    });
  });

  it('a bad option is refused under the caller’s name, with the option, the value and the fix', () => {
    expect(() => lawOptions('sharedRate()', { margin: 0.5 })).toThrow(/^sharedRate\(\).*margin.*0\.5/);
    expect(() => lawOptions('sharedRate()', { decreaseFactor: 0.95 })).toThrow(/sharedRate\(\).*decreaseFactor/);
  });
});
