import { formatMs } from '../core/format-ms.js';
import { check, DURATION_MS } from '../core/validate.js';
import { type Backoff, fromCurve, type LimitOptions } from './backoff.js';
import { type CurveMaths, makeCurve } from './segment.js';

type Constant = { readonly delayMs: number };

const CONSTANT: CurveMaths = {
  at(this: Constant) {
    return this.delayMs;
  },
  toString(this: Constant) {
    return `constant ${formatMs(this.delayMs)}`;
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
 * Defaults: 100 ms, full jitter, no cap, 5 attempts in all (none by default when you set a
 * finite `maxElapsedMs`). `jitter: noJitter` waits exactly `delayMs`; `maxAttempts: Infinity`
 * retries until success.
 *
 * @example
 * constant({ delayMs: 1_000, jitter: proportionalJitter(0.2), maxAttempts: 4 })
 */
export function constant(options?: ConstantOptions): Backoff {
  const where = 'constant()';
  return fromCurve(where, options, ['delayMs', 'jitter'], (o) =>
    makeCurve(CONSTANT, { type: 'constant' as const, delayMs: check(where, 'delayMs', o.delayMs, DURATION_MS, 100) }),
  );
}
