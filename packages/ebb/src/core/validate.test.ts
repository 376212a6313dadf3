import { describe, expect, it } from 'vitest';
import { checkKeys, count, inRange, nonNegative, optionsObject, show } from './validate.js';

describe('option validation', () => {
  it('names the function, the option, the value and a fix', () => {
    expect(() => inRange('exponential()', 'multiplier', -2, 2, 1, Infinity, 'Use 1 for a constant delay.')).toThrow(
      new RangeError(
        'exponential(): expected `multiplier` to be a finite number >= 1, got -2. Use 1 for a constant delay.',
      ),
    );
  });

  it('throws TypeError for the wrong type and RangeError for a number out of range, NaN included', () => {
    expect(() => nonNegative('f()', 'delayMs', '5', 0)).toThrow(TypeError);
    expect(() => nonNegative('f()', 'delayMs', -1, 0)).toThrow(RangeError);
    expect(() => nonNegative('f()', 'delayMs', Number.NaN, 0)).toThrow(/got NaN/);
    expect(() => nonNegative('f()', 'delayMs', Infinity, 0)).toThrow(/finite/);
    expect(nonNegative('f()', 'maxDelayMs', Infinity, 0, true)).toBe(Infinity);
    expect(nonNegative('f()', 'delayMs', undefined, 7)).toBe(7);
    // A NaN fallback marks a required option.
    expect(() => nonNegative('f()', 'slotMs', undefined, Number.NaN)).toThrow(
      new TypeError(
        'f(): expected `slotMs` to be a finite number >= 0, got undefined. Durations are milliseconds, such as 500.',
      ),
    );
    expect(() => count('f()', 'n', undefined, Number.NaN, 0, false, 'fix')).toThrow(/got undefined/);
    expect(() => inRange('f()', 'x', undefined, Number.NaN, 0, 1, 'fix')).toThrow(/got undefined/);
  });

  it('counts are whole numbers, with Infinity only where allowed', () => {
    expect(() => count('f()', 'maxAttempts', 2.5, 1, 1, true, 'fix')).toThrow(
      /whole number >= 1 \(or Infinity\), got 2.5/,
    );
    expect(() => count('f()', 'maxAttempts', 0, 1, 1, true, 'fix')).toThrow(RangeError);
    expect(() => count('f()', 'cwMin', Infinity, 1, 0, false, 'fix')).toThrow(RangeError);
    expect(count('f()', 'maxAttempts', Infinity, 1, 1, true, 'fix')).toBe(Infinity);
    expect(count('f()', 'maxAttempts', 3, 1, 1, true, 'fix')).toBe(3);
  });

  it('rejects unknown options and suggests the likely one', () => {
    expect(() => checkKeys('exponential()', { initialDelay: 5 }, ['initialDelayMs', 'multiplier'])).toThrow(
      /unknown option `initialDelay`\. Did you mean `initialDelayMs`\?/,
    );
    expect(() => checkKeys('f()', { zzz: 1 }, ['a'])).toThrow(/Known options: a\./);
  });

  it('accepts only plain objects as options', () => {
    expect(optionsObject('f()', undefined)).toEqual({});
    expect(() => optionsObject('f()', 5 as unknown as object)).toThrow(/expected an options object, got 5/);
    expect(() => optionsObject('f()', [] as unknown as object)).toThrow(/got an array/);
  });

  it('shows values the way a reader would type them', () => {
    expect(show('x')).toBe('"x"');
    expect(show(-Infinity)).toBe('-Infinity');
    expect(show(null)).toBe('null');
    expect(show(10n)).toBe('10n');
    expect(show(() => 1)).toBe('a function');
    expect(show({})).toBe('an object');
  });
});
