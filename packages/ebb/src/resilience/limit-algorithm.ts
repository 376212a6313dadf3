import { count } from '../core/validate.js';

/** One completed request, as a limit algorithm sees it. Durations in milliseconds. */
export interface LimitSample {
  /** The request's round-trip time (from admission to outcome). */
  readonly rttMs: number;
  /** Requests in flight when this one was admitted, itself included. */
  readonly inflight: number;
  /** The request was dropped: throttled, timed out, or a failure counted as a load signal. */
  readonly dropped: boolean;
  /**
   * Requests the limiter completed successfully while this one was in flight, itself included
   * when it succeeded: BBR's delivery-rate sample (`delivered / rttMs` is the rate the service
   * showed it completes). `concurrencyLimit()` fills it in; algorithms that do not use it ignore it.
   */
  readonly delivered?: number;
}

/**
 * A concurrency-limit algorithm: a stateful estimate of how many requests may be in flight,
 * updated after every request. Each limiter needs its own instance.
 */
export interface LimitAlgorithm {
  /** The current limit, a whole number >= 1. */
  readonly limit: number;
  /** Updates the estimate with one sample. */
  update(sample: LimitSample): void;
}

/** Checks `minLimit`, `maxLimit` and `initialLimit` against each other. @internal */
export function bounds(
  where: string,
  o: { initialLimit?: number; minLimit?: number; maxLimit?: number },
  minDefault: number,
  maxDefault: number,
  initialDefault: number,
): { min: number; max: number; initial: number } {
  const min = count(where, 'minLimit', o.minLimit, minDefault, 1, false, `For example ${minDefault}.`);
  const max = count(where, 'maxLimit', o.maxLimit, Math.max(maxDefault, min), 1, false, `For example ${maxDefault}.`);
  if (max < min) {
    throw new RangeError(
      `${where}: \`maxLimit\` (${max}) is below \`minLimit\` (${min}). Raise maxLimit or lower minLimit.`,
    );
  }
  const initial = count(
    where,
    'initialLimit',
    o.initialLimit,
    Math.min(max, Math.max(min, initialDefault)),
    1,
    false,
    `For example ${initialDefault}.`,
  );
  if (initial < min || initial > max) {
    throw new RangeError(
      `${where}: expected \`initialLimit\` to be from minLimit (${min}) to maxLimit (${max}), got ${initial}.`,
    );
  }
  return { min, max, initial };
}
