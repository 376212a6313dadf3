import type { BackoffRun } from '../backoff/backoff.js';
import { describe, ignored, isLocalRefusal, isThenable, readNow } from '../core/boundary.js';
import { mistyped, optionsObject } from '../core/validate.js';
import { defaultIsFailure, type FailureVerdict } from '../retry/errors.js';
import { type Judged, judgedExecutor, recordedVerdict } from '../retry/judged-guard.js';
import type { Outcome } from '../retry/options.js';
import { breakerConfig, checkSnapshot } from './breaker-config.js';
import {
  type BreakerSnapshot,
  type CircuitBreaker,
  type CircuitBreakerOptions,
  type StateChange,
  type StateChangeReason,
  Ticket,
} from './breaker-types.js';
import { BrokenCircuitError, type CircuitState } from './errors.js';

export type {
  BreakerSnapshot,
  CircuitBreaker,
  CircuitBreakerOptions,
  StateChange,
  StateChangeReason,
} from './breaker-types.js';

const OUTCOMES: readonly string[] = ['success', 'throttled', 'failure'];

/** The attempt a ticket admits, for `isFailure`'s context: 1 when not told. */
const attemptOf = (attempt: unknown): number => (typeof attempt === 'number' && attempt >= 1 ? attempt : 1);

/**
 * A circuit breaker (Nygard, *Release It!*, 2007; states and options after resilience4j's
 * `CircuitBreaker` and cockatiel's breakers) whose open period is an ebb backoff: the cooling-off
 * period "may itself be determined by an exponential backoff algorithm" (Wikipedia,
 * *Exponential backoff*).
 *
 * - **closed → open**: after `consecutiveFailures` counted failures in a row (default 5), or when
 *   `failureRate` of the window's calls failed (once it holds `minCalls`). What counts is
 *   `isFailure`'s verdict on each outcome (errors and returned values alike); a success slower
 *   than `slowCallMs` counts as a failure.
 * - **open**: every call throws {@link BrokenCircuitError} (with `retriesOnly`: every retry)
 *   for the open period: the next step of `openBackoff`. No timer runs.
 * - **open → half-open**: the first call after the period becomes a probe; up to
 *   `maxHalfOpenProbes` run at once, the rest fail fast.
 * - **half-open → closed** after `successesToClose` successful probes (counts and the backoff
 *   start over); **→ open** at the first failed probe — or one that ran past `probeTimeoutMs`
 *   (default: the open period before it) — for the backoff's next, longer period.
 *
 * Outcomes of calls admitted before the last state change are ignored (a slow call admitted
 * while closed cannot reopen a circuit that has since closed again).
 *
 * In a pipeline it is a mechanism: it admits each call (inside a `retrying()`, each attempt) or
 * refuses it with {@link BrokenCircuitError}, whose `retryAfterMs` the retry waits out, and
 * judges the outcome by `isFailure`. The same breaker is also a guard of the
 * `acquire`/`record`/`release` shape, for `withRetry()`'s `use`.
 *
 * User code it calls — `isFailure`, the listeners, `openBackoff`, the clock — cannot leave it
 * stuck: a probe's slot is freed before an async `isFailure` is awaited; `isFailure` must answer
 * `true`, `false` or `'throttled'` (anything else, or a throw, fails the call it judged, which
 * then counts for nothing); listeners are isolated.
 *
 * @example
 * const breaker = circuitBreaker({ consecutiveFailures: 5 });
 * const api = pipeline([retrying(), breaker]); // each attempt passes it; a refusal is backed off
 * await api.execute(({ signal }) => fetch(url, { signal })); // a 5xx counts with isFailure: (o) => o.ok && o.value.status >= 500 || …
 */
