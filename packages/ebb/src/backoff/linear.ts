import { formatMs } from '../core/format-ms.js';
import { check, DURATION_MS } from '../core/validate.js';
import { type Backoff, fromCurve, type LimitOptions } from './backoff.js';
import { type CurveMaths, makeCurve } from './segment.js';

type Linear = { readonly initialDelayMs: number; readonly incrementMs: number };

const LINEAR: CurveMaths = {
  at(this: Linear, n) {
    return this.initialDelayMs + this.incrementMs * (n - 1);
  },
  toString(this: Linear) {
    return `linear ${formatMs(this.initialDelayMs)} +${formatMs(this.incrementMs)}`;
  },
};

/** Options of {@link linear}. */
export interface LinearOptions extends LimitOptions {
  /** The un-randomized wait after the first failed attempt, in ms. Default 100. */
  readonly initialDelayMs?: number;
  /** Added after each further failure, in ms. Default: `initialDelayMs`. */
  readonly incrementMs?: number;
}

/**
 * Linear backoff: the wait after attempt `n` fails is `initialDelayMs + incrementMs · (n−1)`,
 * then truncated, capped, randomized and clamped like every curve.
 *
 * Gentler than exponential growth; it does not shed load fast enough for a service in
 * trouble, so prefer it for local contention (a lock, a file) over remote services.
 *
 * Defaults: 100 ms, + `initialDelayMs`, full jitter, no cap, 5 attempts in all (none by default
 * when you set a finite `maxElapsedMs`).
 *
 * @example
 * linear({ initialDelayMs: 100, incrementMs: 50, jitter: noJitter }) // 100, 150, 200, 250 ms
 */
export function linear(options?: LinearOptions): Backoff {
  const where = 'linear()';
  return fromCurve(where, options, ['initialDelayMs', 'incrementMs', 'jitter'], (o) => {
    const initialDelayMs = check(where, 'initialDelayMs', o.initialDelayMs, DURATION_MS, 100);
    return makeCurve(LINEAR, {
      type: 'linear' as const,
      initialDelayMs,
      incrementMs: check(where, 'incrementMs', o.incrementMs, DURATION_MS, initialDelayMs),
    });
  });
}
