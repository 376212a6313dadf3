import { type Clock, clockOption, systemClock } from '../core/clock.js';
import { checkKeys, count, inRange, invalid, nonNegative, optionsObject } from '../core/validate.js';
import type { RetryBudget } from '../retry/options.js';
import { hedgeBudget } from './hedge-budget.js';
import { type HedgeDue, HedgeTimer } from './hedge-timer.js';

/** Options of {@link hedging}. Durations in milliseconds. */
export interface HedgingOptions {
  /** A fixed hedging delay. Default: learned (see `percentile`). */
  readonly delayMs?: number;
  /** With no `delayMs`: hedge after this latency percentile of recent successes, from 0 to 1. Default 0.95. */
  readonly percentile?: number;
  /** Successes to learn from before the percentile applies; until then `initialDelayMs`. Default 20. */
  readonly minSamples?: number;
  /** The delay while learning. Default 100. */
  readonly initialDelayMs?: number;
  /** Extra attempts at most per call. Default 1. */
  readonly maxHedges?: number;
  /**
   * Caps extra requests to a share of all requests: each call is a request, each hedge must be
   * granted by `tryAcquireRetry`. Default `hedgeBudget()` — hedges in the last 10 s ≤ the larger
   * of 5 % of the calls and 1 a second (Finagle's backup requests cap their extra load with a
   * budget the same way). `ratioBudget()` (ebb/rate) adds its floor on top of the share instead.
   */
  readonly budget?: RetryBudget;
  /** Time source. Default the system clock. */
  readonly clock?: Clock;
}

/** Per-call options of {@link Hedging.run}. */
export interface HedgeCallOptions {
  /** Aborts every attempt; the call rejects with `signal.reason`. */
  readonly signal?: AbortSignal;
  /**
   * The call's HTTP method, if any: only idempotent methods (RFC 9110 §9.2.2: GET, HEAD, OPTIONS,
   * TRACE, PUT, DELETE) are hedged; any other runs once.
   */
  readonly method?: string;
  /** Set false for an operation that must not run twice: it runs once. Default true. */
  readonly idempotent?: boolean;
}

/** Hedging shared by many calls: its learned latency and its budget. */
export interface Hedging {
  /** The delay the next call would hedge after. */
  readonly delayMs: number;
  /** Hedges started so far, and calls made. */
  readonly stats: { readonly calls: number; readonly hedges: number };
  /**
   * Runs `operation(signal)`; if it has not settled after the hedging delay (and the budget
   * allows), starts another. The first success wins; the other attempts' signals abort.
   * An attempt's failure ends the call only when no other attempt is running.
   */
  run<T>(operation: (signal: AbortSignal) => PromiseLike<T> | T, options?: HedgeCallOptions): Promise<Awaited<T>>;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);
const SAMPLES = 1_000;

const lost = (): Error => Object.assign(new Error('Another hedged attempt won.'), { name: 'AbortError' });

/** What a call needs of its `hedging()`. */
interface Shared {
  readonly clock: Clock;
  readonly timer: HedgeTimer;
  readonly budget: RetryBudget;
  readonly maxHedges: number;
  delayNow(): number;
  learn(ms: number): void;
  hedged(): void;
}

/**
 * One call: its attempts, and its place in the hedge timer while a hedge may still start. A
 * class, not a nest of closures: a call that settles before its hedging delay allocates this
 * object, its promise and its first attempt's AbortController, and little else. It is also the
 * caller's signal's abort listener (`handleEvent`).
 */
class HedgedCall<T> implements HedgeDue {
  dueAt = 0;
  order = 0;
  slot = -1;
  #first: AbortController | undefined;
  #more: AbortController[] | undefined;
  #running = 0;
  #started = 0;
  #done = false;
  #start = 0;
  readonly #shared: Shared;
  readonly #operation: (signal: AbortSignal) => PromiseLike<T> | T;
  readonly #signal: AbortSignal | undefined;
  readonly #idempotent: boolean;
  readonly #resolve: (value: Awaited<T>) => void;
  readonly #reject: (error: unknown) => void;

