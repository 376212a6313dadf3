import { seeded } from '../core/random.js';
import { checkKeys, count, invalid, mistyped, nonNegative, optionsObject } from '../core/validate.js';
import { isLimitExceededError } from '../resilience/errors.js';
import { asMechanism } from '../retry/guard.js';
import type { RateController } from '../retry/options.js';
import { pipeline } from '../retry/pipeline.js';
import { timeout } from '../retry/timeout.js';
import { detached } from './detached.js';
import { bump, type LatencySummary, summarize } from './latency.js';
import { runLength } from './limits.js';
import { type NetworkModel, networkDelay } from './network.js';
import type { SimEnvironment } from './overload.js';
import { type ProgressCallback, progressOption } from './progress.js';
import { SimClock } from './sim-clock.js';

/** Options of {@link simulateBrownout}. Durations in ms. */
export interface BrownoutOptions {
  /** Requests the server works on at once; more wait in its queue. Default 8. */
  readonly capacity?: number;
  /** Time a request takes while nobody waits. Default 100. */
  readonly serviceMs?: number;
  /** A request that starts while more than `capacity` others wait takes this many times longer. Default 10. */
  readonly slowdown?: number;
  /** Offered load as a multiple of the capacity (`capacity / serviceMs`), Poisson arrivals. Default 1.5. */
  readonly load?: number;
  /** Calls arrive during this time; the run then lets the last ones finish. Default 60,000. */
  readonly durationMs?: number;
  /** Each call's attempt timeout (a timeout is a failure, not goodput). Default 20 × `serviceMs`. */
  readonly attemptTimeoutMs?: number;
  /**
   * The mechanism: a concurrency limit (or any guard `{ acquire, record, release }`) shared by every call, or a factory given
   * the simulation's clock: `({ clock }) => concurrencyLimit({ algorithm: vegas(), clock })`.
   * Default: none.
   */
  readonly limit?: RateController | ((env: SimEnvironment) => RateController);
  /** One-way network delay. Default `|N(10, 2)|` ms. */
  readonly network?: NetworkModel;
  /** Width of the time series' bins. Default 1000. */
  readonly binMs?: number;
  /** Seed of the run's `seeded()` generator. Default 1. */
  readonly seed?: number;
  readonly onProgress?: ProgressCallback;
}

/** One bin of {@link BrownoutResult.series}. */
export interface BrownoutBin {
  readonly startMs: number;
  /** Successful calls that ended in the bin, per second, ÷ capacity. */
  readonly goodput: number;
  /** p99 latency of the calls that succeeded in the bin; null if none did. */
  readonly p99Ms: number | null;
  /** Requests in the server (working and waiting) at the end of the bin. */
  readonly inServer: number;
  /** The limit's `limit` at the end of the bin, when it has one. */
  readonly limit: number | null;
}

/** What {@link simulateBrownout} measured. */
export interface BrownoutResult extends LatencySummary {
  /** Requests a second the server completes while not overloaded. */
  readonly capacityPerSecond: number;
  readonly offeredPerSecond: number;
  readonly calls: number;
  readonly succeeded: number;
  /** Calls the limit refused (`LimitExceededError`). */
  readonly refused: number;
  /** Calls that failed otherwise (timed out). */
  readonly failed: number;
  /** Successes a second ÷ capacity. */
  readonly goodput: number;
  /** The most requests in the server at once, working and waiting. */
  readonly peakInServer: number;
  /** The limit's `limit` at the end, when it has one. */
  readonly finalLimit: number | null;
  readonly binMs: number;
  readonly series: readonly BrownoutBin[];
}

/**
 * A brownout, for the concurrency limit: a server of fixed `capacity` — that many requests at a time, `serviceMs`
 * each, the rest in a FIFO queue — thrashes when overloaded: a request that starts while more than
 * `capacity` others wait takes `slowdown` × longer, so throughput falls to a tenth just when the load is highest and
 * the queue grows without bound. Calls arrive open-loop (Poisson, `load` × capacity) and each
 * runs once through ebb's real `retry()` with an attempt timeout, optionally behind a `limit`
 * (a `concurrencyLimit()` from ebb/resilience) on a virtual clock. A queued request whose client
 * gave up is dropped, as a server drops a closed connection. Deterministic by `seed`.
 *
 * `bench/figures/brownout.mjs` runs the same server over real sockets.
 *
 * @example
 * const none = await simulateBrownout({ load: 1.5 });
 * const limited = await simulateBrownout({ load: 1.5, limit: ({ clock }) => concurrencyLimit({ algorithm: vegas(), clock }) });
 * none.goodput; limited.goodput; limited.p99Ms;
 */