export function circuitBreaker<T = unknown>(options?: CircuitBreakerOptions<T>): CircuitBreaker {
  const where = 'circuitBreaker()';
  const o = optionsObject(where, options) as CircuitBreakerOptions;
  const {
    consecutive,
    failureRate,
    minCalls,
    slowCallMs,
    maxHalfOpenProbes,
    probeTimeoutMs,
    successesToClose,
    openBackoff,
    retriesOnly,
    isFailure,
    onListenerError,
    clock,
    random,
    window,
  } = breakerConfig(where, o);
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
  /** The probes running now, oldest first (a handful: at most `maxHalfOpenProbes`). */
  const probes: Ticket[] = [];
  let probeSuccesses = 0;

  // The executor's and every mechanism's check: a RangeError for NaN or ±Infinity, else a TypeError.
  const now = (): number => readNow(clock);

  /** The next open period, checked before any state changes: a bad policy fails the caller, not the breaker. */
  const nextOpenMs = (): number => {
    run ??= openBackoff.start(random);
    const ms: unknown = run.next();
    if (ms === -1) return lastOpenMs;
    if (typeof ms !== 'number' || !(ms >= 0) || Number.isNaN(ms)) {
      const message = `circuitBreaker: openBackoff's next() returned ${describe(ms)}; expected a number of milliseconds >= 0, or -1 to keep the last period.`;
      throw typeof ms === 'number' ? new RangeError(message) : new TypeError(message);
    }
    return ms;
  };

  /** What a listener threw, or its promise rejected with: to `onListenerError`, never to a caller. */
  const listenerFailed = (error: unknown, change: StateChange): void => {
    try {
      ignored(onListenerError?.(error, change));
    } catch {
      // Nobody is left to tell.
    }
  };

  /**
   * Tells every listener (those subscribed when the change happened) about it. Each is isolated:
   * a throw or a rejected promise goes to `onListenerError`, and the next listener still hears
   * the change.
   */
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
    for (const listener of listeners.slice()) {
      try {
        const result: unknown = listener(change);
        if (isThenable(result)) result.then(undefined, (error: unknown) => listenerFailed(error, change));
      } catch (error) {
        listenerFailed(error, change);
      }
    }
  };

  const enter = (to: CircuitState): CircuitState => {
    const from = state;
    state = to;
    generation++;
    probes.length = 0;
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

  /** A running probe, done: it holds its slot no longer. */
  const dropProbe = (ticket: Ticket): void => {
    const i = probes.indexOf(ticket);
    if (i >= 0) probes.splice(i, 1);
  };

  /**
   * Applies a probe timeout that is due by `at`: the oldest probe that has run longer than
   * `probeTimeoutMs` (default: the open period before it) counts as failed, and the circuit
   * reopens as of the moment it timed out. Called wherever the breaker is used or read, so the
   * state is what a timer would have made it, without a timer.
   */
  const expire = (at: number): void => {
    if (state !== 'half-open' || probes.length === 0) return;
    const limit = Number.isNaN(probeTimeoutMs) ? lastOpenMs : probeTimeoutMs;
    let oldest = (probes[0] as Ticket).start;
    for (const p of probes) if (p.start < oldest) oldest = p.start;
    if (!(at - oldest > limit)) return;
    try {
      open('probe-timeout', oldest + limit);
    } catch (error) {
      // A bad openBackoff: the timed-out probes still hold nothing; the caller gets the error.
      probes.length = 0;
      throw error;
    }
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
    throw new BrokenCircuitError(
      'half-open',
      0,
      `${maxHalfOpenProbes} probe${maxHalfOpenProbes === 1 ? '' : 's'} running`,
    );
  };

  /** In closed state: count one outcome and open if a threshold is reached. */
  const countClosed = (failed: boolean, at: number): void => {
    consecutiveFailures = failed ? consecutiveFailures + 1 : 0;
    window?.add(failed, at);
    if (failed && consecutiveFailures >= consecutive) open('consecutive-failures', at);
    else if (
      failed &&
      window !== undefined &&
      window.calls >= minCalls &&
      window.failures >= failureRate * window.calls
    ) {
      open('failure-rate', at);
    }
  };

  /** The default verdict: `defaultIsFailure`'s (no value is a failure; an abort or a bug in the caller's code is none). */
  const judge = (ok: boolean, detail: unknown): FailureVerdict => !ok && defaultIsFailure({ ok, error: detail });
  /**
   * The verdict counted: a refusal by a mechanism inside the breaker — a full limit or bulkhead
   * (`LimitExceededError`), an inner breaker (`BrokenCircuitError`), `adaptiveThrottle()`'s local
   * rejection (`LocalThrottleError`, known by its code so that the breaker does not carry the
   * throttle) — counts for nothing, whatever `isFailure` said: the call never reached the
   * service, so it says nothing about its health.
   */
  const counted = (verdict: FailureVerdict, ok: boolean, detail: unknown): FailureVerdict =>
    !ok && isLocalRefusal(detail) ? false : verdict;

  /**
   * A ticket's call is over: it holds its probe slot no longer (whatever the clock says). Returns
   * the time it ended, or undefined when its outcome counts for nothing: the state changed since
   * it was admitted.
   */
  const finish = (ticket: Ticket): number | undefined => {
    ticket.done = true;
    let at: number;
    try {
      at = now();
      // A probe past its timeout has failed already: the circuit reopened without it.
      expire(at);
    } finally {
      if (ticket.probe && ticket.generation === generation) dropProbe(ticket);
    }
    return ticket.generation === generation ? at : undefined;
  };

  /** Counts the verdict on a call that ended at `at`: an error that is no failure counts for nothing. */
  const count = (ticket: Ticket, at: number, verdict: FailureVerdict, ok: boolean): void => {
    if (ticket.generation !== generation || (!ok && verdict === false)) return;
    const failed = verdict !== false || at - ticket.start > slowCallMs;
    if (state === 'closed') countClosed(failed, at);
    else if (state === 'half-open') {
      if (failed) open('probe-failed', at);
      else if (++probeSuccesses >= successesToClose) close('probes-succeeded', at);
    }
    // open (a first attempt under retriesOnly) and isolated: nothing counts.
  };

  /**
   * A closed breaker that keeps no window and has no slow-call threshold reads no clock for a
   * call that counts as no failure: admitting it needs no start time, and counting it only ends
   * the run of consecutive failures (a failure reads the time, to open). Two clock readings
   * (about 35 ns each in Node.js 20) of a pipeline's success path (bench/figures/pipeline-ab.mjs),
   * and the same for `acquire()`/`record()` and `run()` used by hand. So a clock that throws or
   * answers garbage is met where the time is needed — the failure that would open, a state read,
   * any call while not closed — and fails that call, leaving the counts as they were; while
   * closed it is not met at `acquire()` nor on a success.
   */
  const untimedClosed = window === undefined && slowCallMs === Infinity;

  /** The breaker as a pipeline mechanism: it admits each call and judges its outcome itself. */
  const judged: Judged<Ticket> = {
    where,
    isFailure,
    judge,
    acquire: (context) =>
      state === 'closed' && untimedClosed
        ? new Ticket(Number.NaN, false, generation, attemptOf(context.attempt))
        : breaker.acquire(undefined, context.attempt),
    release: (ticket) => breaker.release(ticket),
    settle(ticket, verdict, ok, detail) {
      const v = counted(verdict, ok, detail);
      if (v === false && state === 'closed' && untimedClosed && ticket.generation === generation) {
        // What count() does here, without the time it does not use: a success ends the run of
        // failures; an error that is no failure counts for nothing.
        ticket.done = true;
        if (ok) consecutiveFailures = 0;
        return;
      }
      const at = finish(ticket);
      if (at !== undefined) count(ticket, at, v, ok);
    },
    end(ticket, ok, detail) {
      const at = finish(ticket);
      return (verdict) => {
        if (at !== undefined) count(ticket, at, counted(verdict, ok, detail), ok);
      };
    },
  };

  if (o.restore !== undefined) restore(o.restore);

  function restore(snapshot: BreakerSnapshot): void {
    const { state: saved, openings: n, remaining, consecutiveFailures: c } = checkSnapshot(where, snapshot);
    const at = now();
    if (saved === 'closed') {
      consecutiveFailures = Math.min(c, consecutive === Infinity ? c : consecutive - 1);
      return;
    }
    if (saved === 'isolated') {
      state = 'isolated';
      return;
    }
    // Open or half-open: resume the backoff where it was; a half-open snapshot resumes with the
    // period over, so the next call is a probe (the probes in flight then are gone).
    for (let i = 0; i < n; i++) lastOpenMs = nextOpenMs();
    openings = Math.max(n, 1);
    state = 'open';
    generation++;
    openUntil = at + (saved === 'open' ? remaining : 0);
  }

  const readState = (at: number): CircuitState => (state === 'open' && at >= openUntil ? 'half-open' : state);

  const breaker: CircuitBreaker = {
    get state() {
      const at = now();
      expire(at);
      return readState(at);
    },
    get retryAfterMs() {
      if (state === 'isolated') return Infinity;
      const at = now();
      expire(at);
      return state === 'open' ? Math.max(0, openUntil - at) : 0;
    },
    get metrics() {
      const at = now();
      expire(at);
      window?.at(at);
      return Object.freeze({
        calls: window?.calls ?? 0,
        failures: window?.failures ?? 0,
        consecutiveFailures,
        probesInFlight: probes.length,
      });
    },
    acquire(signal?: AbortSignal, attempt?: number): Ticket {
      // Closed and untimed: the call's start time is never used (see untimedClosed).
      if (state === 'closed' && untimedClosed) return new Ticket(Number.NaN, false, generation, attemptOf(attempt));
      const at = now();
      expire(at);
      const n = attemptOf(attempt);
      if (state === 'closed') return new Ticket(at, false, generation, n);
      if (state === 'isolated') return refuse(at);
      const first = retriesOnly && n === 1;
      if (state === 'open') {
        if (at < openUntil) {
          if (first) return new Ticket(at, false, generation, n);
          return refuse(at);
        }
        const from = enter('half-open');
        emit(from, 'open-period-over', at);
        // A listener may have changed the state (reset(), isolate()): admit by the state now.
        if ((state as CircuitState) !== 'half-open') return breaker.acquire(signal, attempt);
      }
      if (first) return new Ticket(at, false, generation, n);
      if (probes.length >= maxHalfOpenProbes) return refuse(at);
      const probe = new Ticket(at, true, generation, n);
      probes.push(probe);
      return probe;
    },
    record(outcome: Outcome, ticket?: unknown, detail?: unknown): void {
      if (!OUTCOMES.includes(outcome)) {
        if (ticket instanceof Ticket && !ticket.done) finish(ticket);
        mistyped('circuitBreaker.record()', 'outcome', outcome, "'success', 'throttled' or 'failure'");
      }
      if (!(ticket instanceof Ticket) || ticket.done) return;
      const ok = outcome === 'success';
      // Closed and untimed (see untimedClosed): the verdict first, the time only for a failure.
      const untimed = state === 'closed' && untimedClosed && ticket.generation === generation;
      let at: number | undefined;
      if (untimed) ticket.done = true;
      else {
        at = finish(ticket);
        if (at === undefined) return;
      }
      const verdict = counted(recordedVerdict(where, isFailure, judge, outcome, detail, ticket.attempt), ok, detail);
      if (untimed && verdict === false) {
        // What count() does here: a success ends the run of failures; an error that is no
        // failure counts for nothing (isFailure may have changed the state: then nothing counts).
        if (ok && ticket.generation === generation) consecutiveFailures = 0;
        return;
      }
      count(ticket, at ?? now(), verdict, ok);
    },
    release(ticket?: unknown): void {
      if (!(ticket instanceof Ticket) || ticket.done) return;
      ticket.done = true;
      try {
        // As of now: a probe past its timeout has reopened the circuit already.
        expire(now());
      } catch {
        // Releasing frees the slot whatever the clock or the backoff says.
      } finally {
        if (ticket.probe && ticket.generation === generation) dropProbe(ticket);
      }
    },
    async run<T>(operation: () => T | PromiseLike<T>): Promise<Awaited<T>> {
      if (typeof operation !== 'function') mistyped('circuitBreaker.run()', 'operation', operation, 'a function');
      const ticket = breaker.acquire(undefined, 1);
      let value: Awaited<T>;
      try {
        value = await operation();
      } catch (error) {
        breaker.record('failure', ticket, error);
        throw error;
      }
      breaker.record('success', ticket, value);
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
      expire(at);
      const s = readState(at);
      return {
        state: s,
        openings: s === 'closed' ? 0 : openings,
        openRemainingMs: s === 'open' ? openUntil - at : 0,
        consecutiveFailures: s === 'closed' ? consecutiveFailures : 0,
      };
    },
    execute: judgedExecutor(judged),
    subscribe(listener: (change: StateChange) => void): () => void {
      if (typeof listener !== 'function') mistyped('circuitBreaker.subscribe()', 'listener', listener, 'a function');
      listeners.push(listener);
      return () => {
        const i = listeners.indexOf(listener);
        if (i >= 0) listeners.splice(i, 1);
      };
    },
  };
  return breaker;
}
