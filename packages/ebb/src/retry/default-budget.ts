import type { RetryBudget } from './hook-points.js';

/**
 * The retry budget `retrying()` (one per mechanism) and `withRetry()` (one per origin) keep
 * unless told `budget: false`, so that a service that is down is not sent five times its load.
 *
 * The rule: **retries in the window ≤ max(20 % of the calls in the window, 10)**.
 *
 * - The ratio is Finagle's `RetryBudget` (`percentCanRetry` 0.2; `ratioBudget()` in `ebb/rate`
 *   is Finagle's budget exactly), the figure reqwest 0.13 (`max_extra_load`, per host) and
 *   Envoy's retry budgets (`budget_percent`) default to as well: in a total outage a call costs
 *   at most about 1.2 requests, while a blip that fails 10 % of requests (11 % retries, the
 *   retries' own failures counted) is retried in full.
 * - The floor is Envoy's `min_retry_concurrency` rule — the limit "may never go below" it — and
 *   not Finagle's reserve, which is added to the ratio (`minRetriesPerSecond` on top) and so
 *   lifts a 200-call outage to 1.7× at Finagle's defaults. Here the floor only serves a client
 *   with little traffic: one call a minute still gets its four retries.
 * - The window is a decaying sum rather than Finagle's ten slices: each count is weighted by
 *   e^(−age / 10 s), so steady traffic of r calls a second counts as r × 10 (a 10-second window)
 *   in two numbers and a time, with no timer. Both counts decay alike, so their ratio is exact
 *   for steady traffic.
 * - A retry of a local refusal (a full limit, an open breaker) is not asked for (`decide()`): it
 *   sent nothing, and the bound is on what reaches the service.
 * - A call is counted without reading the clock (the executor's success path reads none): calls
 *   since the last reading are folded in at the next retry decision as if they had arrived
 *   evenly since that reading, which is exact for steady traffic.
 *
 * The rule is {@link budgetAfter} and {@link allowsRetry}, pure steps over a {@link BudgetState};
 * their constants are {@link DEFAULT_BUDGET}. @internal
 */
export const DEFAULT_BUDGET = {
  /** Retries allowed per call in the window (Finagle's `percentCanRetry`). */
  ratio: 0.2,
  /** Retries always allowed in the window, however few the calls (Envoy's `min_retry_concurrency`). */
  floor: 10,
  /** The decay's time constant in ms: the window's length for steady traffic. */
  windowMs: 10_000,
} as const;

/** The budget's state: both counts decayed to `atMs`. @internal */
export interface BudgetState {
  /** Calls in the window, decayed to `atMs`. */
  readonly calls: number;
  /** Retries in the window, decayed to `atMs`. */
  readonly retries: number;
  /** When the counts were last decayed (the clock's ms); NaN before the first reading. */
  readonly atMs: number;
}

/** No call, no retry, no reading yet. @internal */
export const EMPTY_BUDGET: BudgetState = { calls: 0, retries: 0, atMs: Number.NaN };

/**
 * The state at `nowMs`: its counts decayed, and the `pending` calls made since `atMs` folded in
 * as if spread evenly over that time (each weighs τ(1 − e^(−Δ/τ)) / Δ). A reading that is not
 * finite, or not later than the last one, decays nothing and moves nothing (the first finite
 * reading starts the clock): a bad clock cannot poison the counts. @internal
 */
export function budgetAfter(state: BudgetState, nowMs: number, pending: number): BudgetState {
  const { windowMs } = DEFAULT_BUDGET;
  const dt = nowMs - state.atMs;
  if (!(dt > 0 && dt < Infinity)) {
    const atMs = Number.isNaN(state.atMs) && Number.isFinite(nowMs) ? nowMs : state.atMs;
    return { calls: state.calls + pending, retries: state.retries, atMs };
  }
  const kept = Math.exp(-dt / windowMs);
  // expm1 keeps the even spread's weight exact when dt is tiny next to the window.
  const spread = (-Math.expm1(-dt / windowMs) * windowMs) / dt;
  return { calls: state.calls * kept + pending * spread, retries: state.retries * kept, atMs: nowMs };
}

/** Whether one more retry fits: retries + 1 ≤ max(ratio × calls, floor). @internal */
export function allowsRetry(state: BudgetState): boolean {
  const { ratio, floor } = DEFAULT_BUDGET;
  return state.retries + 1 <= Math.max(ratio * state.calls, floor);
}

/** The default budget: a {@link RetryBudget} whose `recordRequest` reads no clock. @internal */
export interface DefaultBudget extends RetryBudget {
  /** Counts one call; reads no clock. */
  recordRequest(): void;
  /** The state at the last retry decision, and the calls counted since. */
  readonly state: BudgetState;
  readonly pending: number;
}

/** A fresh {@link DefaultBudget} on the clock reading `now` (the mechanism's clock, or the host's). @internal */
export function defaultBudget(now: () => number): DefaultBudget {
  let state = EMPTY_BUDGET;
  let pending = 0;
  return {
    get state() {
      return state;
    },
    get pending() {
      return pending;
    },
    recordRequest() {
      pending++;
    },
    tryAcquireRetry() {
      state = budgetAfter(state, now(), pending);
      pending = 0;
      if (!allowsRetry(state)) return false;
      state = { ...state, retries: state.retries + 1 };
      return true;
    },
    recordSuccess() {},
  };
}
