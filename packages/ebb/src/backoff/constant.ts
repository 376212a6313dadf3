import { check, DURATION_MS } from '../core/validate.js';
import { type Backoff, curveOptions, fromCurve, type LimitOptions } from './backoff.js';
import { type CurveMaths, makeCurve } from './segment.js';

const CONSTANT: CurveMaths = {
  at(this: { readonly delayMs: number }) {
    return this.delayMs;
  },
};

/** Options of {@link constant}. */
export interface ConstantOptions extends LimitOptions {
  /** The un-randomized wait after every failed attempt, in ms. Default 100. */
  readonly delayMs?: number;
}

/**
 * The same wait after every failure (before jitter). `delayMs: 0` retries at once.
 *
 * Defaults: 100 ms, no jitter, no limit. Without `maxAttempts` or `maxElapsedMs`, `retry()` and
 * `poll()` refuse the policy (a `RangeError`) unless you say `maxAttempts: Infinity` to retry
 * forever on purpose.
 *
 * @example
 * constant({ delayMs: 1_000, jitter: { kind: 'proportional', factor: 0.2 }, maxAttempts: 4 })
 */
export function constant(options?: ConstantOptions): Backoff {
  const where = 'constant()';
  const o = curveOptions(where, options);
  return fromCurve(
    where,
    makeCurve(CONSTANT, { type: 'constant' as const, delayMs: check(where, 'delayMs', o.delayMs, DURATION_MS, 100) }),
    o,
    ['delayMs'],
  );
}
