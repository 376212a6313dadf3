import { ignored } from '../core/boundary.js';
import { type Clock, clockOption } from '../core/clock.js';
import { DEV } from '../core/dev.js';
import { brief, checkKeys, count, inRange, invalid, mistyped, nonNegative, optionsObject } from '../core/validate.js';
import type { Mechanism } from '../retry/mechanism.js';
import type { AttemptContext, IsFailure, RetryBudget } from '../retry/options.js';
import { sourceOf } from '../retry/scope.js';
import { hedgeBudget } from './hedge-budget.js';
import { HedgeTimer } from './hedge-timer.js';
import { HedgedCall, type Shared } from './hedged-call.js';
import { LatencyWindow } from './latency-window.js';

/** Options of {@link hedging}. Durations in milliseconds. */
export interface HedgingOptions<T = unknown> {
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
  /**
   * Which outcomes of an attempt are failures — the same predicate as `retry()`'s, asked about
   * each hedged attempt's outcome (`{ ok: true, value }` or `{ ok: false, error }`) with its
   * context. The first attempt whose outcome is no failure ends the call: a value wins (the others
   * are aborted), an error is the call's error at once. A failure — a `{ status: 503 }` value it
   * calls one, say — wins nothing: the call waits for the attempts still running and ends with the
   * last failure when none is left. May be async. Default `defaultIsFailure`: no value is a
   * failure; every error is, but an abort and a bug in the caller's own code.
   */
  readonly isFailure?: IsFailure<T>;
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

/**
 * Hedging shared by many calls — its learned latency and its budget: `run()` hedges one
 * operation (what `withRetry()`'s `hedge` calls). What `hedging()` returns is also a pipeline
 * mechanism (`execute`: `pipeline([hedging(), …])` hedges the chain inside it).
 */
export interface Hedging {
  /** The delay the next call would hedge after. */
  readonly delayMs: number;
  /** Hedges started so far, and calls made. */
  readonly stats: { readonly calls: number; readonly hedges: number };
  /**
   * Runs `operation({ attempt, signal, elapsedMs })`; if it has not settled after the hedging
   * delay (and the budget allows), starts another. The first outcome that is no failure (see
   * `isFailure`) ends the call; the other attempts' signals abort. A failure ends the call only
   * when no other attempt is running.
   *
   * Each attempt gets the context `retry()` gives its operation: `attempt` (1, then 2 for the
   * first hedge), `signal` (created when first read, so an operation that does not read it
   * costs no `AbortController`; read it to be cancelled when you lose), `elapsedMs` since the
   * call began. (In ebb 0.x the operation received the signal itself.)
   */
  run<T>(operation: (attempt: AttemptContext) => PromiseLike<T> | T, options?: HedgeCallOptions): Promise<Awaited<T>>;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);
const SAMPLES = 1_000;

/**
 * Hedged requests (J. Dean and L. A. Barroso, "The Tail at Scale", CACM 2013; gRPC's hedging
 * policy, gRFC A6; Finagle's `BackupRequestFilter`; Polly's hedging strategy): for idempotent
 * calls, start a second attempt when the first is slower than a delay — fixed, or a percentile of
 * recent latencies learned online — take the first outcome that is no failure and abort the rest.
 * A budget caps the extra requests to a share of the calls, so hedging cannot amplify an overload.
 *
 * **In a pipeline** it hedges whatever is inside it: `pipeline([hedging(), circuitBreaker(),
 * timeout(2_000)])` runs the breaker and the timeout around each hedged attempt (each attempt
 * passes the breaker; a refusal is a failure, which wins nothing). Outermost, in place of a
 * retry, or around a `retrying()` to hedge the retried call; inside `retrying()`, every attempt
 * of the retry is hedged. A hedge's context counts on from its call's: `attempt` 2 for the first
 * hedge of attempt 1. Put it only in pipelines whose calls may run twice.
 *
 * Alone, `run()` hedges one operation:
 * `retry(({ signal }) => hedger.run((hedge) => fetch(url, { signal: hedge.signal }), { signal, method: 'GET' }))`.
 */
export function hedging<T = unknown>(options?: HedgingOptions<T>): Hedging & Mechanism {
  const where = 'hedging()';
  const o = optionsObject(where, options) as HedgingOptions;
  checkKeys(where, o, [
    'delayMs',
    'percentile',
    'minSamples',
    'initialDelayMs',
    'maxHedges',
    'budget',
    'isFailure',
    'clock',
  ]);
  const fixed = o.delayMs === undefined ? undefined : nonNegative(where, 'delayMs', o.delayMs, 0, false);
  // The learned delay's options mean nothing beside a fixed one: say so rather than ignore them.
  for (const learned of ['percentile', 'minSamples', 'initialDelayMs'] as const) {
    if (fixed !== undefined && o[learned] !== undefined) {
      throw new TypeError(
        DEV
          ? `${where}: \`${learned}\` is for a learned delay, and \`delayMs\` fixes it. Give one or the other.`
          : brief(where, learned, o[learned]),
      );
    }
  }
  const percentile = inRange(where, 'percentile', o.percentile, 0.95, 0, 1, 'For example 0.95.');
  const minSamples = count(where, 'minSamples', o.minSamples, 20, 1, false, 'For example 20.');
  if (minSamples > SAMPLES) invalid(where, 'minSamples', minSamples, `at most ${SAMPLES}`, 'For example 20.');
  const initialDelayMs = nonNegative(where, 'initialDelayMs', o.initialDelayMs, 100, false);
  const maxHedges = count(where, 'maxHedges', o.maxHedges, 1, 0, false, 'For example 1.');
  if (maxHedges > 10) invalid(where, 'maxHedges', maxHedges, 'at most 10', 'For example 1.');
  const clock = clockOption(where, o.clock);
  const budget = o.budget ?? hedgeBudget({ clock });
  if (typeof budget !== 'object' || budget === null || typeof budget.tryAcquireRetry !== 'function') {
    mistyped(where, 'budget', budget, 'a budget { tryAcquireRetry() }', 'Use ratioBudget() or tokenBudget().');
  }
  const isFailure = o.isFailure;
  if (isFailure !== undefined && typeof isFailure !== 'function') {
    mistyped(where, 'isFailure', isFailure, "a function (outcome, context) => true, false or 'throttled'");
  }

  const window = new LatencyWindow(SAMPLES);
  let calls = 0;
  let hedges = 0;
  const shared: Shared = {
    clock,
    timer: new HedgeTimer(clock),
    budget,
    maxHedges,
    isFailure,
    delayNow(): number {
      if (fixed !== undefined) return fixed;
      if (window.filled < minSamples) return initialDelayMs;
      return window.percentile(percentile);
    },
    learn(ms: number): void {
      // A fixed delay never reads the samples.
      if (fixed !== undefined || !(ms >= 0 && ms < Infinity)) return;
      window.add(ms);
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
    run<V>(operation: (attempt: AttemptContext) => PromiseLike<V> | V, call?: HedgeCallOptions): Promise<Awaited<V>> {
      if (typeof operation !== 'function')
        mistyped('hedging.run()', 'operation', operation, 'a function ({ signal }) => promise');
      const c = optionsObject('hedging.run()', call) as HedgeCallOptions;
      const signal = c.signal;
      const idempotent =
        c.idempotent !== false && (c.method === undefined || IDEMPOTENT.has(String(c.method).toUpperCase()));
      if (signal?.aborted) return Promise.reject(signal.reason);
      try {
        ignored(budget.recordRequest?.());
      } catch (error) {
        // The budget's own failure fails this call, before any attempt.
        return Promise.reject(error);
      }
      calls++;
      return new Promise<Awaited<V>>((resolve, reject) => {
        new HedgedCall(shared, operation, signal, idempotent, resolve, reject);
      });
    },
    execute<V>(next: (context: AttemptContext) => Promise<V>, context: AttemptContext): Promise<V> {
      const source = sourceOf(context);
      if (source?.aborted) return Promise.reject(source.reason);
      try {
        ignored(budget.recordRequest?.());
      } catch (error) {
        return Promise.reject(error);
      }
      calls++;
      return new Promise<V>((resolve, reject) => {
        new HedgedCall<V>(
          shared,
          next,
          source,
          true,
          resolve as (value: Awaited<V>) => void,
          reject,
          context.attempt,
          context.elapsedMs,
        );
      });
    },
  };
}
