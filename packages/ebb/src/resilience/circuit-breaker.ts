import type { BackoffPolicy, BackoffRun } from '../backoff/backoff.js';
import { exponential } from '../backoff/exponential.js';
import { type Clock, clockOption, systemClock } from '../core/clock.js';
import type { Random } from '../core/random.js';
import { checkKeys, count, inRange, invalid, nonNegative, optionsObject, show } from '../core/validate.js';
import type { Outcome, RateController } from '../retry/options.js';
import { BrokenCircuitError, type CircuitState } from './errors.js';

/** Why the state changed. */
export type StateChangeReason =
  | 'consecutive-failures'
  | 'failure-rate'
  | 'probe-failed'
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
export interface CircuitBreakerOptions {
  /** Opens after this many counted failures in a row while closed. Default 5; `Infinity` turns it off. */
  readonly consecutiveFailures?: number;
  /**
   * Opens when the share of counted failures among the calls in the window reaches this value,
   * from 0 (exclusive) to 1 — once the window holds `minimumCalls`. Default: off.
   */
  readonly failureRate?: number;
  /** Calls the window must hold before `failureRate` can open the circuit. Default 20. */
  readonly minimumCalls?: number;
  /** The window of `failureRate`: the last this many calls (default 100) … */
  readonly windowCalls?: number;
  /** … or the calls of the last this many milliseconds (ten buckets). Give one of the two. */
  readonly windowMs?: number;
  /** A success that took longer than this counts as a failure (a slow call). Default `Infinity` (off). */
  readonly slowCallMs?: number;
  /** Probes let through at once while half-open. Default 1. */
  readonly halfOpenProbes?: number;
  /** Successful probes needed to close. Default 1. */
  readonly successesToClose?: number;
  /**
   * The length of each open period: the first opening waits `next()` of a fresh run, each failed
   * probe the following step; closing starts over. A policy that stops (-1) keeps its last period.
   * Default: 5 s doubling to 60 s, equal jitter (each period in [d/2, d)).
   */
  readonly openBackoff?: BackoffPolicy;
  /**
   * Break only retries (the AWS Builders' Library "retry circuit breaker"): first attempts
   * (`attempt` 1) always go through, and their outcomes still count; retries fail fast while
   * the circuit is open. Default false.
   */
  readonly retriesOnly?: boolean;
  /**
   * Which failures count; default every one. An error it rejects is neither a failure nor a
   * success (a 404 says nothing about the service's health).
   */
  readonly isFailure?: (error: unknown) => boolean;
  /** Called after every state change. A throw reaches the caller whose call caused the change. */
  readonly onStateChange?: (change: StateChange) => void;
  /** Start from a saved state ({@link CircuitBreaker.snapshot}). */
  readonly restore?: BreakerSnapshot;
  /** Time source. Default the system clock. */
  readonly clock?: Clock;
  /** Randomness for the open period's jitter. Default `Math.random`. */
  readonly random?: Random;
}

/** The default open period: 5 s doubling to 60 s, each period in [d/2, d). */
const defaultOpenBackoff = /* @__PURE__ */ exponential({ initialDelayMs: 5_000, maxDelayMs: 60_000, jitter: 'equal' });

/** One admitted call: when it started, whether it is a half-open probe, and the state generation it belongs to. */
class Ticket {
  constructor(
    readonly start: number,
    readonly probe: boolean,
    readonly generation: number,
  ) {}
}

