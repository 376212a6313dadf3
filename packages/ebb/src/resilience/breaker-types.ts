import type { BackoffPolicy } from '../backoff/backoff.js';
import type { Clock } from '../core/clock.js';
import type { Random } from '../core/random.js';
import type { Mechanism } from '../retry/mechanism.js';
import type { IsFailure, Outcome, RateController } from '../retry/options.js';
import type { CircuitState } from './errors.js';

/** Why the state changed. */
export type StateChangeReason =
  | 'consecutive-failures'
  | 'failure-rate'
  | 'probe-failed'
  /** A half-open probe ran longer than `probeTimeoutMs`: it counts as failed. */
  | 'probe-timeout'
  | 'open-period-over'
  | 'probes-succeeded'
  | 'isolate'
  | 'reset';

/** What state-change listeners are told. Immutable. */
export interface StateChange {
  readonly from: CircuitState;
  readonly to: CircuitState;
  readonly reason: StateChangeReason;
  /** The length of the open period that starts now (when `to` is `'open'`), else undefined. */
  readonly openMs: number | undefined;
  /** Openings since the circuit last closed, this one included (0 when `to` is `'closed'`). */
  readonly openings: number;
  /** The breaker's clock at the change. */
  readonly at: number;
}

/**
 * A breaker's state as plain JSON data, to save (a file, a cache shared by workers) and to pass
 * back as `restore`. Times are durations, not clock readings, so a snapshot survives a restart.
 * The failure windows are not saved: a restored closed breaker starts counting afresh.
 */
export interface BreakerSnapshot {
  readonly state: CircuitState;
  /** Openings since the circuit last closed: the open-period backoff resumes after this many steps. */
  readonly openings: number;
  /** What is left of the open period when `state` is `'open'`, else 0. */
  readonly openRemainingMs: number;
  /** Consecutive counted failures while closed. */
  readonly consecutiveFailures: number;
}

/** Options of {@link circuitBreaker}. Durations in milliseconds. */
export interface CircuitBreakerOptions<T = unknown> {
  /** Opens after this many counted failures in a row while closed. Default 5; `Infinity` turns it off. */
  readonly consecutiveFailures?: number;
  /**
   * Opens when the share of counted failures among the calls in the window reaches this value,
   * from 0 (exclusive) to 1 — once the window holds `minCalls`. Default: off.
   */
  readonly failureRate?: number;
  /**
   * Calls the window must hold before `failureRate` can open the circuit. Default 20.
   * (resilience4j's `minimumNumberOfCalls`.)
   */
  readonly minCalls?: number;
  /** The window of `failureRate`: the last this many calls (default 100) … */
  readonly windowCalls?: number;
  /** … or the calls of the last this many milliseconds (ten buckets). Give one of the two. */
  readonly windowMs?: number;
  /** A success that took longer than this counts as a failure (a slow call). Default `Infinity` (off). */
  readonly slowCallMs?: number;
  /**
   * Probes let through at once while half-open; the other calls fail fast. Default 1.
   * (resilience4j's `permittedNumberOfCallsInHalfOpenState`.)
   */
  readonly maxHalfOpenProbes?: number;
  /**
   * How long a half-open probe may run, in ms, before it counts as a failed probe: the circuit
   * reopens (for the open-period backoff's next step, reason `'probe-timeout'`, at the moment the
   * probe timed out) and the probe's outcome, if it ever comes, is ignored. Without it, a probe
   * that never returns keeps the circuit half-open, refusing every other call, for good.
   *
   * Default: the open period that ended just before the probe (5–60 s with the default
   * `openBackoff`) — a probe may take as long as the circuit stayed open, as Polly's breaker
   * permits another trial call once per break duration (`PermitHalfOpenCircuitTest`,
   * App-vNext/Polly `CircuitStateController.cs`). resilience4j bounds the whole half-open state the
   * same way (`maxWaitDurationInHalfOpenState`, off by default there). `Infinity` waits for every
   * probe however long it takes.
   *
   * No timer runs: the timeout is applied when the breaker is next used or read, as of the
   * moment the probe timed out.
   */
  readonly probeTimeoutMs?: number;
  /** Successful probes needed to close. Default 1. */
  readonly successesToClose?: number;
  /**
   * The length of each open period: the first opening waits `next()` of a fresh run, each failed
   * probe the following step; closing starts over. A policy that stops (-1) keeps its last period:
   * give yours `maxAttempts: Infinity` (a curve stops after 5 attempts by default), as the default
   * does. Default: 5 s doubling to 60 s, equal jitter (each period in [d/2, d)).
   */
  readonly openBackoff?: BackoffPolicy;
  /**
   * Break only retries (the AWS Builders' Library "retry circuit breaker"): first attempts
   * (`attempt` 1) always go through, and their outcomes still count; retries fail fast while
   * the circuit is open. Default false.
   */
  readonly retriesOnly?: boolean;
  /**
   * Which outcomes count as failures — the same predicate as `retry()`'s: asked about each call's
   * outcome, a thrown error (`{ ok: false, error }`) or a returned value (`{ ok: true, value }`),
   * with the call's context; it answers `true` or `'throttled'` (a failure), or `false`. A value
   * it calls a failure counts as one (a `{ status: 503 }` response); an error it calls no failure
   * counts as nothing — neither a failure nor a success (a 404 says nothing about the service's
   * health). May be async in a pipeline (the probe's slot is freed before it is awaited); through
   * `record()` it must answer at once. Not asked about a `FinalError` (`stop(error)`): no failure.
   *
   * Whatever it answers, the refusal of a mechanism inside the breaker — a full limit's or
   * bulkhead's `LimitExceededError`, an inner breaker's `BrokenCircuitError`, an
   * `adaptiveThrottle()`'s `LocalThrottleError` — counts for
   * nothing: the call never reached the service. (Polly's breaker handles every exception but a
   * cancellation, so a rate limiter's rejection behind it opens the circuit; here a busy client
   * cannot open the circuit of a healthy service, even with `isFailure: (o) => !o.ok`.)
   *
   * Default `defaultIsFailure`: every error but an abort and a bug in the caller's own code
   * (`TypeError`, `ReferenceError`, `SyntaxError`, `RangeError`, but `fetch`'s network
   * `TypeError`); no value. Through `record()` without it, a `'throttled'` outcome is a failure
   * and a `'failure'` is judged by that default.
   */
  readonly isFailure?: IsFailure<T>;
  /**
   * Called after every state change, as `subscribe()`'s listeners are. A listener cannot harm a
   * call: what it throws (or its promise rejects with) goes to `onListenerError`, every other
   * listener still hears the change, and the call that caused the change ends with its own
   * operation's result.
   */
  readonly onStateChange?: (change: StateChange) => void;
  /**
   * Told what a state-change listener threw (or its returned promise rejected with), and the
   * change it was told about. Default: none — the error is dropped. What this function throws
   * is dropped too.
   */
  readonly onListenerError?: (error: unknown, change: StateChange) => void;
  /** Start from a saved state ({@link CircuitBreaker.snapshot}). */
  readonly restore?: BreakerSnapshot;
  /** Time source. Default the system clock. */
  readonly clock?: Clock;
  /** Randomness for the open period's jitter. Default `Math.random`. */
  readonly random?: Random;
}

