import { checkKeys, count, inRange, invalid, optionsObject } from '../core/validate.js';
import { bounds, type LimitAlgorithm } from './limit-algorithm.js';

/** Options of {@link bdp}. */
export interface BdpOptions {
  /**
   * Starting limit, kept until that many requests have completed. Default 1: from there the limit
   * grows by at most 25 % a round trip (to 50 in 18 at the least), and a small server is never
   * pushed past what it has shown it completes while the limit learns. A higher start reaches a large service sooner, but
   * holds until that many requests completed: 20 against a server of 6 slots that thrashes once
   * its queue passes 6 kept it thrashing (4 % of its capacity served, docs/resilience.md). Pass
   * what you know the service holds at once.
   */
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
 * **When to use:** the default of `concurrencyLimit()`: a service whose overload shows late in
 * its latency (a thrash, a fixed pool behind a deep queue), or a client that wants no queue of its
 * own: the gain keeps a quarter of the product waiting at the service. **Gotchas:** the limit is
 * `initialLimit` (default 1) until that many requests have completed, then grows 25 % a round
 * trip at most: a large, slow service is reached only after seconds (40 slots at 400 ms: a limit
 * of 26–31 after 8 s, measured), refusing what does not fit meanwhile — pass `initialLimit` when
 * you know its size; every
 * `probeRounds` round trips it halves for two (about 1–2 % of the throughput).
 *
 * @example
 * const limiter = concurrencyLimit({ algorithm: bdp({ initialLimit: 4 }) });
 * await pipeline([retrying(), limiter]).execute(({ signal }) => fetch(url, { signal }));
 */
export function bdp(options?: BdpOptions): LimitAlgorithm {
  const where = 'bdp()';
  const o = optionsObject(where, options) as BdpOptions;
  checkKeys(where, o, ['initialLimit', 'minLimit', 'maxLimit', 'gain', 'rounds', 'probeRounds']);
  const { min, max, initial } = bounds(where, o, 1, 1_000, 1);
  const gain = inRange(where, 'gain', o.gain, 1.25, 1, 4, 'For example 1.25.');
  const rounds = count(where, 'rounds', o.rounds, 10, 1, false, 'For example 10.');
  if (rounds > 1_000) invalid(where, 'rounds', rounds, 'a whole number from 1 to 1000', 'For example 10.');
  const probeRounds = count(where, 'probeRounds', o.probeRounds, 100, 2, true, 'For example 100.');
  let limit = initial;
  let total = 0; // successful samples seen: BBR's C.delivered
  let roundEnd = 0; // BBR's next_round_delivered
  let round = 0;
  let sum = 0; // the current round's rate samples
  let n = 0;
  const means = new Float64Array(rounds); // the mean rate of each of the last rounds
  let minRtt = Infinity;
  let nextProbe = probeRounds;
  let probeFrom = -1; // while probing: the count the probe started at
  let probeEnd = 0;
  let probeMin = Infinity;
  let best = 0; // the largest of `means`, found again only when a round ends
  // The current round's mean counts once half the limit has reported (fewer samples are too noisy):
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
        // `best` is the largest of `means` between round ends: it moves only with the round that
        // ended and the one that leaves the window (scanned again only when that one was the best).
        if (n > 0) {
          const mean = sum / n;
          means[round % rounds] = mean;
          if (mean > best) best = mean;
        }
        round++;
        const leaving = means[round % rounds] as number;
        means[round % rounds] = 0;
        if (leaving === best) {
          best = 0;
          for (let i = 0; i < rounds; i++) if ((means[i] as number) > best) best = means[i] as number;
        }
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
