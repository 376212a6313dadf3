import { seeded } from '../core/random.js';
import { checkKeys, count, inRange, invalid, mistyped, nonNegative, optionsObject } from '../core/validate.js';
import type { Hedging } from '../resilience/hedging.js';
import { detached } from './detached.js';
import { type LatencySummary, summarize } from './latency.js';
import { runLength } from './limits.js';
import { type NetworkModel, networkDelay } from './network.js';
import type { SimEnvironment } from './overload.js';
import { type ProgressCallback, progressOption } from './progress.js';
import { SimClock } from './sim-clock.js';

/** Options of {@link simulateSlowTail}. Durations in ms. */
export interface SlowTailOptions {
  /** Workers, each calling in a loop (a call, then the next). Default 8. */
  readonly workers?: number;
  /** Time the server takes for a fast response (the median, with `serviceSigma`). Default 10. */
  readonly serviceMs?: number;
  /**
   * Spread of the fast responses: each takes `serviceMs × e^(σZ)`, Z standard normal — a
   * log-normal with median `serviceMs` — and a slow one `slowFactor` × its own draw. Default 0:
   * every fast response takes `serviceMs`. σ = 1 fits the one-server latencies of "The Tail at
   * Scale" (Dean and Barroso, CACM 2013, table 1: p50 1 ms, p95 5 ms, p99 10 ms).
   */
  readonly serviceSigma?: number;
  /** Share of responses that are slow, drawn per request. Default 0.05. */
  readonly slowShare?: number;
  /** A slow response takes this many times `serviceMs`. Default 20. */
  readonly slowFactor?: number;
  /** The workers call for this long. Default 60,000. */
  readonly durationMs?: number;
  /**
   * The mechanism: a `hedging()` from ebb/resilience shared by every call, or a factory given
   * the simulation's clock: `({ clock }) => hedging({ clock })`. Give it the simulation's clock,
   * or its delay runs on real time. Default: none.
   */
  readonly hedging?: Hedging | ((env: SimEnvironment) => Hedging);
  /** One-way network delay. Default `|N(1, 0.2)|` ms (a data centre). */
  readonly network?: NetworkModel;
  /** Seed of the run's `seeded()` generator. Default 1. */
  readonly seed?: number;
  readonly onProgress?: ProgressCallback;
}

/** What {@link simulateSlowTail} measured; latency is per call, end to end. */
export interface SlowTailResult extends LatencySummary {
  readonly calls: number;
  /** Requests the server received: calls plus hedges. */
  readonly requests: number;
  /** (requests − calls) ÷ calls. */
  readonly extraRequests: number;
  /** Requests whose client went away before the answer (the losers, aborted): the server stopped them. */
  readonly cancelled: number;
  /** The hedging delay at the end of the run; null without hedging. */
  readonly hedgeDelayMs: number | null;
  /** Every call's latency, ascending, for a distribution chart. */
  readonly latenciesMs: readonly number[];
}

/**
 * A slow tail, for hedging: a server answers in `serviceMs`, but a `slowShare` of its responses
 * take `slowFactor` × longer; `workers` call it in a loop for `durationMs` of virtual time,
 * plainly or through ebb's real `hedging()` (a second request after the hedging delay, the first
 * answer wins, the loser is aborted and the server stops it). Reports latency percentiles, the
 * extra requests hedging sent, and the losers cancelled. With `slowShare: 1` every response is
 * slow — an overload — and the hedging budget must hold the extra requests to its share.
 * Deterministic by `seed`.
 *
 * `bench/figures/slow-tail.mjs` runs the same server over real sockets.
 *
 * @example
 * const plain = await simulateSlowTail();
 * const hedged = await simulateSlowTail({ hedging: ({ clock }) => hedging({ percentile: 0.9, clock }) });
 * plain.p99Ms; hedged.p99Ms; hedged.extraRequests;
 */
