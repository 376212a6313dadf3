import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  check,
  checkKeys,
  count,
  DURATION_MS,
  inRange,
  invalid,
  LIMIT_MS,
  nonNegative,
  optionsObject,
  type Rule,
  show,
} from './validate.js';

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

describe('option validation, exactly: boundaries, defaults and every message part', () => {
  const thrown = (f: () => unknown): Error => {
    try {
      f();
    } catch (error) {
      return error as Error;
    }
    throw new Error('expected a throw');
  };

  it('shows booleans, undefined and symbols the way a reader would type them', () => {
    expect(show(true)).toBe('true');
    expect(show(false)).toBe('false');
    expect(show(undefined)).toBe('undefined');
    expect(show(Symbol('s'))).toBe('Symbol(s)');
    expect(show(0)).toBe('0');
  });

  it('a message without a fix ends at the value; the class follows the value, not the check', () => {
    const e = thrown(() => invalid('f()', 'x', 'y', 'a number'));
    expect(e).toBeInstanceOf(TypeError);
    expect(e.message).toBe('f(): expected `x` to be a number, got "y".');
    const r = thrown(() => invalid('f()', 'x', -1, 'a number >= 0', ''));
    expect(r).toBeInstanceOf(RangeError);
    expect(r.message).toBe('f(): expected `x` to be a number >= 0, got -1.');
  });

  it('nonNegative: 0 is in range; the default fix and text depend on allowInfinity; a given fix replaces it', () => {
    expect(nonNegative('f()', 'delayMs', 0, 9)).toBe(0);
    expect(nonNegative('f()', 'delayMs', -0, 9)).toBe(-0);
    expect(nonNegative('f()', 'delayMs', 1e308, 9)).toBe(1e308);
    expect(thrown(() => nonNegative('f()', 'maxDelayMs', -1, 0, true)).message).toBe(
      'f(): expected `maxDelayMs` to be a number >= 0 (or Infinity for no limit), got -1. Leave it out for no limit.',
    );
    expect(thrown(() => nonNegative('f()', 'delayMs', -1, 0)).message).toBe(
      'f(): expected `delayMs` to be a finite number >= 0, got -1. Durations are milliseconds, such as 500.',
    );
    expect(thrown(() => nonNegative('f()', 'delayMs', null, 0, false, 'Pass 5.')).message).toBe(
      'f(): expected `delayMs` to be a finite number >= 0, got null. Pass 5.',
    );
    expect(thrown(() => nonNegative('f()', 'maxDelayMs', -Infinity, 0, true)).message).toMatch(/got -Infinity\./);
  });

  it('inRange: both ends are in range, undefined takes the fallback, and the text names a finite range', () => {
    expect(inRange('f()', 'p', 0, 0.5, 0, 1, 'fix')).toBe(0);
    expect(inRange('f()', 'p', 1, 0.5, 0, 1, 'fix')).toBe(1);
    expect(inRange('f()', 'p', undefined, 0.5, 0, 1, 'fix')).toBe(0.5);
    expect(inRange('f()', 'm', 1, 2, 1, Infinity, 'fix')).toBe(1);
    for (const bad of [1.0000001, -1e-9, Number.NaN, Infinity, '0.5', null]) {
      expect(() => inRange('f()', 'p', bad, 0.5, 0, 1, 'Use 0.5.')).toThrow(
        `f(): expected \`p\` to be a number from 0 to 1, got ${show(bad)}. Use 0.5.`,
      );
    }
    const e = thrown(() => inRange('f()', 'm', Infinity, 2, 1, Infinity, 'Use 2.'));
    expect(e).toBeInstanceOf(RangeError);
    expect(e.message).toBe('f(): expected `m` to be a finite number >= 1, got Infinity. Use 2.');
  });

  it('count: the minimum is in range, undefined takes the fallback, 2^53 is not whole-safe, and the text says when Infinity is allowed', () => {
    expect(count('f()', 'n', 1, 5, 1, false, 'fix')).toBe(1);
    expect(count('f()', 'n', 0, 5, 0, false, 'fix')).toBe(0);
    expect(count('f()', 'n', undefined, 5, 1, false, 'fix')).toBe(5);
    expect(count('f()', 'n', 2 ** 53 - 1, 5, 1, false, 'fix')).toBe(2 ** 53 - 1);
    expect(thrown(() => count('f()', 'n', 2 ** 53, 5, 1, false, 'Use 3.')).message).toBe(
      'f(): expected `n` to be a whole number >= 1, got 9007199254740992. Use 3.',
    );
    expect(thrown(() => count('f()', 'n', Infinity, 5, 0, false, 'Use 3.')).message).toBe(
      'f(): expected `n` to be a whole number >= 0, got Infinity. Use 3.',
    );
    const e = thrown(() => count('f()', 'n', '3', 5, 1, true, 'Use 3.'));
    expect(e).toBeInstanceOf(TypeError);
    expect(e.message).toBe('f(): expected `n` to be a whole number >= 1 (or Infinity), got "3". Use 3.');
    expect(() => count('f()', 'n', 0.5, 5, 0, true, 'fix')).toThrow(RangeError);
    expect(() => count('f()', 'n', Number.NaN, 5, 0, true, 'fix')).toThrow(RangeError);
  });

  it('checkKeys: known keys pass; a hint matches the first four letters in any case; the message lists every known option', () => {
    expect(() => checkKeys('f()', { a: 1, bb: 2 }, ['a', 'bb'])).not.toThrow();
    expect(() => checkKeys('f()', {}, [])).not.toThrow();
    expect(thrown(() => checkKeys('exponential()', { initDelayMs: 5 }, ['multiplier', 'initialDelayMs'])).message).toBe(
      'exponential(): unknown option `initDelayMs`. Did you mean `initialDelayMs`? Known options: multiplier, initialDelayMs.',
    );
    expect(thrown(() => checkKeys('f()', { MULTIPLY: 5 }, ['multiplier'])).message).toBe(
      'f(): unknown option `MULTIPLY`. Did you mean `multiplier`? Known options: multiplier.',
    );
    const e = thrown(() => checkKeys('f()', { a: 1, zzz: 1 }, ['a', 'bb']));
    expect(e).toBeInstanceOf(TypeError);
    expect(e.message).toBe('f(): unknown option `zzz`. Known options: a, bb.');
  });

  it('optionsObject: returns the object itself; refuses null, primitives and arrays with a TypeError', () => {
    const o = { a: 1 };
    expect(optionsObject('f()', o)).toBe(o);
    for (const [bad, shown] of [
      [null, 'null'],
      ['x', '"x"'],
      [[1], 'an array'],
      [() => 1, 'a function'],
    ] as const) {
      const e = thrown(() => optionsObject('f()', bad as unknown as object));
      expect(e).toBeInstanceOf(TypeError);
      expect(e.message).toBe(`f(): expected an options object, got ${shown}.`);
    }
  });

  it('optionsObject: given the main option, the fix shows the object to pass (constant(5000), sequence([…]))', () => {
    expect(() => optionsObject('constant()', 5000 as unknown as object, 'delayMs')).toThrow(
      new TypeError(
        'constant(): expected an options object, got 5000. Pass an options object: constant({ delayMs: … }).',
      ),
    );
    expect(() => optionsObject('sequence()', [10, 20] as unknown as object, 'delaysMs')).toThrow(
      new TypeError(
        'sequence(): expected an options object, got an array. Pass an options object: sequence({ delaysMs: … }).',
      ),
    );
  });
});

