import { exponential } from '../backoff/exponential.js';
import { fullJitter } from '../backoff/jitter-full.js';
import { seeded } from '../core/random.js';
import { checkKeys, count, invalid, mistyped, nonNegative, optionsObject } from '../core/validate.js';
import type { CircuitBreaker, StateChange } from '../resilience/circuit-breaker.js';
import { isBrokenCircuitError } from '../resilience/errors.js';
import { defaultIsFailure } from '../retry/errors.js';
import { pipeline } from '../retry/pipeline.js';
import { retrying } from '../retry/retrying.js';
import { detached } from './detached.js';
import { bump } from './latency.js';
import { runLength } from './limits.js';
import { type NetworkModel, networkDelay } from './network.js';
import { type SimEnvironment, SimulatedServerError } from './overload.js';
import { type ProgressCallback, progressOption } from './progress.js';
import { SimClock } from './sim-clock.js';

/** Options of {@link simulateBreakerOutage}. Durations in ms. */
export interface BreakerOutageOptions {
  /** Workers, each calling in a loop: a call, then `thinkMs`, then the next. Default 10. */
  readonly workers?: number;
  /** Pause between a worker's calls. Default 20. */
  readonly thinkMs?: number;
  /** Time the server takes for an answer. Default 5. */
  readonly serviceMs?: number;
  /** The outage starts here (the service answers 503 at once). Default 5,000. */
  readonly outageStartMs?: number;
  /** It lasts this long. Default 30,000. */
  readonly outageMs?: number;
  /** The workers call for this long. Default 60,000. */
  readonly durationMs?: number;
  /**
   * The mechanism: a `circuitBreaker()` from ebb/resilience shared by every worker (inside each
   * call's retry in a pipeline, so every attempt passes it), or a factory given the simulation's
   * clock and randomness:
   * `({ clock, random }) => circuitBreaker({ clock, random })`. Default: none.
   */
  readonly breaker?: CircuitBreaker | ((env: SimEnvironment) => CircuitBreaker);
  /** One-way network delay. Default `|N(1, 0.2)|` ms. */
  readonly network?: NetworkModel;
  /** Width of the time series' bins. Default 1000. */
  readonly binMs?: number;
  /** Seed of the run's `seeded()` generator. Default 1. */
  readonly seed?: number;
  readonly onProgress?: ProgressCallback;
}

/** One open period of the breaker, and what reached the service from its start to the next opening or closing. */
export interface OpenPeriod {
  readonly atMs: number;
  /** The period the breaker drew. */
  readonly openMs: number;
  /** Requests sent from the opening until the next opening or the closing: the probes. */
  readonly sent: number;
}

/** One bin of {@link BreakerOutageResult.series} (the bins cover `durationMs`; the answers to the last calls may come after it). Rates per second. */
export interface BreakerOutageBin {
  readonly startMs: number;
  /** Requests reaching the service. */
  readonly requestsPerSecond: number;
  /** Calls that succeeded. */
  readonly successesPerSecond: number;
}

/** What {@link simulateBreakerOutage} measured. */
export interface BreakerOutageResult {
  /** Requests that reached the service. */
  readonly requests: number;
  /** Requests that reached it while it was down. */
  readonly deadRequests: number;
  readonly outageStartMs: number;
  readonly outageMs: number;
  /** Calls (operations) that succeeded, that failed, and that the open breaker refused at once. */
  readonly succeeded: number;
  readonly failed: number;
  readonly refused: number;
  /** Each opening, in order (empty without a breaker). */
  readonly openPeriods: readonly OpenPeriod[];
  /** The open period running when the service recovered; null if the breaker was not open then. */
  readonly openAtRecoveryMs: number | null;
  /**
   * From the recovery to full traffic: the breaker closing after it (no breaker: the first
   * success after it); null if that never came.
   */
  readonly fullTrafficAfterMs: number | null;
  readonly binMs: number;
  readonly series: readonly BreakerOutageBin[];
}

/**
 * An outage: `workers` call a service in a loop through ebb's real retry (two attempts, 50 ms
 * full-jitter backoff), optionally with a `circuitBreaker()` inside it (`pipeline([retrying(…),
 * breaker])`; a refusal ends the call), on a virtual clock. The service answers 503 from `outageStartMs` for `outageMs`, then
 * recovers. Reports the requests that reached the dead service, each open period and the
 * requests it let through (the target: one probe), and the time from recovery to full traffic.
 * Deterministic by `seed`.
 *
 * `bench/figures/resilience.mjs` runs the same outage over real sockets, beside cockatiel.
 *
 * @example
 * const plain = await simulateBreakerOutage();
 * const guarded = await simulateBreakerOutage({ breaker: ({ clock, random }) => circuitBreaker({ clock, random }) });
 * plain.deadRequests; guarded.deadRequests; guarded.fullTrafficAfterMs;
 */
