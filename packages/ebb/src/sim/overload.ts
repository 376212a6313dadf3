import type { BackoffPolicy } from '../backoff/backoff.js';
import { defaultBackoff } from '../backoff/default.js';
import type { Clock } from '../core/clock.js';
import { type Random, seeded } from '../core/random.js';
import { checkKeys, count, invalid, mistyped, nonNegative, optionsObject } from '../core/validate.js';
import { defaultIsFailure, isRetryError, type Result } from '../retry/errors.js';
import { asMechanism } from '../retry/guard.js';
import type { AttemptContext, RateController, RetryBudget, RetryOptions } from '../retry/options.js';
import { pipeline } from '../retry/pipeline.js';
import { retryingAs } from '../retry/retrying.js';
import { timeout } from '../retry/timeout.js';
import { detached } from './detached.js';
import { atMost, SIM_LIMITS } from './limits.js';
import { type NetworkModel, networkDelay } from './network.js';
import { type OverloadShape, overloadRequests } from './overload-estimate.js';
import type { ProgressCallback } from './progress.js';
import { progressOption } from './progress.js';
import { SimClock } from './sim-clock.js';

/** What a budget or rate-controller factory receives: the simulation's clock and randomness. */
export interface SimEnvironment {
  /** Virtual time: give it to anything that waits or measures time. */
  readonly clock: Clock;
  /** The run's seeded randomness. */
  readonly random: Random;
}

/**
 * The error the simulated server answers with: HTTP 503, either because it is down
 * (`code: 'outage'`) or because its queue is full and it sheds the request at once
 * (`code: 'overloaded'`, `throttled: true`, so that a rate controller records a throttle, with
 * `retryAfterMs` when the server sends a hint).
 */
export class SimulatedServerError extends Error {
  override readonly name = 'SimulatedServerError';
  /** Always 503. */
  readonly status = 503;
  readonly code: 'outage' | 'overloaded';
  /** Set on load-shedding answers: a "back off" signal, as a 429 or a throttling error is. */
  readonly throttled: boolean;
  /** The server's `Retry-After`, in ms, when it sends one. */
  readonly retryAfterMs: number | undefined;

  constructor(code: 'outage' | 'overloaded', retryAfterMs?: number) {
    super(code === 'outage' ? '503 Service Unavailable (outage)' : '503 Service Unavailable (queue full)');
    this.code = code;
    this.throttled = code === 'overloaded';
    this.retryAfterMs = retryAfterMs;
  }
}

/** Options of {@link simulateOverload}. Durations in ms, rates per second. */
export interface OverloadOptions {
  /** M, the clients; each needs one successful request. Default 1000. */
  readonly clients?: number;
  /** Clients send their first request at times uniform in `[0, startWindowMs)`. Default 1000. */
  readonly startWindowMs?: number;
  /** C: requests the server completes per second, one at a time, first come first served. Default 100. */
  readonly capacityPerSecond?: number;
  /** Requests that may wait behind the one in service; more are shed at once with a 503. Default 100. */
  readonly queueLimit?: number;
  /** D: the server answers every request with a 503 from time 0 until `outageMs`. Default 10,000. */
  readonly outageMs?: number;
  /** The `Retry-After` the server sends when it sheds load, in ms. Default: none. */
  readonly retryAfterMs?: number;
  /** One-way network delay. Default `|N(10, 2)|` ms. */
  readonly network?: NetworkModel;
  /**
   * Each client's policy. Default `presets.default`. A policy that never stops
   * (`maxAttempts: Infinity`, no `maxElapsedMs`) retries until it succeeds or the horizon ends the run.
   */
  readonly backoff?: BackoffPolicy;
  /** Which failures to retry (the executor's `isFailure`). Default: the executor's (`defaultIsFailure`). */
  readonly isFailure?: RetryOptions['isFailure'];
  /** A retry budget shared by every client, or a factory given the simulation's clock. */
  readonly budget?: RetryBudget | ((env: SimEnvironment) => RetryBudget);
  /**
   * A rate controller (or any guard) shared by every client, or a factory given the simulation's
   * clock: every attempt passes it (`pipeline([retrying(…), rate])`); its refusal ends that
   * client's call at once.
   */
  readonly rate?: RateController | ((env: SimEnvironment) => RateController);
  /** Time limit of each attempt (a `timeout(ms)` inside the retry). Default: none. */
  readonly attemptTimeoutMs?: number;
  /** Width of the time series' bins. Default 1000. */
  readonly binMs?: number;
  /** The simulation stops here; clients still trying are reported as unfinished. Default 600,000 (10 min). */
  readonly horizonMs?: number;
  /** Seed of the run's `seeded()` generator. Default 1. */
  readonly seed?: number;
  /**
   * Called as the run goes: `done` requests simulated so far, out of `total`, the requests
   * {@link estimateOverloadRequests} expects (raised to `done` if the run sends more; equal to
   * `done` at the end). First called with `done` 0, before anything is simulated.
   */
  readonly onProgress?: ProgressCallback;
}

