import { type Random, randomOption } from '../core/random.js';
import { checkKeys, count, inRange, invalid, optionsObject } from '../core/validate.js';
import { bounds, type LimitAlgorithm } from './limit-algorithm.js';

/** `max(1, floor(log10(n)))`: the step of Vegas (Netflix `Log10RootFunction` with baseline 0). */
const log10Root = (n: number): number => Math.max(1, Math.floor(Math.log10(Math.max(1, n))));

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
  const random = randomOption(where, o.random) ?? Math.random;
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