/** Counts calls and failures over the last `size` calls. */
class CountWindow {
  readonly #ring: Uint8Array;
  #next = 0;
  calls = 0;
  failures = 0;
  constructor(size: number) {
    this.#ring = new Uint8Array(size);
  }
  add(failed: boolean, _now: number): void {
    const ring = this.#ring;
    if (this.calls === ring.length) this.failures -= ring[this.#next] as number;
    else this.calls++;
    ring[this.#next] = failed ? 1 : 0;
    if (failed) this.failures++;
    this.#next = (this.#next + 1) % ring.length;
  }
  clear(): void {
    this.#ring.fill(0);
    this.#next = this.calls = this.failures = 0;
  }
}

/** Counts calls and failures over the last `windowMs` milliseconds, in ten buckets. */
class TimeWindow {
  static readonly BUCKETS = 10;
  readonly #bucketMs: number;
  readonly #calls = new Float64Array(TimeWindow.BUCKETS);
  readonly #failures = new Float64Array(TimeWindow.BUCKETS);
  /** The bucket number (time / bucketMs) of the newest bucket. */
  #head = -Infinity;
  calls = 0;
  failures = 0;
  constructor(windowMs: number) {
    this.#bucketMs = windowMs / TimeWindow.BUCKETS;
  }
  #roll(now: number): void {
    const bucket = Math.floor(now / this.#bucketMs);
    if (bucket <= this.#head) return;
    const n = TimeWindow.BUCKETS;
    if (bucket - this.#head >= n) {
      this.#calls.fill(0);
      this.#failures.fill(0);
      this.calls = this.failures = 0;
    } else {
      for (let b = this.#head + 1; b <= bucket; b++) {
        const slot = ((b % n) + n) % n;
        this.calls -= this.#calls[slot] as number;
        this.failures -= this.#failures[slot] as number;
        this.#calls[slot] = this.#failures[slot] = 0;
      }
    }
    this.#head = bucket;
  }
  add(failed: boolean, now: number): void {
    this.#roll(now);
    const slot = ((this.#head % TimeWindow.BUCKETS) + TimeWindow.BUCKETS) % TimeWindow.BUCKETS;
    this.#calls[slot] = (this.#calls[slot] as number) + 1;
    this.calls++;
    if (failed) {
      this.#failures[slot] = (this.#failures[slot] as number) + 1;
      this.failures++;
    }
  }
  clear(): void {
    this.#calls.fill(0);
    this.#failures.fill(0);
    this.#head = -Infinity;
    this.calls = this.failures = 0;
  }
}

const OUTCOMES: readonly string[] = ['success', 'throttled', 'failure'];
const STATES: readonly string[] = ['closed', 'open', 'half-open', 'isolated'];
/** A restored `openings` replays the backoff this many steps at most: a hostile snapshot cannot stall the constructor. */
const MAX_RESTORED_OPENINGS = 10_000;

const KEYS = [
  'consecutiveFailures',
  'failureRate',
  'minimumCalls',
  'windowCalls',
  'windowMs',
  'slowCallMs',
  'halfOpenProbes',
  'successesToClose',
  'openBackoff',
  'retriesOnly',
  'isFailure',
  'onStateChange',
  'restore',
  'clock',
  'random',
];

/**
 * A circuit breaker: stops calling a service that keeps failing, and lets a few probes test it
 * after an open period that backs off. Pass it to `retry()`, `poll()` or `withRetry()` as
 * `rate` (it is a rate hook: `acquire` before each attempt, `record` after), or wrap calls with
 * {@link CircuitBreaker.run}. One breaker guards every operation it is passed to.
 * @see circuitBreaker
 */
export interface CircuitBreaker extends Required<RateController> {
  /** The state now (an open breaker whose period is over reads `'half-open'`). */
  readonly state: CircuitState;
  /** Milliseconds until a probe may go: 0 unless open; `Infinity` while isolated. */
  readonly retryAfterMs: number;
  /** Counted calls and failures in the failure-rate window, and the consecutive failures (closed state). */
  readonly metrics: { readonly calls: number; readonly failures: number; readonly consecutiveFailures: number };
  /**
   * Admits a call or throws {@link BrokenCircuitError}. Returns the call's ticket, to hand back
   * to `record` (or `release` if the call never happened). `attempt` (default 1) matters only
   * with `retriesOnly`.
   */
  acquire(signal?: AbortSignal, attempt?: number): Ticket;
  /** Reports a call's outcome with its ticket (`error`: the failure, for `isFailure`). Unknown tickets are ignored. */
  record(outcome: Outcome, ticket?: unknown, error?: unknown): void;
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
  /** Adds a state-change listener; returns a function that removes it. */
  subscribe(listener: (change: StateChange) => void): () => void;
}

/**
 * A circuit breaker (Nygard, *Release It!*, 2007; states and options after resilience4j's
 * `CircuitBreaker` and cockatiel's breakers) whose open period is an ebb backoff: the cooling-off
 * period "may itself be determined by an exponential backoff algorithm" (Wikipedia,
 * *Exponential backoff*).
 *
 * - **closed → open**: after `consecutiveFailures` counted failures in a row (default 5), or when
 *   `failureRate` of the window's calls failed (once it holds `minimumCalls`). A success slower
 *   than `slowCallMs` counts as a failure.
 * - **open**: every call throws {@link BrokenCircuitError} (with `retriesOnly`: every retry)
 *   for the open period: the next step of `openBackoff`. No timer runs.
 * - **open → half-open**: the first call after the period becomes a probe; up to
 *   `halfOpenProbes` run at once, the rest fail fast.
 * - **half-open → closed** after `successesToClose` successful probes (counts and the backoff
 *   start over); **→ open** at the first failed probe, for the backoff's next, longer period.
 *
 * Outcomes of calls admitted before the last state change are ignored (a slow call admitted
 * while closed cannot reopen a circuit that has since closed again).
 *
 * @example
 * const breaker = circuitBreaker({ consecutiveFailures: 5 });
 * await retry(({ signal }) => fetch(url, { signal }).then(check), { rate: breaker });
 */
export function circuitBreaker(options?: CircuitBreakerOptions): CircuitBreaker {
  const where = 'circuitBreaker()';
  const o = optionsObject(where, options) as CircuitBreakerOptions;
  checkKeys(where, o, KEYS);
  const consecutive = count(
    where,
    'consecutiveFailures',
    o.consecutiveFailures,
    5,
    1,
    true,
    'For example 5; Infinity opens on the failure rate only.',
  );
  let failureRate = Number.NaN;
  if (o.failureRate !== undefined) {
    failureRate = inRange(where, 'failureRate', o.failureRate, 0, 0, 1, 'For example 0.5 for half the calls.');
    if (failureRate === 0) invalid(where, 'failureRate', 0, 'a number above 0, up to 1', 'For example 0.5.');
  }
  const minimumCalls = count(where, 'minimumCalls', o.minimumCalls, 20, 1, false, 'For example 20.');
  if (o.windowCalls !== undefined && o.windowMs !== undefined) {
    throw new TypeError(`${where}: give \`windowCalls\` or \`windowMs\`, not both.`);
  }
  const windowCalls = count(where, 'windowCalls', o.windowCalls, 100, 1, false, 'For example 100.');
  if (windowCalls > 1_000_000) invalid(where, 'windowCalls', windowCalls, 'at most 1000000', 'For example 100.');
  let windowMs = Number.NaN;
  if (o.windowMs !== undefined) {
    windowMs = nonNegative(where, 'windowMs', o.windowMs, 0, false, 'For example 10000 for ten seconds.');
    if (windowMs === 0) invalid(where, 'windowMs', 0, 'a finite number > 0', 'For example 10000 for ten seconds.');
  }
  if (!Number.isNaN(failureRate) && minimumCalls > windowCalls && Number.isNaN(windowMs)) {
    throw new RangeError(
      `${where}: \`minimumCalls\` (${minimumCalls}) is more than the window holds (\`windowCalls\` ${windowCalls}); the failure rate could never open the circuit. Lower minimumCalls or widen the window.`,
    );
  }
  const slowCallMs = nonNegative(where, 'slowCallMs', o.slowCallMs, Infinity, true, 'For example 2000.');
  const halfOpenProbes = count(where, 'halfOpenProbes', o.halfOpenProbes, 1, 1, false, 'For example 1.');
  const successesToClose = count(where, 'successesToClose', o.successesToClose, 1, 1, false, 'For example 1.');
  const openBackoff = o.openBackoff ?? defaultOpenBackoff;
  if (typeof openBackoff !== 'object' || openBackoff === null || typeof openBackoff.start !== 'function') {
    invalid(where, 'openBackoff', openBackoff, 'a backoff policy', 'Build one with exponential().');
  }
  const retriesOnly = o.retriesOnly ?? false;
  if (typeof retriesOnly !== 'boolean') invalid(where, 'retriesOnly', retriesOnly, 'a boolean');
  const isFailure = o.isFailure;
  if (isFailure !== undefined && typeof isFailure !== 'function') {
    invalid(where, 'isFailure', isFailure, 'a function (error) => boolean');
  }
  if (o.onStateChange !== undefined && typeof o.onStateChange !== 'function') {
    invalid(where, 'onStateChange', o.onStateChange, 'a function (change) => void');
  }
  const clock = o.clock === undefined ? systemClock : clockOption(where, o.clock);
  const random = o.random;
  if (random !== undefined && typeof random !== 'function') {
    invalid(where, 'random', random, 'a function returning a number in [0, 1)');
  }

  const window = Number.isNaN(failureRate)
    ? undefined
    : Number.isNaN(windowMs)
      ? new CountWindow(windowCalls)
      : new TimeWindow(windowMs);
  const listeners: ((change: StateChange) => void)[] = [];
  if (o.onStateChange) listeners.push(o.onStateChange);

  let state: CircuitState = 'closed';
  /** Bumped at every state change: tickets of an older generation report nothing. */
  let generation = 0;
  let consecutiveFailures = 0;
  let openings = 0;
  let openUntil = 0;
  let lastOpenMs = 0;
  let run: BackoffRun | undefined;
  let probesInFlight = 0;
  let probeSuccesses = 0;

  const now = (): number => {
    const t = clock.now();
    if (typeof t !== 'number' || !Number.isFinite(t)) {
      throw new TypeError(`circuitBreaker: clock.now() returned ${show(t)}; expected a finite number of milliseconds.`);
    }
    return t;
  };

  /** The next open period, checked before any state changes: a bad policy fails the caller, not the breaker. */
  const nextOpenMs = (): number => {
    run ??= openBackoff.start(random);
    const ms: unknown = run.next();
    if (ms === -1) return lastOpenMs;
    if (typeof ms !== 'number' || !(ms >= 0) || Number.isNaN(ms)) {
      const message = `circuitBreaker: openBackoff's next() returned ${show(ms)}; expected a number of milliseconds >= 0, or -1 to keep the last period.`;
      throw typeof ms === 'number' ? new RangeError(message) : new TypeError(message);
    }
    return ms;
  };

  const emit = (from: CircuitState, reason: StateChangeReason, at: number): void => {
    if (listeners.length === 0) return;
    const change: StateChange = Object.freeze({
      from,
      to: state,
      reason,
      openMs: state === 'open' ? lastOpenMs : undefined,
      openings: state === 'closed' ? 0 : openings,
      at,
    });
    for (const listener of listeners.slice()) listener(change);
  };

  const enter = (to: CircuitState): CircuitState => {
    const from = state;
    state = to;
    generation++;
    probesInFlight = 0;
    probeSuccesses = 0;
    return from;
  };

  const open = (reason: StateChangeReason, at: number): void => {
    const ms = nextOpenMs();
    const from = enter('open');
    openings++;
    lastOpenMs = ms;
    openUntil = at + ms;
    consecutiveFailures = 0;
    window?.clear();
    emit(from, reason, at);
  };

  const close = (reason: StateChangeReason, at: number): void => {
    const from = enter('closed');
    openings = 0;
    run = undefined;
    consecutiveFailures = 0;
    window?.clear();
    emit(from, reason, at);
  };

  const refuse = (at: number): never => {
    if (state === 'isolated') throw new BrokenCircuitError('isolated', Infinity, 'isolate() was called');
    if (state === 'open') {
      throw new BrokenCircuitError('open', openUntil - at, `opening ${openings}, for ${Math.round(lastOpenMs)} ms`);
    }
    throw new BrokenCircuitError('half-open', 0, `${halfOpenProbes} probe${halfOpenProbes === 1 ? '' : 's'} running`);
  };

  /** In closed state: count one outcome and open if a threshold is reached. */
  const countClosed = (failed: boolean, at: number): void => {
    consecutiveFailures = failed ? consecutiveFailures + 1 : 0;
    window?.add(failed, at);
    if (failed && consecutiveFailures >= consecutive) open('consecutive-failures', at);
    else if (
      failed &&
      window !== undefined &&
      window.calls >= minimumCalls &&
      window.failures >= failureRate * window.calls
    ) {
      open('failure-rate', at);
    }
  };

  if (o.restore !== undefined) restore(o.restore);

  function restore(snapshot: BreakerSnapshot): void {
    if (typeof snapshot !== 'object' || snapshot === null) {
      invalid(where, 'restore', snapshot, 'a snapshot from breaker.snapshot()');
    }
    if (!STATES.includes(snapshot.state)) {
      invalid(where, 'restore.state', snapshot.state, `one of ${STATES.join(', ')}`);
    }
    const n = count(where, 'restore.openings', snapshot.openings, Number.NaN, 0, false, 'Pass a snapshot unchanged.');
    if (n > MAX_RESTORED_OPENINGS) {
      invalid(where, 'restore.openings', n, `at most ${MAX_RESTORED_OPENINGS}`, 'Pass a snapshot unchanged.');
    }
    const remaining = nonNegative(where, 'restore.openRemainingMs', snapshot.openRemainingMs, Number.NaN, true);
    const c = count(
      where,
      'restore.consecutiveFailures',
      snapshot.consecutiveFailures,
      Number.NaN,
      0,
      false,
      'Pass a snapshot unchanged.',
    );
    const at = now();
    if (snapshot.state === 'closed') {
      consecutiveFailures = Math.min(c, consecutive === Infinity ? c : consecutive - 1);
      return;
    }
    if (snapshot.state === 'isolated') {
      state = 'isolated';
      return;
    }
    // Open or half-open: resume the backoff where it was; a half-open snapshot resumes with the
    // period over, so the next call is a probe (the probes in flight then are gone).
    for (let i = 0; i < n; i++) lastOpenMs = nextOpenMs();
    openings = Math.max(n, 1);
    state = 'open';
    generation++;
    openUntil = at + (snapshot.state === 'open' ? remaining : 0);
  }

  const readState = (at: number): CircuitState => (state === 'open' && at >= openUntil ? 'half-open' : state);

  const breaker: CircuitBreaker = {
    get state() {
      return readState(now());
    },
    get retryAfterMs() {
      if (state === 'isolated') return Infinity;
      return state === 'open' ? Math.max(0, openUntil - now()) : 0;
    },
    get metrics() {
      return Object.freeze({
        calls: window?.calls ?? 0,
        failures: window?.failures ?? 0,
        consecutiveFailures,
      });
    },
    acquire(_signal?: AbortSignal, attempt?: number): Ticket {
      const at = now();
      if (state === 'closed') return new Ticket(at, false, generation);
      if (state === 'isolated') return refuse(at);
      const first = retriesOnly && (attempt === undefined || attempt === 1);
      if (state === 'open') {
        if (at < openUntil) {
          if (first) return new Ticket(at, false, generation);
          return refuse(at);
        }
        const from = enter('half-open');
        // A throwing listener fails this call before it takes a probe slot.
        emit(from, 'open-period-over', at);
      }
      if (first) return new Ticket(at, false, generation);
      if (probesInFlight >= halfOpenProbes) return refuse(at);
      probesInFlight++;
      return new Ticket(at, true, generation);
    },
    record(outcome: Outcome, ticket?: unknown, error?: unknown): void {
      if (!OUTCOMES.includes(outcome)) {
        invalid('circuitBreaker.record()', 'outcome', outcome, "'success', 'throttled' or 'failure'");
      }
      if (!(ticket instanceof Ticket) || ticket.generation !== generation) return;
      const at = now();
      if (ticket.probe) probesInFlight--;
      let failed: boolean;
      if (outcome === 'success') failed = at - ticket.start > slowCallMs;
      else if (isFailure === undefined || isFailure(error)) failed = true;
      else return;
      if (state === 'closed') countClosed(failed, at);
      else if (state === 'half-open') {
        if (failed) open('probe-failed', at);
        else if (++probeSuccesses >= successesToClose) close('probes-succeeded', at);
      }
      // open (a first attempt under retriesOnly) and isolated: nothing counts.
    },
    release(ticket?: unknown): void {
      if (ticket instanceof Ticket && ticket.probe && ticket.generation === generation) probesInFlight--;
    },
    async run<T>(operation: () => T | PromiseLike<T>): Promise<Awaited<T>> {
      if (typeof operation !== 'function') invalid('circuitBreaker.run()', 'operation', operation, 'a function');
      const ticket = breaker.acquire(undefined, 1);
      let value: Awaited<T>;
      try {
        value = await operation();
      } catch (error) {
        breaker.record('failure', ticket, error);
        throw error;
      }
      breaker.record('success', ticket);
      return value;
    },
    isolate(): void {
      if (state === 'isolated') return;
      const at = now();
      const from = enter('isolated');
      emit(from, 'isolate', at);
    },
    reset(): void {
      const at = now();
      if (state === 'closed') {
        consecutiveFailures = 0;
        window?.clear();
        return;
      }
      close('reset', at);
    },
    snapshot(): BreakerSnapshot {
      const at = now();
      const s = readState(at);
      return {
        state: s,
        openings: s === 'closed' ? 0 : openings,
        openRemainingMs: s === 'open' ? openUntil - at : 0,
        consecutiveFailures: s === 'closed' ? consecutiveFailures : 0,
      };
    },
    subscribe(listener: (change: StateChange) => void): () => void {
      if (typeof listener !== 'function') invalid('circuitBreaker.subscribe()', 'listener', listener, 'a function');
      listeners.push(listener);
      return () => {
        const i = listeners.indexOf(listener);
        if (i >= 0) listeners.splice(i, 1);
      };
    },
  };
  return breaker;
}