/** One bin of the time series. Rates are per second. */
export interface OverloadBin {
  /** Start of the bin, ms. */
  readonly startMs: number;
  /** Requests reaching the server. */
  readonly offeredPerSecond: number;
  /** Requests the server completed. */
  readonly servedPerSecond: number;
  /** Requests answered 503 (outage or shed). */
  readonly rejectedPerSecond: number;
  /** Clients served so far, at the end of the bin. */
  readonly clientsServed: number;
}

/** What {@link simulateOverload} measured. */
export interface OverloadResult {
  readonly clients: number;
  /** Requests that reached the server, every attempt of every client. */
  readonly requests: number;
  /** Retry amplification: requests sent ÷ requests needed (one per client). */
  readonly amplification: number;
  /** The busiest bin from the end of the outage on, in requests per second. */
  readonly peakOfferedPerSecondAfterRecovery: number;
  /** Server capacity, requests per second (for comparison with the peak). */
  readonly capacityPerSecond: number;
  readonly outageMs: number;
  /** Clients whose request succeeded. */
  readonly served: number;
  /** When the last client was served (ms), if every client was; otherwise null. */
  readonly allServedAtMs: number | null;
  /** When the last served client was served (ms); null if none was. */
  readonly lastServedAtMs: number | null;
  /** Clients that gave up (their policy, budget or classifier ended the operation). */
  readonly gaveUp: number;
  /** gaveUp ÷ clients. */
  readonly gaveUpShare: number;
  /** Why they gave up: RetryError reasons, and `fatal` for a failure the classifier would not retry. */
  readonly giveUpReasons: Readonly<Record<string, number>>;
  /** Clients still trying at the horizon. */
  readonly unfinished: number;
  /** The longest the server's queue got. */
  readonly peakQueue: number;
  readonly binMs: number;
  /** Load and service over time, one entry per bin. */
  readonly series: readonly OverloadBin[];
}

/** The options of a run, checked, with their defaults. */
function settingsOf(where: string, options: OverloadOptions | undefined) {
  const o = optionsObject(where, options) as OverloadOptions;
  checkKeys(where, o, [
    'clients',
    'startWindowMs',
    'capacityPerSecond',
    'queueLimit',
    'outageMs',
    'retryAfterMs',
    'network',
    'backoff',
    'isFailure',
    'budget',
    'rate',
    'attemptTimeoutMs',
    'binMs',
    'horizonMs',
    'seed',
    'onProgress',
  ]);
  const clients = atMost(
    where,
    'clients',
    count(where, 'clients', o.clients, 1_000, 1, false, 'Such as 1000.'),
    SIM_LIMITS.clients,
    'Such as 1000.',
  );
  const startWindowMs = nonNegative(where, 'startWindowMs', o.startWindowMs, 1_000);
  const capacity = nonNegative(where, 'capacityPerSecond', o.capacityPerSecond, 100);
  if (capacity === 0) invalid(where, 'capacityPerSecond', 0, 'a number > 0', 'Requests per second, such as 100.');
  const queueLimit = count(where, 'queueLimit', o.queueLimit, 100, 0, true, 'Requests that may wait, such as 100.');
  // + 0: a -0 given is reported back as 0.
  const outageMs = nonNegative(where, 'outageMs', o.outageMs, 10_000) + 0;
  const hint = o.retryAfterMs === undefined ? undefined : nonNegative(where, 'retryAfterMs', o.retryAfterMs, 0);
  const binMs = nonNegative(where, 'binMs', o.binMs, 1_000);
  if (binMs === 0) invalid(where, 'binMs', 0, 'a number > 0', 'Such as 1000 for one-second bins.');
  const horizonMs = atMost(
    where,
    'horizonMs',
    nonNegative(where, 'horizonMs', o.horizonMs, 600_000),
    SIM_LIMITS.horizonMs,
    'Simulated time is bounded by a day; such as 600000.',
  );
  const seed = count(where, 'seed', o.seed, 1, 0, false, 'Any whole number; equal seeds give equal runs.');
  const onProgress = progressOption(where, o.onProgress);
  const attemptTimeoutMs =
    o.attemptTimeoutMs === undefined
      ? undefined
      : nonNegative(where, 'attemptTimeoutMs', o.attemptTimeoutMs, 0, true, 'For example 5000.');
  if (attemptTimeoutMs === 0) invalid(where, 'attemptTimeoutMs', 0, 'a number > 0', 'Leave it out for no limit.');
  const isFailure = o.isFailure;
  if (isFailure !== undefined && typeof isFailure !== 'function') {
    mistyped(where, 'isFailure', isFailure, 'a function (outcome, context) => boolean');
  }
  networkDelay(where, o.network, Math.random); // checks the model before anything runs
  const backoff = o.backoff ?? defaultBackoff;
  const shape: OverloadShape = {
    clients,
    startWindowMs,
    capacityPerSecond: capacity,
    queueLimit,
    outageMs,
    horizonMs,
    roundTripMs: 2 * (o.network?.meanMs ?? 10),
    backoff,
    seed,
  };
  return { o, shape, capacity, hint, binMs, onProgress, attemptTimeoutMs, isFailure };
}

