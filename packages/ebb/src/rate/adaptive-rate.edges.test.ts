import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import { type AdaptiveRateOptions, adaptiveRate } from './adaptive-rate.js';

// Edges of adaptiveRate that the behaviour tests beside it leave open (issue 10, mutation score):
// the exact messages of bad options, the boundaries of each check, the server's hints read field
// by field, and the bookkeeping (pauses, paces, the delivered rate) seen through the public API.
// Every test is on virtual time.

const make = (options: AdaptiveRateOptions = {}) => {
  const clock = virtualClock();
  return { clock, rate: adaptiveRate({ clock, ...options }) };
};

/** The error `adaptiveRate(options)` throws: its class and its whole message. */
function thrown(options: unknown): [string, string] {
  try {
    adaptiveRate(options as AdaptiveRateOptions);
  } catch (error) {
    return [(error as Error).constructor.name, (error as Error).message];
  }
  throw new Error(`accepted ${JSON.stringify(options)}`);
}

const RATES = 'Rates are requests per second, such as 50.';

describe('adaptiveRate: options, exact messages', () => {
  it.each<[string, unknown, string, string]>([
    [
      'minRatePerSecond negative',
      { minRatePerSecond: -1 },
      'RangeError',
      `adaptiveRate(): expected \`minRatePerSecond\` to be a finite number >= 0, got -1. ${RATES}`,
    ],
    [
      'minRatePerSecond Infinity',
      { minRatePerSecond: Infinity },
      'RangeError',
      `adaptiveRate(): expected \`minRatePerSecond\` to be a finite number >= 0, got Infinity. ${RATES}`,
    ],
    [
      'minRatePerSecond 0',
      { minRatePerSecond: 0 },
      'RangeError',
      `adaptiveRate(): expected \`minRatePerSecond\` to be a number > 0, got 0. ${RATES}`,
    ],
    [
      'minRatePerSecond a string',
      { minRatePerSecond: '5' },
      'TypeError',
      `adaptiveRate(): expected \`minRatePerSecond\` to be a finite number >= 0, got "5". ${RATES}`,
    ],
    [
      'maxRatePerSecond negative',
      { maxRatePerSecond: -2 },
      'RangeError',
      `adaptiveRate(): expected \`maxRatePerSecond\` to be a number >= 0 (or Infinity for no limit), got -2. ${RATES}`,
    ],
    [
      'maxRatePerSecond 0',
      { maxRatePerSecond: 0 },
      'RangeError',
      `adaptiveRate(): expected \`maxRatePerSecond\` to be a number > 0, got 0. ${RATES}`,
    ],
    [
      'maxRatePerSecond below minRatePerSecond',
      { minRatePerSecond: 3, maxRatePerSecond: 2.5 },
      'RangeError',
      'adaptiveRate(): expected `maxRatePerSecond` to be a number >= minRatePerSecond (3), got 2.5.',
    ],
    [
      'initialRatePerSecond 0',
      { initialRatePerSecond: 0 },
      'RangeError',
      `adaptiveRate(): expected \`initialRatePerSecond\` to be a number > 0, got 0. ${RATES}`,
    ],
    [
      'initialRatePerSecond NaN',
      { initialRatePerSecond: Number.NaN },
      'RangeError',
      `adaptiveRate(): expected \`initialRatePerSecond\` to be a number >= 0 (or Infinity for no limit), got NaN. ${RATES}`,
    ],
    [
      'initialRatePerSecond below minRatePerSecond',
      { initialRatePerSecond: 1.5, minRatePerSecond: 2 },
      'RangeError',
      'adaptiveRate(): expected `initialRatePerSecond` to be a number from minRatePerSecond (2) to maxRatePerSecond (Infinity), got 1.5.',
    ],
    [
      'initialRatePerSecond above maxRatePerSecond',
      { initialRatePerSecond: 20.5, maxRatePerSecond: 20 },
      'RangeError',
      'adaptiveRate(): expected `initialRatePerSecond` to be a number from minRatePerSecond (1) to maxRatePerSecond (20), got 20.5.',
    ],
    [
      'decreaseFactor 1',
      { decreaseFactor: 1 },
      'RangeError',
      'adaptiveRate(): expected `decreaseFactor` to be a number between 0 and 1 (exclusive), got 1. For example 0.5 halves the rate.',
    ],
    [
      'decreaseFactor 0',
      { decreaseFactor: 0 },
      'RangeError',
      'adaptiveRate(): expected `decreaseFactor` to be a number between 0 and 1 (exclusive), got 0. For example 0.5 halves the rate.',
    ],
    [
      'decreaseFactor NaN',
      { decreaseFactor: Number.NaN },
      'RangeError',
      'adaptiveRate(): expected `decreaseFactor` to be a number between 0 and 1 (exclusive), got NaN. For example 0.5 halves the rate.',
    ],
    [
      'decreaseFactor a string',
      { decreaseFactor: '0.5' },
      'TypeError',
      'adaptiveRate(): expected `decreaseFactor` to be a number between 0 and 1 (exclusive), got "0.5". For example 0.5 halves the rate.',
    ],
    [
      'increase 0',
      { increase: 0 },
      'RangeError',
      'adaptiveRate(): expected `increase` to be a finite number > 0, got 0. For example 0.1 for +10 % a step.',
    ],
    [
      'increase Infinity',
      { increase: Infinity },
      'RangeError',
      'adaptiveRate(): expected `increase` to be a finite number > 0, got Infinity. For example 0.1 for +10 % a step.',
    ],
    [
      'increase a string',
      { increase: '0.1' },
      'TypeError',
      'adaptiveRate(): expected `increase` to be a finite number > 0, got "0.1". For example 0.1 for +10 % a step.',
    ],
    [
      // (1 + 0.1) × (1 / 1.1) is exactly 1 in doubles: the boundary itself is refused.
      'decreaseFactor at 1 / (1 + the default increase)',
      { decreaseFactor: 1 / 1.1 },
      'RangeError',
      'adaptiveRate(): expected `decreaseFactor` to be a number below 0.9090909090909091 with the default increase 0.1, got 0.9090909090909091. A rise must be smaller than a fall, or the rate oscillates: lower it, or pass a smaller `increase`.',
    ],
    [
      // 2 × 0.5 is exactly 1.
      'increase at 1 / decreaseFactor − 1',
      { increase: 1, decreaseFactor: 0.5 },
      'RangeError',
      'adaptiveRate(): expected `increase` to be a number below 1 with decreaseFactor 0.5, got 1. A rise must be smaller than a fall, or the rate oscillates.',
    ],
    [
      'coolOffMs 0',
      { coolOffMs: 0 },
      'RangeError',
      'adaptiveRate(): expected `coolOffMs` to be a number > 0, got 0. For example 1000.',
    ],
    [
      'coolOffMs negative',
      { coolOffMs: -1 },
      'RangeError',
      'adaptiveRate(): expected `coolOffMs` to be a finite number >= 0, got -1. Durations are milliseconds, such as 500.',
    ],
    [
      'maxCoolOffMs below coolOffMs',
      { coolOffMs: 2000, maxCoolOffMs: 1999 },
      'RangeError',
      'adaptiveRate(): expected `maxCoolOffMs` to be a number >= coolOffMs (2000), got 1999.',
    ],
    [
      'margin 0.5',
      { margin: 0.5 },
      'RangeError',
      'adaptiveRate(): expected `margin` to be a number from 0 up to (not including) 0.5, got 0.5. For example 0.05 to settle 5 % below the limit.',
    ],
    [
      'margin −0.01',
      { margin: -0.01 },
      'RangeError',
      'adaptiveRate(): expected `margin` to be a number from 0 up to (not including) 0.5, got -0.01. For example 0.05 to settle 5 % below the limit.',
    ],
    [
      'margin NaN',
      { margin: Number.NaN },
      'RangeError',
      'adaptiveRate(): expected `margin` to be a number from 0 up to (not including) 0.5, got NaN. For example 0.05 to settle 5 % below the limit.',
    ],
    [
      'margin a string',
      { margin: '0.1' },
      'TypeError',
      'adaptiveRate(): expected `margin` to be a number from 0 up to (not including) 0.5, got "0.1". For example 0.05 to settle 5 % below the limit.',
    ],
    [
      'priorities not an array',
      { priorities: 'high' },
      'TypeError',
      `adaptiveRate(): expected \`priorities\` to be a non-empty array of distinct names, got "high". For example ['high', 'low'].`,
    ],
    [
      'priorities empty',
      { priorities: [] },
      'TypeError',
      `adaptiveRate(): expected \`priorities\` to be a non-empty array of distinct names, got an array. For example ['high', 'low'].`,
    ],
    [
      'priorities with a number',
      { priorities: ['normal', 1] },
      'TypeError',
      `adaptiveRate(): expected \`priorities\` to be a non-empty array of distinct names, got an array. For example ['high', 'low'].`,
    ],
    [
      'priorities with an empty name',
      { priorities: ['normal', ''] },
      'TypeError',
      `adaptiveRate(): expected \`priorities\` to be a non-empty array of distinct names, got an array. For example ['high', 'low'].`,
    ],
    [
      'priorities with a duplicate',
      { priorities: ['normal', 'low', 'normal'] },
      'TypeError',
      `adaptiveRate(): expected \`priorities\` to be a non-empty array of distinct names, got an array. For example ['high', 'low'].`,
    ],
    [
      'defaultPriority left out, "normal" not a class',
      { priorities: ['a', 'b'] },
      'TypeError',
      'adaptiveRate(): expected `defaultPriority` to be one of the priorities ("a", "b"), got "normal". Name the class of requests made through the controller itself.',
    ],
    [
      'defaultPriority not a class',
      { defaultPriority: 'urgent' },
      'TypeError',
      'adaptiveRate(): expected `defaultPriority` to be one of the priorities ("high", "normal", "low"), got "urgent".',
    ],
    [
      'defaultPriority a number',
      { priorities: ['1', '2'], defaultPriority: 1 },
      'RangeError',
      'adaptiveRate(): expected `defaultPriority` to be one of the priorities ("1", "2"), got 1.',
    ],
    [
      'maxServerWaitMs negative',
      { maxServerWaitMs: -5 },
      'RangeError',
      'adaptiveRate(): expected `maxServerWaitMs` to be a finite number >= 0, got -5. Durations are milliseconds, such as 500.',
    ],
    [
      'an unknown option',
      { coolOff: 5 },
      'TypeError',
      'adaptiveRate(): unknown option `coolOff`. Did you mean `coolOffMs`? Known options: initialRatePerSecond, decreaseFactor, coolOffMs, maxCoolOffMs, margin, increase, minRatePerSecond, maxRatePerSecond, priorities, defaultPriority, maxServerWaitMs, clock.',
    ],
  ])('%s', (_, options, type, message) => {
    expect(thrown(options)).toEqual([type, message]);
  });

  it('accepts each boundary that is inside: margin 0, initial = min = max, maxCoolOffMs = coolOffMs, maxRatePerSecond = minRatePerSecond', () => {
    expect(make({ margin: 0 }).rate.ratePerSecond).toBe(Infinity);
    expect(make({ minRatePerSecond: 7, maxRatePerSecond: 7, initialRatePerSecond: 7 }).rate.ratePerSecond).toBe(7);
    expect(make({ minRatePerSecond: 7, maxRatePerSecond: 9 }).rate.ratePerSecond).toBe(9);
    expect(make({ coolOffMs: 3000, maxCoolOffMs: 3000 }).rate.currentCoolOffMs).toBe(3000);
    // Without maxCoolOffMs, a coolOffMs above 8000 is its own maximum.
    expect(make({ coolOffMs: 12_000 }).rate.currentCoolOffMs).toBe(12_000);
    expect(make({ coolOffMs: 500 }).rate.currentCoolOffMs).toBe(500);
    expect(make().rate.currentCoolOffMs).toBe(1000);
    // Just inside the rise-versus-fall bound.
    expect(make({ decreaseFactor: 0.9, increase: 0.11 }).rate.ratePerSecond).toBe(Infinity);
  });

  it('priority(): a name not in priorities is a TypeError listing them', () => {
    const { rate } = make({ priorities: ['gold', 'silver'], defaultPriority: 'silver' });
    expect(() => rate.priority('bronze')).toThrow(
      new TypeError('adaptiveRate().priority(): expected `name` to be one of "gold", "silver", got "bronze".'),
    );
    expect(() => rate.priority('bronze')).toThrow(TypeError);
  });
});
