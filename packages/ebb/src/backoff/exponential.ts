import { DEV } from '../core/dev.js';
import { formatMs } from '../core/format-ms.js';
import { check, DURATION_MS, type Rule } from '../core/validate.js';
import { type Backoff, fromCurve, type LimitOptions } from './backoff.js';
import { type CurveMaths, makeCurve } from './segment.js';

type Exponential = { readonly initialDelayMs: number; readonly multiplier: number };

const EXPONENTIAL: CurveMaths = {
  at(this: Exponential, n) {
    // 0 * Infinity would be NaN: an initial delay of 0 stays 0 however large n gets.
    return this.initialDelayMs === 0 ? 0 : this.initialDelayMs * this.multiplier ** (n - 1);
  },
  toString(this: Exponential) {
    return `exponential ${formatMs(this.initialDelayMs)} ×${this.multiplier}`;
  },
};

const MULTIPLIER: Rule = { min: 1, ...(DEV && { fix: 'Use 1 for a constant delay, or a growth factor such as 2.' }) };

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
 * Defaults — ebb's default policy, so `exponential()` is {@link defaultBackoff}: 100 ms, ×2, capped
 * at 20 s (`maxDelayMs`; none by default when you set `maxIntervalMs`), full jitter, 5 attempts
 * in all (none by default when you set a finite `maxElapsedMs`). Say otherwise explicitly:
 * `jitter: noJitter` for exact waits, `maxDelayMs: Infinity` for no cap, `maxAttempts: Infinity`
 * to retry until success.
 *
 * @example
 * exponential({ initialDelayMs: 200, maxDelayMs: 10_000, maxAttempts: 6 }) // full jitter on 200, 400, 800 … ms
 */
export function exponential(options?: ExponentialOptions): Backoff {
  const where = 'exponential()';
  return fromCurve(
    where,
    options,
    ['initialDelayMs', 'multiplier', 'jitter'],
    (o) =>
      exponentialCurve(
        check(where, 'initialDelayMs', o.initialDelayMs, DURATION_MS, 100),
        check(where, 'multiplier', o.multiplier, MULTIPLIER, 2),
      ),
    20_000,
  );
}