/**
 * One admitted call: when it started, whether it is a half-open probe, and the state generation
 * it belongs to; `done` once it was recorded or released (a ticket reports once). @internal
 */
export class Ticket {
  done = false;
  constructor(
    readonly start: number,
    readonly probe: boolean,
    readonly generation: number,
    /** The attempt it admitted (1 when not told), for `isFailure`'s context. */
    readonly attempt: number,
  ) {}
}

/**
 * A circuit breaker: stops calling a service that keeps failing, and lets a few probes test it
 * after an open period that backs off. Put it in a pipeline (`pipeline([retrying(), breaker])`: it
 * admits each attempt and judges its outcome by `isFailure`; a refusal carries `retryAfterMs`,
 * which the retry waits out), pass it to `withRetry()` in `use` (the guard protocol:
 * `acquire`, `record`, `release`), or wrap calls with {@link CircuitBreaker.run}. One breaker
 * guards every operation it is passed to.
 * @see circuitBreaker
 */
export interface CircuitBreaker extends Required<RateController>, Mechanism {
  /** The state now (an open breaker whose period is over reads `'half-open'`). */
  readonly state: CircuitState;
  /** Milliseconds until a probe may go: 0 unless open; `Infinity` while isolated. */
  readonly retryAfterMs: number;
  /**
   * Counted calls and failures in the failure-rate window as of now (a time window's old buckets
   * age out when read, not only when a call is added), the consecutive failures (closed state),
   * and the half-open probes running now.
   */
  readonly metrics: {
    readonly calls: number;
    readonly failures: number;
    readonly consecutiveFailures: number;
    readonly probesInFlight: number;
  };
  /**
   * Admits a call or throws {@link BrokenCircuitError}. Returns the call's ticket, to hand back
   * to `record` (or `release` if the call never happened). `attempt` (default 1) matters only
   * with `retriesOnly`. While closed without `failureRate` or `slowCallMs` it reads no clock (no
   * start time counts), nor does `record` of a success: a clock that fails is then met at the
   * `record` of a failure, which throws its error and counts nothing.
   */
  acquire(signal?: AbortSignal, attempt?: number): Ticket;
  /**
   * Reports a call's outcome with its ticket and what it ended with (`detail`: the error, or the
   * value), judged as `isFailure` says (see there). Unknown tickets are ignored.
   */
  record(outcome: Outcome, ticket?: unknown, detail?: unknown): void;
  /** Hands back a ticket whose call produced no outcome (it was aborted): frees its probe slot. */
  release(ticket?: unknown): void;
  /** Calls `operation` through the breaker: admits it, records its outcome, returns its value. */
  run<T>(operation: () => T | PromiseLike<T>): Promise<Awaited<T>>;
  /** Opens the circuit by hand until `reset()`. */
  isolate(): void;
  /** Closes the circuit and forgets every count and the open-period backoff. */
  reset(): void;
  /** The state as JSON data, for `restore`. */
  snapshot(): BreakerSnapshot;
  /**
   * Adds a state-change listener; returns a function that removes it. Listeners are isolated
   * (see `onStateChange`): one that throws harms neither the others nor the call.
   */
  subscribe(listener: (change: StateChange) => void): () => void;
}
