import { type Clock, clockOption, hostQueue, systemClock } from '../core/clock.js';
import type { Wakeup } from '../core/timer-queue.js';
import { checkKeys, count, inRange, invalid, nonNegative, optionsObject } from '../core/validate.js';
import type { RetryBudget } from '../retry/options.js';
import { hedgeBudget } from './hedge-budget.js';

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
/**
 * The reason a settled call's hedge timer is cancelled with: nobody sees it, and `abort()`
 * without a reason would build a `DOMException` with a stack trace on every call.
 */
const SETTLED: unique symbol = Symbol('settled');

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

  const ring = new Float64Array(SAMPLES);
  let filled = 0;
  let next = 0;
  let learned = initialDelayMs;
  let stale = true;
  let calls = 0;
  let hedges = 0;

  const learn = (ms: number): void => {
    if (!(ms >= 0 && ms < Infinity)) return;
    ring[next] = ms;
    next = (next + 1) % SAMPLES;
    if (filled < SAMPLES) filled++;
    stale = true;
  };
  const delayNow = (): number => {
    if (fixed !== undefined) return fixed;
    if (filled < minSamples) return initialDelayMs;
    if (stale) {
      const sorted = ring.slice(0, filled).sort();
      learned = sorted[Math.min(filled - 1, Math.floor(percentile * filled))] as number;
      stale = false;
    }
    return learned;
  };

  return {
    get delayMs() {
      return delayNow();
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
        const controllers: AbortController[] = [];
        let running = 0;
        let started = 0;
        let done = false;
        let timer: AbortController | undefined;
        // On the system clock, the hedge delay is a slot in ebb's shared timer queue: arming and
        // cancelling it per call costs far less than a sleep with an AbortSignal.
        const queue = hostQueue(clock);
        let wakeup: Wakeup | undefined;
        const finish = (): void => {
          done = true;
          if (wakeup !== undefined && wakeup.slot >= 0) queue?.remove(wakeup);
          timer?.abort(SETTLED);
          signal?.removeEventListener('abort', onAbort);
        };
        const onAbort = (): void => {
          if (done) return;
          finish();
          for (const a of controllers) a.abort(signal?.reason);
          reject(signal?.reason);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        const schedule = (): void => {
          if (!idempotent || started > maxHedges) return;
          const due = (): void => {
            if (done) return;
            if (!budget.tryAcquireRetry(undefined)) return;
            hedges++;
            launch();
          };
          if (queue !== undefined) {
            wakeup = { dueAt: 0, order: 0, slot: -1, wake: due };
            queue.add(wakeup, queue.now() + delayNow());
            return;
          }
          timer ??= new AbortController();
          clock.sleep(delayNow(), timer.signal).then(due, () => {});
        };
        const launch = (): void => {
          const controller = new AbortController();
          controllers.push(controller);
          started++;
          running++;
          const start = clock.now();
          let result: PromiseLike<T> | T;
          try {
            result = operation(controller.signal);
          } catch (error) {
            failed(error);
            return;
          }
          Promise.resolve(result).then(
            (value) => {
              running--;
              if (done) return;
              learn(clock.now() - start);
              finish();
              for (const a of controllers) if (a !== controller) a.abort(lost());
              resolve(value as Awaited<T>);
            },
            (error: unknown) => failed(error),
          );
          if (started <= maxHedges) schedule();
        };
        const failed = (error: unknown): void => {
          running--;
          if (done || running > 0) return;
          finish();
          reject(error);
        };
        launch();
      });
    },
  };
}