/**
 * The requests a run of {@link simulateOverload} with these options will send, estimated in a
 * few milliseconds without simulating it: to size a run (or draw its progress) before starting.
 * The model — each client retries at its policy's mean waits until the server, back from the
 * outage, serves it at its capacity (at the rate lockstep waves let through when the policy has
 * no jitter) — came within 0.9–1.3 × of the simulated count for Brooker's strategies and the
 * presets at 300 to 50,000 clients. Budgets and rate controllers are not modelled: with them a
 * run sends fewer. Options are checked as {@link simulateOverload} checks them.
 *
 * @example
 * estimateOverloadRequests({ clients: 50_000 }); // about 2.9 million: a run of about 40 s
 */
export function estimateOverloadRequests(options?: OverloadOptions): number {
  return overloadRequests(settingsOf('estimateOverloadRequests()', options).shape);
}

/**
 * A fleet against a recovering service, driven through ebb's real executor: M clients each
 * need one successful request and call `retry()` with the given policy, classifier, budget and
 * rate controller, on a virtual clock. The server is down (503 to everything) until `outageMs`;
 * afterwards it completes `capacityPerSecond` requests a second, one at a time, with up to
 * `queueLimit` waiting and anything beyond shed at once with a 503 — the AWS article's "queue up
 * to a limit, then NO WAIT". Messages cross the network in `|N(10, 2)|` ms each way.
 *
 * It reports retry amplification, the peak offered load after recovery, the time until every
 * client is served and the share that gave up, with a time series for charts. Without jitter,
 * clients that failed together retry together: a synchronized spike after recovery that full
 * jitter spreads out; a retry budget bounds the amplification.
 *
 * Budgets and rate controllers are any objects with the executor's `RetryBudget` and
 * `RateController` shapes (`ebb/rate` has several); pass a factory when one needs the
 * simulation's clock (and its seeded randomness): `rate: ({ clock, random }) => adaptiveRate({ clock, random })`.
 *
 * @example
 * const r = await simulateOverload({ backoff: presets.default, outageMs: 10_000 });
 * r.amplification; r.peakOfferedPerSecondAfterRecovery; r.gaveUpShare;
 */
