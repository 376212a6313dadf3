import type { Random } from '../core/random.js';
import { checkKeys, count, inRange, invalid, optionsObject } from '../core/validate.js';

/** One completed request, as a limit algorithm sees it. Durations in milliseconds. */
export interface LimitSample {
  /** The request's round-trip time (from admission to outcome). */
  readonly rttMs: number;
  /** Requests in flight when this one was admitted, itself included. */
  readonly inflight: number;
  /** The request was dropped: throttled, timed out, or a failure counted as a load signal. */
  readonly dropped: boolean;
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

/** `max(1, floor(log10(n)))`: the step of Vegas (Netflix `Log10RootFunction` with baseline 0). */
const log10Root = (n: number): number => Math.max(1, Math.floor(Math.log10(Math.max(1, n))));

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
  /** A request slower than this counts as a drop. Default 5000 ms. */
  readonly timeoutMs?: number;
}

/**
 * Additive increase, multiplicative decrease (Chiu & Jain, 1989; Netflix concurrency-limits'
 * `AIMDLimit`): +1 after a success while the limit is in use (at least half of it in flight);
 * on a drop or a sample slower than `timeoutMs`, `max(minLimit, min(limit − 1, ⌊limit ×
 * backoffRatio⌋))`. Reacts only to drops and timeouts, not to rising latency.
 */
export function aimd(options?: AimdOptions): LimitAlgorithm {
  const where = 'aimd()';
  const o = optionsObject(where, options) as AimdOptions;
  checkKeys(where, o, ['initialLimit', 'minLimit', 'maxLimit', 'backoffRatio', 'timeoutMs']);
  const { min, max, initial } = bounds(where, o, 1, 200, 20);
  const ratio = inRange(where, 'backoffRatio', o.backoffRatio, 0.9, 0.5, 1, 'For example 0.9.');
  if (ratio === 1) invalid(where, 'backoffRatio', 1, 'a number from 0.5 to below 1', 'For example 0.9.');
  const timeoutMs = inRange(where, 'timeoutMs', o.timeoutMs, 5_000, 0, Infinity, 'For example 5000.');
  let limit = initial;
  return {
    get limit() {
      return limit;
    },
    update({ rttMs, inflight, dropped }) {
      if (dropped || rttMs > timeoutMs) limit = Math.max(min, Math.min(limit - 1, Math.floor(limit * ratio)));
      else if (inflight * 2 >= limit) limit = Math.min(max, limit + 1);
    },
  };
}

/** Options of {@link vegas}. */
export interface VegasOptions {
  /** Starting limit. Default 20. */
  readonly initialLimit?: number;
  /** Highest limit. Default 1000. */
  readonly maxLimit?: number;
  /** Share of the new estimate taken at each update, (0, 1]. Default 1. */
  readonly smoothing?: number;
  /** Re-measure the no-load RTT every `probeMultiplier × limit` samples (× a jitter in [0.5, 1)). Default 30. */
  readonly probeMultiplier?: number;
  /** Randomness for the probe jitter. Default `Math.random`. */
  readonly random?: Random;
}

/**
 * TCP Vegas applied to concurrency (Brakmo & Peterson, 1995; Netflix concurrency-limits'
 * `VegasLimit`): estimates the queue as `limit × (1 − rttNoLoad / rtt)`, with `rttNoLoad` the
 * smallest RTT seen (re-probed now and then). With `L = log10Root(limit)`: queue ≤ L → limit +
 * 6L; queue < 3L → limit + L; queue > 6L → limit − L; a drop → limit − L. No increase while less
 * than half the limit is in use.
 */
