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

/** Options of {@link bdp}. */
export interface BdpOptions {
  /** Starting limit, kept until that many requests have completed. Default 20. */
  readonly initialLimit?: number;
  /** Lowest limit. Default 1. */
  readonly minLimit?: number;
  /** Highest limit. Default 1000. */
  readonly maxLimit?: number;
  /** The limit is `gain` × the bandwidth-delay product, from 1 to 4. Default 1.25. */
  readonly gain?: number;
  /** Round trips the delivery-rate maximum is kept for. Default 10 (BBR's bandwidth filter). */
  readonly rounds?: number;
  /** Re-measure the no-load RTT every this many round trips (at half the limit). Default 100. */
  readonly probeRounds?: number;
}

/**
 * Little's law for the limit: the service has shown it completes `rate` requests a second and
 * answers in `minRtt` when nothing queues, so `rate × minRtt` requests in flight keep it busy (the
 * bandwidth-delay product of BBR: N. Cardwell et al., "BBR: Congestion-Based Congestion
 * Control", ACM Queue 2016; draft-ietf-ccwg-bbr). The limit is `⌈gain × rate × minRtt⌉`:
 * `rate` the largest of the last `rounds` round trips' mean delivery rates (`delivered / rttMs`
 * of each sample; the current round counts once half the limit has reported in it). BBR keeps
 * the largest sample, but one sample that counts a burst of late completions would raise the
 * limit past a thrash point, so each round is averaged first;
 * `minRtt` the smallest RTT, re-measured every `probeRounds` round trips by holding the
 * limit at half for two round trips (BBR's ProbeRTT). The limit grows by at most one a sample (as
 * BBR's cwnd), so at most `gain` × a round trip while the service keeps up; it can never pass
 * what the service completes, whether or not its latency has shown the overload yet. A drop
 * forgets the older rounds' rates.
 *
 * Unlike AIMD, Vegas and Gradient2, which react to what has come back (a drop, a slower RTT), this
 * bound holds while the slow responses are still in flight: a service that thrashes when its
 * queue passes a point is never pushed past `gain` × its capacity. Needs the `delivered` field
 * of each sample (`concurrencyLimit()` gives it).
 *
 * **When to use:** a service whose overload shows late in its latency (a thrash, a fixed pool
 * behind a deep queue), or a client that wants no queue of its own: the gain keeps a quarter of
 * the product waiting at the service. **Gotchas:** the limit is `initialLimit` until that many
 * requests have completed, so start low against a small service; every `probeRounds` round trips
 * it halves for two (about 1–2 % of the throughput).
 *
 * @example
 * const limiter = concurrencyLimit({ algorithm: bdp({ initialLimit: 4 }) });
 * await retry(({ signal }) => fetch(url, { signal }), { rate: limiter });
 */
export function bdp(options?: BdpOptions): LimitAlgorithm {
  const where = 'bdp()';
  const o = optionsObject(where, options) as BdpOptions;
  checkKeys(where, o, ['initialLimit', 'minLimit', 'maxLimit', 'gain', 'rounds', 'probeRounds']);
  const { min, max, initial } = bounds(where, o, 1, 1_000, 20);
  const gain = inRange(where, 'gain', o.gain, 1.25, 1, 4, 'For example 1.25.');
  const rounds = count(where, 'rounds', o.rounds, 10, 1, false, 'For example 10.');
  if (rounds > 1_000) invalid(where, 'rounds', rounds, 'a whole number from 1 to 1000', 'For example 10.');
  const probeRounds = count(where, 'probeRounds', o.probeRounds, 100, 2, true, 'For example 100.');
  let limit = initial;
  let total = 0; // successful samples seen: BBR's C.delivered
  let roundEnd = 0; // BBR's next_round_delivered
  let round = 0;
  let sum = 0; // this round's rate samples
  let n = 0;
  const means = new Float64Array(rounds); // the mean rate of each of the last rounds
  let minRtt = Infinity;
  let nextProbe = probeRounds;
  let probeFrom = -1; // while probing: the count the probe started at
  let probeEnd = 0;
  let probeMin = Infinity;
  let best = 0; // the largest of `means`, found again only when a round ends
  // This round's mean counts once half the limit has reported (fewer samples are too noisy):
  // waiting for the round to end would make the limit grow every other round trip.
  const rate = (): number => {
    const now = n > 0 && (best === 0 || n * 2 >= limit) ? sum / n : 0;
    return now > best ? now : best;
  };
  return {
    get limit() {
      return limit;
    },
    update({ rttMs, dropped, delivered }) {
      if (!(rttMs > 0 && rttMs < Infinity)) return;
      if (!dropped) total++;
      const flown = typeof delivered === 'number' && delivered > 0 && delivered <= total ? delivered : 0;
      const admittedAt = total - flown; // the count when this request was admitted
      if (admittedAt >= roundEnd) {
        // A request admitted after the round began has come back: a round trip is over.
        if (n > 0) means[round % rounds] = sum / n;
        round++;
        means[round % rounds] = 0;
        best = 0;
        for (let i = 0; i < rounds; i++) if ((means[i] as number) > best) best = means[i] as number;
        roundEnd = total;
        sum = 0;
        n = 0;
      }
      if (dropped) {
        means.fill(0);
        best = 0;
      }
      if (flown > 0) {
        sum += flown / rttMs;
        n++;
      }
      if (probeFrom >= 0) {
        // ProbeRTT: samples admitted since the probe began saw at most half the limit in flight.
        if (admittedAt >= probeFrom && rttMs < probeMin) probeMin = rttMs;
        if (round >= probeEnd && probeMin < Infinity) {
          minRtt = probeMin;
          probeFrom = -1;
          nextProbe = round + probeRounds;
        }
      } else if (rttMs < minRtt) minRtt = rttMs;
      else if (round >= nextProbe && total >= initial) {
        probeFrom = total;
        probeEnd = round + 2;
        probeMin = Infinity;
      }
      if (total < initial) return; // too few completions to have seen the service's rate
      const target = Math.ceil(gain * rate() * minRtt);
      const ceiling = probeFrom >= 0 ? Math.ceil(target / 2) : target;
      limit = Math.max(min, Math.min(max, limit + 1, ceiling));
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