export async function simulateOverload(options?: OverloadOptions): Promise<OverloadResult> {
  const where = 'simulateOverload()';
  const { o, shape, capacity, hint, binMs, onProgress, attemptTimeoutMs, isFailure } = settingsOf(where, options);
  const { clients, startWindowMs, queueLimit, outageMs, horizonMs, seed, backoff } = shape;

  const clock = new SimClock();
  const random = seeded(seed);
  const env: SimEnvironment = Object.freeze({ clock, random });
  const budget = typeof o.budget === 'function' ? o.budget(env) : o.budget;
  const rate = typeof o.rate === 'function' ? o.rate(env) : o.rate;
  const delay = networkDelay(where, o.network, random);
  const serviceMs = 1_000 / capacity;
  // An error the server or the timeout did not make is the rate controller's refusal: it ends the
  // client's call at once, whatever isFailure says (a throttle that refuses locally, a breaker).
  const refused = (error: unknown): boolean =>
    !(error instanceof SimulatedServerError) && (error as { name?: unknown } | null)?.name !== 'TimeoutError';
  // The executor's own checks, once and under this function's name: a bad policy, budget, rate
  // or timeout must not turn into every client "giving up" inside the simulation.
  if (rate !== undefined && (typeof rate?.acquire !== 'function' || typeof rate.record !== 'function')) {
    mistyped(where, 'rate', rate, 'a rate controller { acquire(), record() }');
  }
  const retry = retryingAs(where, {
    backoff,
    clock,
    random,
    // None but the caller's: the simulation shows what its policy does alone (a `retrying()`
    // would otherwise keep its default budget).
    budget: budget || false,
    isFailure: (outcome: Result, context: AttemptContext) =>
      !outcome.ok && !refused(outcome.error) && (isFailure ?? defaultIsFailure)(outcome, context),
  });
  const inner =
    attemptTimeoutMs !== undefined && attemptTimeoutMs !== Infinity ? [timeout(attemptTimeoutMs, { clock })] : [];
  const call = pipeline(rate ? [retry, asMechanism(rate), ...inner] : [retry, ...inner]);

  const offered: number[] = [];
  const served: number[] = [];
  const rejected: number[] = [];
  const clientsServedIn: number[] = [];
  const bump = (bins: number[], t: number): void => {
    const b = Math.floor(t / binMs);
    bins[b] = (bins[b] ?? 0) + 1;
  };
  let requests = 0;
  let inSystem = 0;
  let peakQueue = 0;
  let freeAt = 0; // when the server finishes the work it has accepted
  let servedClients = 0;
  let gaveUp = 0;
  let lastServedAt = -1;
  const reasons: Record<string, number> = {};

  // One request: the server sees it after one network delay; the answer takes another. An
  // attempt the executor times out is abandoned by the client, not by the server, which still
  // does the work: its answer arrives late and is ignored.
  const request = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const answer = (error: SimulatedServerError | undefined): void =>
        clock.at(clock.now() + delay(), () => (error ? reject(error) : resolve()));
      clock.at(clock.now() + delay(), () => {
        const t = clock.now();
        requests++;
        bump(offered, t);
        if (t < outageMs) {
          bump(rejected, t);
          answer(new SimulatedServerError('outage'));
          return;
        }
        if (inSystem > queueLimit) {
          bump(rejected, t);
          answer(new SimulatedServerError('overloaded', hint));
          return;
        }
        inSystem++;
        if (inSystem - 1 > peakQueue) peakQueue = inSystem - 1;
        freeAt = (freeAt > t ? freeAt : t) + serviceMs;
        clock.at(freeAt, () => {
          inSystem--;
          bump(served, clock.now());
          answer(undefined);
        });
      });
    });

  for (let i = 0; i < clients; i++) {
    clock.at(random() * startWindowMs, () => {
      call.execute(request).then(
        () => {
          servedClients++;
          lastServedAt = clock.now();
          bump(clientsServedIn, lastServedAt);
        },
        (error: unknown) => {
          gaveUp++;
          const reason = isRetryError(error) ? error.reason : 'fatal';
          reasons[reason] = (reasons[reason] ?? 0) + 1;
        },
      );
    });
  }
  // Progress in requests, the work; a few hundred reports a run.
  const estimate = onProgress ? overloadRequests(shape) : 0;
  const every = Math.max(1, Math.floor(estimate / 200));
  let reportAt = every;
  onProgress?.(0, estimate);
  await clock.run(
    horizonMs,
    onProgress
      ? () => {
          if (requests < reportAt) return;
          reportAt = requests + every;
          onProgress(requests, Math.max(estimate, requests));
        }
      : undefined,
  );
  onProgress?.(requests, requests);

  const bins = Math.max(offered.length, served.length, rejected.length, clientsServedIn.length);
  const perSecond = 1_000 / binMs;
  const series: OverloadBin[] = [];
  let cumulative = 0;
  let peak = 0;
  for (let b = 0; b < bins; b++) {
    cumulative += clientsServedIn[b] ?? 0;
    const bin = {
      startMs: b * binMs,
      offeredPerSecond: (offered[b] ?? 0) * perSecond,
      servedPerSecond: (served[b] ?? 0) * perSecond,
      rejectedPerSecond: (rejected[b] ?? 0) * perSecond,
      clientsServed: cumulative,
    };
    if (bin.startMs >= outageMs && bin.offeredPerSecond > peak) peak = bin.offeredPerSecond;
    series.push(bin);
  }
  return detached({
    clients,
    requests,
    amplification: requests / clients,
    peakOfferedPerSecondAfterRecovery: peak,
    capacityPerSecond: capacity,
    outageMs,
    served: servedClients,
    allServedAtMs: servedClients === clients ? lastServedAt : null,
    lastServedAtMs: servedClients > 0 ? lastServedAt : null,
    gaveUp,
    gaveUpShare: gaveUp / clients,
    giveUpReasons: reasons,
    unfinished: clients - servedClients - gaveUp,
    peakQueue,
    binMs,
    series,
  });
}
