import type { GiveUpReason } from './errors.js';

// What the executor tells an operation and its hooks: one immutable context object each, so that
// adding a field never breaks a caller.

/** The view of one attempt an operation receives. Immutable. */
export interface AttemptContext {
  /** 1 for the first call, 2 for the first retry, … */
  readonly attempt: number;
  /**
   * Aborted when the caller's signal aborts, or when a `timeout()` around the attempt runs out
   * (reason: a `TimeoutError`). Pass it on to `fetch` and anything else that can be cancelled.
   * Created on first access.
   */
  readonly signal: AbortSignal;
  /**
   * Milliseconds since the operation started, at the start of this attempt (0 for attempt 1).
   * Counted from attempt 1's failure when nothing configured reads the elapsed time during the
   * run: no time budget, hook or custom clock (see `retry()`, "Elapsed time").
   */
  readonly elapsedMs: number;
}

/** What `onRetry` is told before each wait. Immutable. */
export interface RetryContext<T = unknown> {
  /** The attempt that just failed. */
  readonly attempt: number;
  /** Its error, unchanged; undefined when it returned a value that `isFailure` judged a failure (`value`). */
  readonly error: unknown;
  /** The value of the attempt when `isFailure` judged the value a failure; else undefined. */
  readonly value?: T | undefined;
  /** The wait about to begin, server hint included. */
  readonly delayMs: number;
  /** Milliseconds since the operation started. */
  readonly elapsedMs: number;
}

/** What the executor does after a failed attempt. */
export type NextStep =
  /** Another attempt follows, after `delayMs`. */
  | 'retry'
  /** The executor gives up: the caller receives a `RetryError` with `reason`. */
  | 'give-up'
  /** The error is no failure (`isFailure` said so, or a `FinalError`): the caller receives the error itself. */
  | 'final';

/** What `onFailedAttempt` is told after every failed attempt, the last included. Immutable. */
export interface FailedAttemptContext<T = unknown> {
  /** The attempt that failed (1-based). */
  readonly attempt: number;
  /** Its error, unchanged (for a `FinalError`, the error it wraps); undefined for a value judged a failure. */
  readonly error: unknown;
  /** The value of the attempt when `isFailure` judged the value a failure; else undefined. */
  readonly value?: T | undefined;
  /** Milliseconds since the operation started. */
  readonly elapsedMs: number;
  /** What happens next. */
  readonly next: NextStep;
  /** The wait before the next attempt when `next` is `'retry'` (server hint included), else undefined. */
  readonly delayMs: number | undefined;
  /** Why the executor gives up when `next` is `'give-up'`, else undefined. */
  readonly reason: GiveUpReason | undefined;
}

/**
 * What `onGiveUp` is told when the operation ends in failure (not for an abort) — also when the
 * retries end on a value judged a failure, which is then the result. Immutable.
 */
export interface GiveUpContext<T = unknown> {
  /** Attempts made. */
  readonly attempts: number;
  /** The last attempt's error, unchanged (for a `FinalError`, the error it wraps); undefined for a value. */
  readonly error: unknown;
  /** The last attempt's value when the retries ended on a value judged a failure (it is the result); else undefined. */
  readonly value?: T | undefined;
  /** Milliseconds since the operation started. */
  readonly elapsedMs: number;
  /** Why: a `RetryError` reason, or `'final'` when the error was no failure (it reaches the caller itself). */
  readonly reason: GiveUpReason | 'final';
}

/** What `onSuccess` is told when the operation succeeds. Immutable. */
export interface SuccessContext<T = unknown> {
  /** The attempt that succeeded: 1 when no retry was needed. */
  readonly attempt: number;
  /** Milliseconds since the operation started. */
  readonly elapsedMs: number;
  /** The operation's value. */
  readonly value: T;
}