describe("rules: one formatter reads each option's kind, bounds and fix", () => {
  const message = (f: () => unknown): [string, string] => {
    try {
      f();
    } catch (error) {
      return [(error as Error).constructor.name, (error as Error).message];
    }
    return ['none', ''];
  };

  it('derives the wording from the bounds, exactly, for every kind', () => {
    const cases: [Rule, unknown, string, string][] = [
      [
        DURATION_MS,
        -1,
        'RangeError',
        'f(): expected `x` to be a finite number >= 0, got -1. Durations are milliseconds, such as 500.',
      ],
      [
        LIMIT_MS,
        '5',
        'TypeError',
        'f(): expected `x` to be a number >= 0 (or Infinity for no limit), got "5". Leave it out for no limit.',
      ],
      [
        { min: 1, fix: 'Use 2.' },
        Infinity,
        'RangeError',
        'f(): expected `x` to be a finite number >= 1, got Infinity. Use 2.',
      ],
      [
        { max: 1, fix: 'Use 0.5.' },
        1.5,
        'RangeError',
        'f(): expected `x` to be a number from 0 to 1, got 1.5. Use 0.5.',
      ],
      [{ whole: true, min: 2 }, 1, 'RangeError', 'f(): expected `x` to be a whole number >= 2, got 1.'],
      [
        { whole: true, min: 1, infinity: true, fix: 'Use 3.' },
        2.5,
        'RangeError',
        'f(): expected `x` to be a whole number >= 1 (or Infinity), got 2.5. Use 3.',
      ],
      [
        { min: Number.MIN_VALUE, expected: 'a finite number > 0', fix: 'Use 1.' },
        0,
        'RangeError',
        'f(): expected `x` to be a finite number > 0, got 0. Use 1.',
      ],
      [
        DURATION_MS,
        undefined,
        'TypeError',
        'f(): expected `x` to be a finite number >= 0, got undefined. Durations are milliseconds, such as 500.',
      ],
    ];
    for (const [rule, value, type, text] of cases)
      expect(message(() => check('f()', 'x', value, rule))).toEqual([type, text]);
  });

  it('bounds are inclusive; Infinity only where the rule says so; undefined takes the fallback', () => {
    expect(check('f()', 'x', 0, DURATION_MS)).toBe(0);
    expect(check('f()', 'x', -0, DURATION_MS)).toBe(-0);
    expect(check('f()', 'x', 1e308, DURATION_MS)).toBe(1e308);
    expect(check('f()', 'x', Infinity, LIMIT_MS)).toBe(Infinity);
    expect(check('f()', 'x', 1, { max: 1, fix: '' })).toBe(1);
    expect(check('f()', 'x', 2 ** 53 - 1, { whole: true })).toBe(2 ** 53 - 1);
    expect(check('f()', 'x', Infinity, { whole: true, infinity: true })).toBe(Infinity);
    expect(check('f()', 'x', undefined, DURATION_MS, 7)).toBe(7);
    expect(() => check('f()', 'x', 2 ** 53, { whole: true })).toThrow(RangeError);
    expect(() => check('f()', 'x', Infinity, DURATION_MS)).toThrow(RangeError);
    expect(() => check('f()', 'x', -Infinity, LIMIT_MS)).toThrow(RangeError);
    expect(() => check('f()', 'x', Number.NaN, LIMIT_MS)).toThrow(RangeError);
    expect(() => check('f()', 'x', 5e-324, { min: Number.MIN_VALUE })).not.toThrow();
  });

  it('over any value: returns it unchanged when the rule admits it, else throws TypeError (not a number) or RangeError (a number)', () => {
    const rule = fc.record(
      {
        whole: fc.boolean(),
        min: fc.integer({ min: -3, max: 3 }),
        max: fc.constantFrom(3, 10, Infinity),
        infinity: fc.boolean(),
      },
      { requiredKeys: [] },
    );
    const value = fc.oneof(
      fc.anything(),
      fc.double(),
      fc.constantFrom(Number.NaN, Infinity, -Infinity, -0, 2 ** 53, 1e308, -1e308, 0.5, 3, 10),
    );
    fc.assert(
      fc.property(rule, value, (r, v) => {
        const min = r.min ?? 0;
        const max = r.max ?? Infinity;
        const admitted =
          typeof v === 'number' &&
          (v === Infinity ? r.infinity === true : v >= min && v <= max && (!r.whole || Number.isSafeInteger(v)));
        if (admitted) expect(check('f()', 'x', v, r)).toBe(v);
        else expect(() => check('f()', 'x', v, r)).toThrow(typeof v === 'number' ? RangeError : TypeError);
      }),
      { numRuns: 2_000 },
    );
  });

  it('the positional helpers are their rules: same result, same error, for any value', () => {
    const value = fc.oneof(fc.anything(), fc.double(), fc.constantFrom(undefined, Infinity, 2 ** 53, 1.5, -0));
    const outcome = (f: () => number) => {
      try {
        return ['ok', f()];
      } catch (error) {
        return [(error as Error).constructor.name, (error as Error).message];
      }
    };
    fc.assert(
      fc.property(value, fc.boolean(), (v, inf) => {
        expect(outcome(() => nonNegative('f()', 'x', v, Number.NaN, inf))).toEqual(
          outcome(() => check('f()', 'x', v, inf ? LIMIT_MS : DURATION_MS)),
        );
        expect(outcome(() => count('f()', 'x', v, 4, 1, inf, 'Fix.'))).toEqual(
          outcome(() => check('f()', 'x', v, { whole: true, min: 1, infinity: inf, fix: 'Fix.' }, 4)),
        );
        expect(outcome(() => inRange('f()', 'x', v, Number.NaN, 0, 1, 'Fix.'))).toEqual(
          outcome(() => check('f()', 'x', v, { max: 1, fix: 'Fix.' })),
        );
      }),
      { numRuns: 1_000 },
    );
  });
});