  constructor(
    shared: Shared,
    operation: (signal: AbortSignal) => PromiseLike<T> | T,
    signal: AbortSignal | undefined,
    idempotent: boolean,
    resolve: (value: Awaited<T>) => void,
    reject: (error: unknown) => void,
  ) {
    this.#shared = shared;
    this.#operation = operation;
    this.#signal = signal;
    this.#idempotent = idempotent;
    this.#resolve = resolve;
    this.#reject = reject;
    signal?.addEventListener('abort', this, { once: true });
    this.#start = shared.clock.now();
    this.#launch();
  }

  /** The hedge timer's call: the delay has passed and the call is still running. */
  hedge(): void {
    if (this.#done) return;
    if (!this.#shared.budget.tryAcquireRetry(undefined)) return;
    this.#shared.hedged();
    this.#launch();
  }

  /** The caller's signal aborted. */
  handleEvent(): void {
    if (this.#done) return;
    this.#finish();
    const reason = this.#signal?.reason;
    this.#abortAll(undefined, reason);
    this.#reject(reason);
  }

  #launch(): void {
    const controller = new AbortController();
    if (this.#first === undefined) this.#first = controller;
    else if (this.#more === undefined) this.#more = [controller];
    else this.#more.push(controller);
    this.#started++;
    this.#running++;
    const shared = this.#shared;
    let result: PromiseLike<T> | T;
    try {
      result = this.#operation(controller.signal);
    } catch (error) {
      this.#failed(error);
      return;
    }
    Promise.resolve(result).then(
      (value) => this.#won(controller, value as Awaited<T>),
      (error: unknown) => this.#failed(error),
    );
    if (!this.#done && this.#idempotent && this.#started <= shared.maxHedges) {
      const dueAt = shared.clock.now() + shared.delayNow();
      // A clock whose now() is not a finite number gives no deadline: the call is not hedged.
      if (dueAt > -Infinity && dueAt < Infinity) shared.timer.add(this, dueAt);
    }
  }

  #won(controller: AbortController, value: Awaited<T>): void {
    this.#running--;
    if (this.#done) return;
    // The call's latency, from its first attempt's start, whichever attempt won: the first
    // attempt's own latency, cut off where a hedge beat it. Learning the winner's own time
    // instead leaves out every slow first attempt a hedge beat, so the learned percentile sinks
    // below the service's and the budget goes to fast calls (docs/resilience.md, "Slow-tail
    // figure"). Finagle's BackupRequestFilter likewise records the superseded original's time.
    this.#shared.learn(this.#shared.clock.now() - this.#start);
    this.#finish();
    if (this.#more !== undefined) this.#abortAll(controller, undefined);
    this.#resolve(value);
  }

  #failed(error: unknown): void {
    this.#running--;
    if (this.#done || this.#running > 0) return;
    this.#finish();
    this.#reject(error);
  }

  #finish(): void {
    this.#done = true;
    this.#shared.timer.remove(this);
    this.#signal?.removeEventListener('abort', this);
  }

  /** Aborts every attempt but `winner`: with `reason`, or as a loser when there is a winner. */
  #abortAll(winner: AbortController | undefined, reason: unknown): void {
    for (const a of [this.#first, ...(this.#more ?? [])]) {
      if (a !== undefined && a !== winner) a.abort(winner === undefined ? reason : lost());
    }
  }
}

/**
 * Hedged requests (J. Dean and L. A. Barroso, "The Tail at Scale", CACM 2013; gRPC's hedging
 * policy, gRFC A6; Finagle's `BackupRequestFilter`): for idempotent calls, start a second
 * attempt when the first is slower than a delay — fixed, or a percentile of recent latencies
 * learned online — take the first success and abort the rest. A budget caps the extra requests
 * to a share of the calls, so hedging cannot amplify an overload.
 *
 * Compose with `retry()` by hedging inside an attempt:
 * `retry(({ signal }) => hedger.run((s) => fetch(url, { signal: s }), { signal, method: 'GET' }))`.
 */
export function hedging(options?: HedgingOptions): Hedging {
  const where = 'hedging()';
  const o = optionsObject(where, options) as HedgingOptions;
  checkKeys(where, o, ['delayMs', 'percentile', 'minSamples', 'initialDelayMs', 'maxHedges', 'budget', 'clock']);
  const fixed = o.delayMs === undefined ? undefined : nonNegative(where, 'delayMs', o.delayMs, 0, false);
  const percentile = inRange(where, 'percentile', o.percentile, 0.95, 0, 1, 'For example 0.95.');
  const minSamples = count(where, 'minSamples', o.minSamples, 20, 1, false, 'For example 20.');
  if (minSamples > SAMPLES) invalid(where, 'minSamples', minSamples, `at most ${SAMPLES}`, 'For example 20.');
  const initialDelayMs = nonNegative(where, 'initialDelayMs', o.initialDelayMs, 100, false);
  const maxHedges = count(where, 'maxHedges', o.maxHedges, 1, 0, false, 'For example 1.');
  if (maxHedges > 10) invalid(where, 'maxHedges', maxHedges, 'at most 10', 'For example 1.');
  const clock = o.clock === undefined ? systemClock : clockOption(where, o.clock);
  const budget = o.budget ?? hedgeBudget({ clock });
  if (typeof budget !== 'object' || budget === null || typeof budget.tryAcquireRetry !== 'function') {
    invalid(where, 'budget', budget, 'a budget { tryAcquireRetry() }', 'Use ratioBudget() or tokenBudget().');
  }

  // The last SAMPLES latencies in arrival order (a ring), and the same values kept sorted, so the
  // percentile is an index: each success moves one value in and one out (a binary search and a
  // shift) instead of sorting the ring again.
  const ring = new Float64Array(SAMPLES);
  const sorted = new Float64Array(SAMPLES);
  let filled = 0;
  let next = 0;
  let calls = 0;
  let hedges = 0;

  /** The first index in sorted[0, n) whose value is >= ms. */
  const lowerBound = (ms: number, n: number): number => {
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((sorted[mid] as number) < ms) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const shared: Shared = {
    clock,
    timer: new HedgeTimer(clock),
    budget,
    maxHedges,
    delayNow(): number {
      if (fixed !== undefined) return fixed;
      if (filled < minSamples) return initialDelayMs;
      return sorted[Math.min(filled - 1, Math.floor(percentile * filled))] as number;
    },
    learn(ms: number): void {
      // A fixed delay never reads the samples.
      if (fixed !== undefined || !(ms >= 0 && ms < Infinity)) return;
      if (filled === SAMPLES) {
        const out = lowerBound(ring[next] as number, SAMPLES);
        sorted.copyWithin(out, out + 1, SAMPLES);
        filled--;
      }
      const at = lowerBound(ms, filled);
      sorted.copyWithin(at + 1, at, filled);
      sorted[at] = ms;
      filled++;
      ring[next] = ms;
      next = (next + 1) % SAMPLES;
    },
    hedged(): void {
      hedges++;
    },
  };

  return {
    get delayMs() {
      return shared.delayNow();
    },
    get stats() {
      return { calls, hedges };
    },
    run<T>(operation: (signal: AbortSignal) => PromiseLike<T> | T, call?: HedgeCallOptions): Promise<Awaited<T>> {
      if (typeof operation !== 'function')
        invalid('hedging.run()', 'operation', operation, 'a function (signal) => promise');
      const c = optionsObject('hedging.run()', call) as HedgeCallOptions;
      const signal = c.signal;
      const idempotent =
        c.idempotent !== false && (c.method === undefined || IDEMPOTENT.has(String(c.method).toUpperCase()));
      if (signal?.aborted) return Promise.reject(signal.reason);
      calls++;
      budget.recordRequest?.();
      return new Promise<Awaited<T>>((resolve, reject) => {
        new HedgedCall(shared, operation, signal, idempotent, resolve, reject);
      });
    },
  };
}
