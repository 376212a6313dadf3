import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatMs } from './format-ms.js';

describe('formatMs: a duration as a person reads it', () => {
  it('three significant digits in the largest unit that keeps the number at 1 or more', () => {
    const cases: [number, string][] = [
      [91.566, '91.6 ms'],
      [100, '100 ms'],
      [1.25, '1.25 ms'],
      [1, '1 ms'],
      [999, '999 ms'],
      [1_000, '1 s'],
      [1_500, '1.5 s'],
      [1_234, '1.23 s'],
      [20_000, '20 s'],
      [59_000, '59 s'],
      [60_000, '1 min'],
      [90_000, '1.5 min'],
      [120_000, '2 min'],
      [1_234_567, '20.6 min'],
      [3_600_000, '1 h'],
      [5_400_000, '1.5 h'],
      [86_400_000, '1 d'],
      [10_000_000_000, '116 d'],
      [0.5, '500 µs'],
      [0.0512, '51.2 µs'],
      [0.009, '9 µs'],
      [0.001, '1 µs'],
    ];
    for (const [ms, text] of cases) expect(formatMs(ms), String(ms)).toBe(text);
  });

  it('chooses the unit after rounding: 999.95 ms reads 1 s and 59,999 ms 1 min, never 1000 ms or 60 s', () => {
    expect(formatMs(999.95)).toBe('1 s');
    expect(formatMs(999.4)).toBe('999 ms');
    expect(formatMs(59_999)).toBe('1 min');
    expect(formatMs(59_940)).toBe('59.9 s');
    expect(formatMs(3_599_999)).toBe('1 h');
    expect(formatMs(0.99996)).toBe('1 ms');
    expect(formatMs(0.0009996)).toBe('1 µs');
  });

  it('zero, signs, sub-microsecond values, huge values and non-numbers read plainly', () => {
    expect(formatMs(0)).toBe('0 ms');
    expect(formatMs(-0)).toBe('0 ms');
    expect(formatMs(-1)).toBe('-1 ms');
    expect(formatMs(-1_500)).toBe('-1.5 s');
    // Below a microsecond there is no smaller unit: milliseconds, as JavaScript writes them.
    expect(formatMs(1e-9)).toBe('1e-9 ms');
    expect(formatMs(5e-324)).toBe('5e-324 ms');
    // Past a thousand days, three significant digits of whole days.
    expect(formatMs(Number.MAX_SAFE_INTEGER)).toBe('104000000 d');
    expect(formatMs(Number.NaN)).toBe('NaN ms');
    expect(formatMs(Infinity)).toBe('Infinity ms');
    expect(formatMs(-Infinity)).toBe('-Infinity ms');
  });

  it('every finite duration reads as a number within 0.5 % of it, then a unit, with at most 3 significant digits', () => {
    const size: Record<string, number> = { µs: 0.001, ms: 1, s: 1_000, min: 60_000, h: 3_600_000, d: 86_400_000 };
    fc.assert(
      fc.property(fc.double({ min: 0.001, max: 1e12, noNaN: true }), (ms) => {
        const [number, unit, ...rest] = formatMs(ms).split(' ');
        expect(rest).toEqual([]);
        const value = Number(number) * (size[unit as string] as number);
        expect(Math.abs(value - ms)).toBeLessThanOrEqual(ms * 0.005);
        expect((number as string).replace(/^0\.0*|\./g, '').replace(/0+$/, '').length).toBeLessThanOrEqual(3);
      }),
      { numRuns: 2_000 },
    );
  });
});
