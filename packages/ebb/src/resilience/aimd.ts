import { RENAMED, refuseNamed } from '../core/option-names.js';
import { checkKeys, inRange, invalid, optionsObject } from '../core/validate.js';
import { bounds, type LimitAlgorithm } from './limit-algorithm.js';

/** Options of {@link aimd}. */
export interface AimdOptions {
  /** Starting limit. Default 20. */
  readonly initialLimit?: number;
  /** Lowest limit. Default 1. */
  readonly minLimit?: number;
  /** Highest limit. Default 200. */
  readonly maxLimit?: number;
  /** Factor applied on a drop, in [0.5, 1). Default 0.9. */
  readonly backoffRatio?: number;
  /** A request slower than this counts as a drop, in ms (Netflix's `AIMDLimit` `timeout`). Default 5000. */
  readonly slowCallMs?: number;
}

/**
 * Additive increase, multiplicative decrease (Chiu & Jain, 1989; Netflix concurrency-limits'
 * `AIMDLimit`): +1 after a success while the limit is in use (at least half of it in flight);
 * on a drop or a sample slower than `slowCallMs`, `max(minLimit, min(limit − 1, ⌊limit ×
 * backoffRatio⌋))`. Reacts only to drops and timeouts, not to rising latency.
 */
export function aimd(options?: AimdOptions): LimitAlgorithm {
  const where = 'aimd()';
  const o = optionsObject(where, options) as AimdOptions;
  refuseNamed(where, o, { timeoutMs: 'use `slowCallMs` (a request slower than this counts as a drop).' }, RENAMED);
  checkKeys(where, o, ['initialLimit', 'minLimit', 'maxLimit', 'backoffRatio', 'slowCallMs']);
  const { min, max, initial } = bounds(where, o, 1, 200, 20);
  const ratio = inRange(where, 'backoffRatio', o.backoffRatio, 0.9, 0.5, 1, 'For example 0.9.');
  if (ratio === 1) invalid(where, 'backoffRatio', 1, 'a number from 0.5 to below 1', 'For example 0.9.');
  const slowCallMs = inRange(where, 'slowCallMs', o.slowCallMs, 5_000, 0, Infinity, 'For example 5000.');
  let limit = initial;
  return {
    get limit() {
      return limit;
    },
    update({ rttMs, inflight, dropped }) {
      if (dropped || rttMs > slowCallMs) limit = Math.max(min, Math.min(limit - 1, Math.floor(limit * ratio)));
      else if (inflight * 2 >= limit) limit = Math.min(max, limit + 1);
    },
  };
}