export async function simulateBreakerOutage(options?: BreakerOutageOptions): Promise<BreakerOutageResult> {
  const where = 'simulateBreakerOutage()';
  const o = optionsObject(where, options) as BreakerOutageOptions;
  checkKeys(where, o, [
    'workers',
    'thinkMs',
    'serviceMs',
    'outageStartMs',
    'outageMs',
    'durationMs',
    'breaker',
    'network',
    'binMs',
    'seed',
    'onProgress',
  ]);
  const workers = count(where, 'workers', o.workers, 10, 1, false, 'Such as 10.');
  const thinkMs = nonNegative(where, 'thinkMs', o.thinkMs, 20, false);
  const serviceMs = nonNegative(where, 'serviceMs', o.serviceMs, 5, false);
  const outageStartMs = nonNegative(where, 'outageStartMs', o.outageStartMs, 5_000, false);
  const outageMs = nonNegative(where, 'outageMs', o.outageMs, 30_000, false);
  const durationMs = nonNegative(where, 'durationMs', o.durationMs, 60_000, false);
  const binMs = nonNegative(where, 'binMs', o.binMs, 1_000, false);
  if (binMs === 0) invalid(where, 'binMs', 0, 'a number > 0', 'Such as 1000 for one-second bins.');
  // A loop with no pause and no network time would never let virtual time move.
  if (thinkMs === 0 && serviceMs === 0) invalid(where, 'thinkMs', 0, 'a number > 0 when serviceMs is 0', 'Such as 20.');
  runLength(where, durationMs, workers / (thinkMs + serviceMs), binMs);
  const seed = count(where, 'seed', o.seed, 1, 0, false, 'Any whole number; equal seeds give equal runs.');
  const onProgress = progressOption(where, o.onProgress);

  const clock = new SimClock();
  const random = seeded(seed);
  const env: SimEnvironment = Object.freeze({ clock, random });
  const breaker = typeof o.breaker === 'function' ? o.breaker(env) : o.breaker;
  if (breaker !== undefined && (typeof breaker !== 'object' || breaker === null || !('subscribe' in breaker))) {
    mistyped(where, 'breaker', breaker, 'a circuitBreaker() or a factory ({ clock, random }) => circuitBreaker()');
  }
  const delay = networkDelay(where, o.network ?? { meanMs: 1, sdMs: 0.2 }, random);
  // Two attempts, 50 ms full-jitter backoff, the breaker inside the retry. Its refusal ends the
  // call at once (the worker counts it as refused) rather than being backed off: the simulation
  // measures the breaker's fail-fast, which a retry waiting out the open period would hide.
  const retry = retrying({
    backoff: exponential({ initialDelayMs: 50, jitter: fullJitter, maxAttempts: 2 }),
    clock,
    random,
    isFailure: (outcome) => !isBrokenCircuitError(outcome.error) && defaultIsFailure(outcome),
    // The breaker alone: the default retry budget would cut the dead service's load too.
    budget: false,
  });
  const call = pipeline(breaker ? [retry, breaker] : [retry]);
  const recoveryMs = outageStartMs + outageMs;

  const opened: { atMs: number; openMs: number; sent: number }[] = [];
  let current: { sent: number } | undefined;
  let closedAfterRecovery: number | undefined;
  breaker?.subscribe((change: StateChange) => {
    if (change.to === 'open') {
      const period = { atMs: change.at, openMs: change.openMs ?? 0, sent: 0 };
      opened.push(period);
      current = period;
    } else if (change.to === 'closed') {
      current = undefined;
      if (change.at >= recoveryMs && closedAfterRecovery === undefined) closedAfterRecovery = change.at;
    }
  });

  const arrivals: number[] = [];
  const okBins: number[] = [];
  let requests = 0;
  let deadRequests = 0;
  let firstSuccessAfterRecovery: number | undefined;
  const request = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (current) current.sent++;
      clock.at(clock.now() + delay(), () => {
        const t = clock.now();
        requests++;
        bump(arrivals, binMs, t);
        const down = t >= outageStartMs && t < recoveryMs;
        if (down) deadRequests++;
        clock.at(t + (down ? 0 : serviceMs) + delay(), () =>
          down ? reject(new SimulatedServerError('outage')) : resolve(),
        );
      });
    });

  let succeeded = 0;
  let failed = 0;
  let refused = 0;
  const worker = async (): Promise<void> => {
    while (clock.now() < durationMs) {
      try {
        await call.execute(request);
        succeeded++;
        const t = clock.now();
        bump(okBins, binMs, t);
        if (t >= recoveryMs && firstSuccessAfterRecovery === undefined) firstSuccessAfterRecovery = t;
      } catch (error) {
        if (isBrokenCircuitError(error)) refused++;
        else failed++;
      }
      await clock.sleep(thinkMs);
    }
  };
  const done = Promise.all(Array.from({ length: workers }, worker));
  await clock.run(Infinity, onProgress ? (now) => onProgress(Math.min(now, durationMs), durationMs) : undefined);
  await done;
  onProgress?.(durationMs, durationMs);

  const last = opened.filter((p) => p.atMs < recoveryMs).at(-1);
  const openAtRecoveryMs = last && last.atMs + last.openMs >= recoveryMs ? last.openMs : null;
  const restoredAt = breaker ? closedAfterRecovery : firstSuccessAfterRecovery;
  const bins = Math.ceil(durationMs / binMs);
  const perSecond = 1_000 / binMs;
  const series: BreakerOutageBin[] = [];
  for (let b = 0; b < bins; b++) {
    series.push({
      startMs: b * binMs,
      requestsPerSecond: (arrivals[b] ?? 0) * perSecond,
      successesPerSecond: (okBins[b] ?? 0) * perSecond,
    });
  }
  return detached({
    requests,
    deadRequests,
    outageStartMs,
    outageMs,
    succeeded,
    failed,
    refused,
    openPeriods: opened.map((p) => ({ atMs: p.atMs, openMs: p.openMs, sent: p.sent })),
    openAtRecoveryMs,
    fullTrafficAfterMs: restoredAt === undefined ? null : restoredAt - recoveryMs,
    binMs,
    series,
  });
}
