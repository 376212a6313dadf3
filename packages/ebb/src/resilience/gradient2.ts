import { checkKeys, count, inRange, invalid, optionsObject } from '../core/validate.js';
import { bounds, type LimitAlgorithm } from './limit-algorithm.js';

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
