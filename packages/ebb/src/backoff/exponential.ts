import { check, DURATION_MS, type Rule } from '../core/validate.js';
import { type Backoff, curveOptions, fromCurve, type LimitOptions } from './backoff.js';
import { type CurveMaths, makeCurve } from './segment.js';

const EXPONENTIAL: CurveMaths = {
  at(this: { readonly initialDelayMs: number; readonly multiplier: number }, n) {
    // 0 * Infinity would be NaN: an initial delay of 0 stays 0 however large n gets.
    return this.initialDelayMs === 0 ? 0 : this.initialDelayMs * this.multiplier ** (n - 1);
  },
};

const MULTIPLIER: Rule = { min: 1, fix: 'Use 1 for a constant delay, or a growth factor such as 2.' };

/** The exponential curve `initialDelayMs · multiplier^(n−1)` (values already checked). @internal */
export function exponentialCurve(initialDelayMs: number, multiplier: number) {
  return makeCurve(EXPONENTIAL, { type: 'exponential' as const, initialDelayMs, multiplier });
}

/** Options of {@link exponential}. */
export interface ExponentialOptions extends LimitOptions {
  /** The un-randomized wait after the first failed attempt, in ms. Default 100. */
  readonly initialDelayMs?: number;
  /** Growth per failed attempt, >= 1. Default 2 (binary exponential backoff). */
  readonly multiplier?: number;
}

/**
 * Exponential backoff: the wait after attempt `n` fails is `initialDelayMs · multiplier^(n−1)`,
 * then truncated by `ceiling`, capped, randomized by `jitter` and clamped by `maxDelayMs`.
 *
 * Defaults: 100 ms, ×2, no jitter, no cap, no limit. A bare `exponential()` has no end and no
 * spread, so `retry()` and `poll()` refuse it with a `RangeError` until it gets `maxAttempts` or
 * `maxElapsedMs` — or an explicit `maxAttempts: Infinity`, which means "retry forever" on
 * purpose. Real clients want jitter and a cap too; `presets.default` ({@link defaultBackoff}) has all
 * three.
 *
 * @example
 * exponential({ initialDelayMs: 200, multiplier: 2, maxDelayMs: 10_000, jitter: 'full', maxAttempts: 6 })
 */
export function exponential(options?: ExponentialOptions): Backoff {
  const where = 'exponential()';
  const o = curveOptions(where, options);
  return fromCurve(
    where,
    exponentialCurve(
      check(where, 'initialDelayMs', o.initialDelayMs, DURATION_MS, 100),
      check(where, 'multiplier', o.multiplier, MULTIPLIER, 2),
    ),
    o,
    ['initialDelayMs', 'multiplier'],
  );
}