export async function simulateSlowTail(options?: SlowTailOptions): Promise<SlowTailResult> {
  const where = 'simulateSlowTail()';
  const o = optionsObject(where, options) as SlowTailOptions;
  checkKeys(where, o, [
    'workers',
    'serviceMs',
    'serviceSigma',
    'slowShare',
    'slowFactor',
    'durationMs',
    'hedging',
    'network',
    'seed',
    'onProgress',
  ]);
  const workers = count(where, 'workers', o.workers, 8, 1, false, 'Such as 8.');
  const serviceMs = nonNegative(where, 'serviceMs', o.serviceMs, 10, false);
  if (serviceMs === 0) invalid(where, 'serviceMs', 0, 'a number > 0', 'Such as 10.');
  // A spread, not a duration: the same message below 0 and above 3.
  const sigma = inRange(where, 'serviceSigma', o.serviceSigma, 0, 0, 3, 'Such as 1.');
  const slowShare = inRange(where, 'slowShare', o.slowShare, 0.05, 0, 1, 'Such as 0.05 for 5 %.');
  const slowFactor = nonNegative(where, 'slowFactor', o.slowFactor, 20, false);
  if (slowFactor < 1) invalid(where, 'slowFactor', slowFactor, 'a number >= 1', 'Such as 20.');
  const durationMs = nonNegative(where, 'durationMs', o.durationMs, 60_000, false);
  runLength(where, durationMs, workers / serviceMs, Infinity);
  const seed = count(where, 'seed', o.seed, 1, 0, false, 'Any whole number; equal seeds give equal runs.');
  const onProgress = progressOption(where, o.onProgress);

  const clock = new SimClock();
  const random = seeded(seed);
  const env: SimEnvironment = Object.freeze({ clock, random });
  const hedger = typeof o.hedging === 'function' ? o.hedging(env) : o.hedging;
  if (hedger !== undefined && (typeof hedger !== 'object' || hedger === null || typeof hedger.run !== 'function')) {
    mistyped(where, 'hedging', hedger, 'a hedging() or a factory ({ clock }) => hedging()', 'Use hedging({ clock }).');
  }
  const delay = networkDelay(where, o.network ?? { meanMs: 1, sdMs: 0.2 }, random);
  // e^(σZ) by Box–Muller (one deviate a draw; 1 − u keeps the logarithm finite). Without a
  // spread no draw is made, so the fixed-service runs meet the same draws as before.
  const spread = (): number =>
    sigma === 0 ? 1 : Math.exp(sigma * Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random()));

  let requests = 0;
  let cancelled = 0;
  // One request: it reaches the server after a network delay and is answered after its service
  // time and another delay. Aborted, it rejects at once and the server stops working on it.
  const request = (signal: AbortSignal | undefined): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      let live = true;
      let answered = false;
      signal?.addEventListener(
        'abort',
        () => {
          if (!answered) cancelled++;
          live = false;
          reject(signal.reason);
        },
        { once: true },
      );
      clock.at(clock.now() + delay(), () => {
        if (!live) return;
        requests++;
        const slow = random() < slowShare;
        clock.at(clock.now() + serviceMs * spread() * (slow ? slowFactor : 1), () => {
          if (!live) return;
          answered = true;
          clock.at(clock.now() + delay(), () => live && resolve());
        });
      });
    });

  const latencies: number[] = [];
  const worker = async (): Promise<void> => {
    while (clock.now() < durationMs) {
      const start = clock.now();
      try {
        await (hedger ? hedger.run(({ signal }) => request(signal), { method: 'GET' }) : request(undefined));
        latencies.push(clock.now() - start);
      } catch {
        // Every request here succeeds; a failure would be the hedger's, and is not a latency.
      }
    }
  };
  const done = Promise.all(Array.from({ length: workers }, worker));
  await clock.run(Infinity, onProgress ? (now) => onProgress(Math.min(now, durationMs), durationMs) : undefined);
  await done;
  onProgress?.(durationMs, durationMs);
  const calls = latencies.length;
  const summary = summarize(latencies);
  return detached({
    calls,
    requests,
    extraRequests: calls === 0 ? 0 : (requests - calls) / calls,
    cancelled,
    hedgeDelayMs: hedger ? hedger.delayMs : null,
    ...summary,
    latenciesMs: latencies,
  });
}
