import { inRange, nonNegative } from '../core/validate.js';
import { type Backoff, curveOptions, fromCurve, type LimitOptions } from './backoff.js';

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
 * purpose. Real clients want jitter and a cap too; `presets.default` (100 ms, ×2, 20 s cap, full
 * jitter, 5 attempts) has all three.
 *
 * @example
 * exponential({ initialDelayMs: 200, multiplier: 2, maxDelayMs: 10_000, jitter: 'full', maxAttempts: 6 })
 */
export function exponential(options?: ExponentialOptions): Backoff {
  const where = 'exponential()';
  const o = curveOptions(where, options);
  return fromCurve(
    where,
    {
      type: 'exponential',
      initialDelayMs: nonNegative(where, 'initialDelayMs', o.initialDelayMs, 100),
      multiplier: inRange(
        where,
        'multiplier',
        o.multiplier,
        2,
        1,
        Infinity,
        'Use 1 for a constant delay, or a growth factor such as 2.',
      ),
    },
    o,
    ['initialDelayMs', 'multiplier'],
  );
}