export function vegas(options?: VegasOptions): LimitAlgorithm {
  const where = 'vegas()';
  const o = optionsObject(where, options) as VegasOptions;
  checkKeys(where, o, ['initialLimit', 'maxLimit', 'smoothing', 'probeMultiplier', 'random']);
  const { max, initial } = bounds(where, o, 1, 1_000, 20);
  const smoothing = inRange(where, 'smoothing', o.smoothing, 1, 0, 1, 'For example 1.');
  if (smoothing === 0) invalid(where, 'smoothing', 0, 'a number above 0, up to 1', 'For example 1.');
  const probeMultiplier = count(where, 'probeMultiplier', o.probeMultiplier, 30, 1, false, 'For example 30.');
  const random = o.random ?? Math.random;
  if (typeof random !== 'function') invalid(where, 'random', random, 'a function returning a number in [0, 1)');
  let estimate = initial;
  let rttNoLoad = 0;
  let probeCount = 0;
  const jitter = (): number => {
    const r = random();
    return 0.5 + 0.5 * (typeof r === 'number' && r >= 0 && r < 1 ? r : 0.5);
  };
  let probeJitter = jitter();
  return {
    get limit() {
      return Math.floor(estimate);
    },
    update({ rttMs, inflight, dropped }) {
      if (!(rttMs > 0)) return;
      probeCount++;
      if (probeJitter * probeMultiplier * estimate <= probeCount) {
        probeJitter = jitter();
        probeCount = 0;
        rttNoLoad = rttMs;
        return;
      }
      if (rttNoLoad === 0 || rttMs < rttNoLoad) {
        rttNoLoad = rttMs;
        return;
      }
      const queue = Math.ceil(estimate * (1 - rttNoLoad / rttMs));
      const step = log10Root(Math.floor(estimate));
      let next: number;
      if (dropped) next = estimate - step;
      else if (inflight * 2 < estimate) return;
      else if (queue <= step) next = estimate + 6 * step;
      else if (queue < 3 * step) next = estimate + step;
      else if (queue > 6 * step) next = estimate - step;
      else return;
      next = Math.max(1, Math.min(max, next));
      estimate = (1 - smoothing) * estimate + smoothing * next;
    },
  };
}

/** Options of {@link gradient2}. */
export interface Gradient2Options {
  /** Starting limit. Default 20. */
  readonly initialLimit?: number;
  /** Lowest limit. Default 20. */
  readonly minLimit?: number;
  /** Highest limit. Default 200. */
  readonly maxLimit?: number;
  /** Share of the new estimate taken at each update, (0, 1]. Default 0.2. */
  readonly smoothing?: number;
  /** Headroom added at each update while latency is steady. Default 4. */
  readonly queueSize?: number;
  /** Samples in the long-term RTT average (exponential, after a 10-sample plain average). Default 600. */
  readonly longWindow?: number;
}

/**
 * Gradient of latency (Netflix concurrency-limits' `Gradient2Limit`): compares each sample's
 * RTT with a long-term exponential average; `gradient = clamp(longRtt / rtt, 0.5, 1)`, new
 * limit `limit × gradient + queueSize`, smoothed by `smoothing` and clamped to
 * [minLimit, maxLimit]. When the long average exceeds twice the sample (recovery after a
 * prolonged overload) it decays by 10 %. No change while less than half the limit is in use.
 */
export function gradient2(options?: Gradient2Options): LimitAlgorithm {
  const where = 'gradient2()';
  const o = optionsObject(where, options) as Gradient2Options;
  checkKeys(where, o, ['initialLimit', 'minLimit', 'maxLimit', 'smoothing', 'queueSize', 'longWindow']);
  const { min, max, initial } = bounds(where, o, 20, 200, 20);
  const smoothing = inRange(where, 'smoothing', o.smoothing, 0.2, 0, 1, 'For example 0.2.');
  if (smoothing === 0) invalid(where, 'smoothing', 0, 'a number above 0, up to 1', 'For example 0.2.');
  const queueSize = inRange(where, 'queueSize', o.queueSize, 4, 0, 1e6, 'For example 4.');
  const longWindow = count(where, 'longWindow', o.longWindow, 600, 1, false, 'For example 600.');
  const factor = 2 / (longWindow + 1);
  const WARMUP = 10;
  let estimate = initial;
  let longRtt = 0;
  let samples = 0;
  return {
    get limit() {
      return Math.floor(estimate);
    },
    update({ rttMs, inflight }) {
      if (!(rttMs > 0 && rttMs < Infinity)) return;
      // Netflix's ExpAvgMeasurement: a plain average over the first samples, then exponential.
      if (samples < WARMUP) {
        samples++;
        longRtt += (rttMs - longRtt) / samples;
      } else longRtt = longRtt * (1 - factor) + rttMs * factor;
      if (longRtt / rttMs > 2) longRtt *= 0.9;
      if (inflight < estimate / 2) return;
      const gradient = Math.max(0.5, Math.min(1, longRtt / rttMs));
      let next = estimate * gradient + queueSize;
      next = estimate * (1 - smoothing) + next * smoothing;
      estimate = Math.max(min, Math.min(max, next));
    },
  };
}

function bounds(
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
