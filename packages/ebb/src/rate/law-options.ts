/**
 * The control law's options: their names (`LAW_KEYS`), their checks and their one table of
 * defaults (`lawOptions`). Its own module because two controllers take them with the same meaning —
 * `adaptiveRate` and `ebb/redis`'s `sharedRate`, which sends them to the fleet's Lua law — and both
 * must check and default them alike; their documentation is on `AdaptiveRateOptions`.
 */
import { invalid, nonNegative, show } from '../core/validate.js';
import type { AdaptiveRateOptions } from './adaptive-rate-options.js';

const rate = (where: string, name: string, value: unknown, fallback: number, allowInfinity: boolean): number => {
  const v = nonNegative(where, name, value, fallback, allowInfinity, 'Rates are requests per second, such as 50.');
  if (v === 0) invalid(where, name, v, 'a number > 0', 'Rates are requests per second, such as 50.');
  return v;
};

/** The options of the control law itself (`ebb/redis`'s `sharedRate` takes the same, with the same meaning). */
export const LAW_KEYS = [
  'initialRatePerSecond',
  'decreaseFactor',
  'coolOffMs',
  'maxCoolOffMs',
  'margin',
  'increase',
  'minRatePerSecond',
  'maxRatePerSecond',
] as const;

/** The law's options, every one given: what {@link lawOptions} returns. */
export type LawOptions = Required<Pick<AdaptiveRateOptions, (typeof LAW_KEYS)[number]>>;

/**
 * Checks the law's options and fills in their defaults — the one table of them, which `ebb/redis`'s
 * `sharedRate` takes too: `initialRatePerSecond` `maxRatePerSecond`, `decreaseFactor` 0.5,
 * `coolOffMs` 1000, `maxCoolOffMs` `max(8000, coolOffMs)`, `margin` 0.05, `increase` 0.1,
 * `minRatePerSecond` 1, `maxRatePerSecond` Infinity. A bad one is a `TypeError`/`RangeError`
 * naming `where`, the option, the value and the fix.
 */
export function lawOptions(where: string, o: AdaptiveRateOptions): LawOptions {
  const minRatePerSecond = rate(where, 'minRatePerSecond', o.minRatePerSecond, 1, false);
  const maxRatePerSecond = rate(where, 'maxRatePerSecond', o.maxRatePerSecond, Infinity, true);
  if (maxRatePerSecond < minRatePerSecond) {
    invalid(where, 'maxRatePerSecond', maxRatePerSecond, `a number >= minRatePerSecond (${minRatePerSecond})`);
  }
  const initialRatePerSecond = rate(where, 'initialRatePerSecond', o.initialRatePerSecond, maxRatePerSecond, true);
  if (initialRatePerSecond < minRatePerSecond || initialRatePerSecond > maxRatePerSecond) {
    invalid(
      where,
      'initialRatePerSecond',
      initialRatePerSecond,
      `a number from minRatePerSecond (${minRatePerSecond}) to maxRatePerSecond (${maxRatePerSecond})`,
    );
  }
  const decreaseFactor = o.decreaseFactor === undefined ? 0.5 : o.decreaseFactor;
  if (typeof decreaseFactor !== 'number' || !(decreaseFactor > 0 && decreaseFactor < 1)) {
    invalid(
      where,
      'decreaseFactor',
      decreaseFactor,
      'a number between 0 and 1 (exclusive)',
      'For example 0.5 halves the rate.',
    );
  }
  const increase = o.increase === undefined ? 0.1 : o.increase;
  if (typeof increase !== 'number' || !(increase > 0) || !Number.isFinite(increase)) {
    invalid(where, 'increase', increase, 'a finite number > 0', 'For example 0.1 for +10 % a step.');
  }
  if ((1 + increase) * decreaseFactor >= 1 && o.increase === undefined) {
    invalid(
      where,
      'decreaseFactor',
      decreaseFactor,
      `a number below ${show(1 / (1 + increase))} with the default increase ${increase}`,
      'A rise must be smaller than a fall, or the rate oscillates: lower it, or pass a smaller `increase`.',
    );
  }
  if ((1 + increase) * decreaseFactor >= 1) {
    invalid(
      where,
      'increase',
      increase,
      `a number below ${show(1 / decreaseFactor - 1)} with decreaseFactor ${decreaseFactor}`,
      'A rise must be smaller than a fall, or the rate oscillates.',
    );
  }
  const coolOffMs = nonNegative(where, 'coolOffMs', o.coolOffMs, 1000);
  if (coolOffMs === 0) invalid(where, 'coolOffMs', 0, 'a number > 0', 'For example 1000.');
  const maxCoolOffMs = nonNegative(where, 'maxCoolOffMs', o.maxCoolOffMs, Math.max(8000, coolOffMs));
  if (maxCoolOffMs < coolOffMs) invalid(where, 'maxCoolOffMs', maxCoolOffMs, `a number >= coolOffMs (${coolOffMs})`);
  const margin = o.margin === undefined ? 0.05 : o.margin;
  if (typeof margin !== 'number' || !(margin >= 0 && margin < 0.5)) {
    invalid(
      where,
      'margin',
      margin,
      'a number from 0 up to (not including) 0.5',
      'For example 0.05 to settle 5 % below the limit.',
    );
  }
  return {
    initialRatePerSecond,
    decreaseFactor,
    coolOffMs,
    maxCoolOffMs,
    margin,
    increase,
    minRatePerSecond,
    maxRatePerSecond,
  };
}