export async function simulateBrownout(options?: BrownoutOptions): Promise<BrownoutResult> {
  const where = 'simulateBrownout()';
  const o = optionsObject(where, options) as BrownoutOptions;
  checkKeys(where, o, [
    'capacity',
    'serviceMs',
    'slowdown',
    'load',
    'durationMs',
    'attemptTimeoutMs',
    'limit',
    'network',
    'binMs',
    'seed',
    'onProgress',
  ]);
  const capacity = count(where, 'capacity', o.capacity, 8, 1, false, 'Requests at a time, such as 8.');
  const serviceMs = nonNegative(where, 'serviceMs', o.serviceMs, 100, false);
  if (serviceMs === 0) invalid(where, 'serviceMs', 0, 'a number > 0', 'Such as 100.');
  const slowdown = nonNegative(where, 'slowdown', o.slowdown, 10, false);
  if (slowdown < 1) invalid(where, 'slowdown', slowdown, 'a number >= 1', 'Such as 10.');
  const load = nonNegative(where, 'load', o.load, 1.5, false);
  if (load === 0) invalid(where, 'load', 0, 'a number > 0', 'Such as 1.5 for 150 % of capacity.');
  const durationMs = nonNegative(where, 'durationMs', o.durationMs, 60_000, false);
  const attemptTimeoutMs = nonNegative(where, 'attemptTimeoutMs', o.attemptTimeoutMs, 20 * serviceMs, false);
  if (attemptTimeoutMs === 0) invalid(where, 'attemptTimeoutMs', 0, 'a number > 0', 'Such as 2000.');
  const binMs = nonNegative(where, 'binMs', o.binMs, 1_000, false);
  if (binMs === 0) invalid(where, 'binMs', 0, 'a number > 0', 'Such as 1000 for one-second bins.');
  runLength(where, durationMs, (load * capacity) / serviceMs, binMs);
  const seed = count(where, 'seed', o.seed, 1, 0, false, 'Any whole number; equal seeds give equal runs.');
  const onProgress = progressOption(where, o.onProgress);
  if (o.limit !== undefined && typeof o.limit !== 'function' && (typeof o.limit !== 'object' || o.limit === null)) {
    mistyped(where, 'limit', o.limit, 'a guard or a factory ({ clock, random }) => guard', 'Use concurrencyLimit().');
  }

  const clock = new SimClock();
  const random = seeded(seed);
  const env: SimEnvironment = Object.freeze({ clock, random });
  const limit = typeof o.limit === 'function' ? o.limit(env) : o.limit;
  const delay = networkDelay(where, o.network, random);
  // One attempt a call: the limit (when there is one) around the attempt's timeout, so a slot is
  // held only while the attempt runs; a refusal ends the call (it counts as refused).
  const bounded = timeout(attemptTimeoutMs, { clock });
  const call = pipeline(limit ? [asMechanism(limit), bounded] : [bounded]);
  const capacityPerSecond = (capacity * 1_000) / serviceMs;
  const rate = (load * capacityPerSecond) / 1_000; // arrivals per ms

  let busy = 0;
  let peakInServer = 0;
  const waiting: (() => void)[] = [];
  const serve = (answer: () => void): void => {
    busy++;
    clock.at(clock.now() + serviceMs * (waiting.length > capacity ? slowdown : 1), () => {
      busy--;
      answer();
      const next = waiting.shift();
      if (next) serve(next);
    });
  };
  // One request: it reaches the server after a network delay, waits for a worker, is served, and
  // its answer takes another delay. A client that gives up takes its request out of the queue.
  const request = ({ signal }: { signal: AbortSignal }): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const answer = (): void => clock.at(clock.now() + delay(), () => resolve());
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      clock.at(clock.now() + delay(), () => {
        if (signal.aborted) return;
        if (busy < capacity) serve(answer);
        else {
          waiting.push(answer);
          signal.addEventListener(
            'abort',
            () => {
              const i = waiting.indexOf(answer);
              if (i >= 0) waiting.splice(i, 1);
            },
            { once: true },
          );
        }
        if (busy + waiting.length > peakInServer) peakInServer = busy + waiting.length;
      });
    });

  const latencies: number[] = [];
  const byBin: number[][] = [];
  const okBins: number[] = [];
  let calls = 0;
  let refused = 0;
  let failed = 0;
  const arrive = (): void => {
    calls++;
    const start = clock.now();
    call.execute(request).then(
      () => {
        const now = clock.now();
        latencies.push(now - start);
        bump(okBins, binMs, now);
        const b = Math.floor(now / binMs);
        const bin = byBin[b] ?? [];
        bin.push(now - start);
        byBin[b] = bin;
      },
      (error: unknown) => {
        if (isLimitExceededError(error)) refused++;
        else failed++;
      },
    );
  };
  // Poisson arrivals: exponential gaps, 1 − u in (0, 1] keeps the logarithm finite.
  for (let t = -Math.log(1 - random()) / rate; t < durationMs; t += -Math.log(1 - random()) / rate) {
    clock.at(t, arrive);
  }
  const inServerAt: number[] = [];
  const limitAt: (number | null)[] = [];
  const bins = Math.ceil(durationMs / binMs);
  const limitOf = (): number | null => {
    const l = (limit as { limit?: unknown } | undefined)?.limit;
    return typeof l === 'number' ? l : null;
  };
  for (let b = 0; b < bins; b++) {
    clock.at(Math.min((b + 1) * binMs, durationMs), () => {
      inServerAt[b] = busy + waiting.length;
      limitAt[b] = limitOf();
    });
  }
  const horizon = durationMs + 2 * attemptTimeoutMs + 60_000;
  await clock.run(Infinity, onProgress ? (now) => onProgress(Math.min(now, horizon), horizon) : undefined);
  onProgress?.(horizon, horizon);

  const series: BrownoutBin[] = [];
  const perSecond = 1_000 / binMs;
  for (let b = 0; b < bins; b++) {
    const inBin = byBin[b] ?? [];
    series.push({
      startMs: b * binMs,
      goodput: ((okBins[b] ?? 0) * perSecond) / capacityPerSecond,
      p99Ms: summarize(inBin).p99Ms,
      inServer: inServerAt[b] ?? 0,
      limit: limitAt[b] ?? null,
    });
  }
  return detached({
    capacityPerSecond,
    offeredPerSecond: load * capacityPerSecond,
    calls,
    succeeded: latencies.length,
    refused,
    failed,
    goodput: latencies.length / (durationMs / 1_000) / capacityPerSecond,
    ...summarize(latencies),
    peakInServer,
    finalLimit: limitOf(),
    binMs,
    series,
  });
}
