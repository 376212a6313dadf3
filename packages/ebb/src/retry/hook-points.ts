// The hook points shared mechanisms plug into (DESIGN.md): a guard (rate controller, breaker,
// limit), which guard() turns into a pipeline mechanism, and a retry budget, the
// `budget` of retry(), retrying(), poll() and withRetry(); ebb/rate and ebb/resilience build them.

/** An attempt's outcome, as rate controllers see it. */
export type Outcome = 'success' | 'throttled' | 'failure';

/**
 * A guard shared by many operations — a rate controller (`ebb/rate`), a circuit breaker, a
 * concurrency limit (`ebb/resilience`): `acquire()` is awaited before every attempt and each
 * outcome reported. ebb's own are pipeline mechanisms already; wrap a hand-written one with
 * `guard()` to put it in a pipeline or `withRetry()`'s `use`. An error counts as `'throttled'` when it has `throttled: true` (the
 * HTTP layer sets it for 429 and throttling codes).
 */
export interface RateController {
  /**
   * Resolves (or returns, when there is no wait) when a request may go; rejects with
   * `signal.reason` if aborted while waiting. What it resolves with is the attempt's *ticket*,
   * handed back to `record`: a controller can tell by it when the attempt was let through.
   * `attempt` is the attempt about to start (1 for the first call). A throw (or rejection) is a
   * refusal: that attempt fails with the error, without calling the operation — inside a retry,
   * backed off (at least the error's `retryAfterMs`) and retried, as a throttle is.
   */
  acquire(signal?: AbortSignal, attempt?: number): unknown;
  /**
   * Reports the outcome of one attempt, with the ticket its `acquire` gave (undefined if none)
   * and what the attempt ended with: its error for a failure, its value for a success (a
   * `Response` under `withRetry`, whose `RateLimit` field `adaptiveRate` reads).
   */
  record(outcome: Outcome, ticket?: unknown, detail?: unknown): void;
  /**
   * Optional: hands back a ticket whose attempt produced no outcome — the call was aborted (the
   * caller's signal, a timeout around it) while the attempt ran or while `acquire` was waiting.
   * A controller that holds a slot per ticket (a concurrency limit, a breaker's half-open probe)
   * frees it here. Every ticket ends in exactly one `record` or `release`.
   */
  release?(ticket?: unknown): void;
}

/** What a retry budget is told when an operation succeeds. Immutable. */
export interface BudgetSuccess {
  /** The attempt that succeeded: 1 when no retry was needed. */
  readonly attempt: number;
  /** The error of the attempt before it — the one whose retry succeeded; undefined when `attempt` is 1. */
  readonly lastError: unknown;
}

/**
 * A retry budget shared by many operations (`ebb/rate`): it may refuse a retry, and the
 * executor then gives up with `RetryError` reason `'budget'`.
 */
export interface RetryBudget {
  /** Called once when an operation starts. */
  recordRequest?(): void;
  /**
   * Called for every failure `isFailure` calls one (the error, or the value judged a failure), before the executor
   * decides whether a retry follows — so also for the last attempt, and whatever the budget
   * says next (gRPC counts every such failure).
   */
  recordFailure?(error: unknown): void;
  /** Asked before every retry, with the error that would be retried. */
  tryAcquireRetry(error: unknown): boolean;
  /** Called when an operation succeeds. */
  recordSuccess(context: BudgetSuccess): void;
}
