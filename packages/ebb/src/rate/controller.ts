import type { Outcome, RateController } from '../retry/options.js';

/**
 * The interface every `ebb/rate` controller shares: what `retry()` needs (`acquire`, `record`)
 * plus the rate it currently allows.
 *
 * - `acquire(signal?)` resolves when a request may go — at once (a plain value, no promise)
 *   when nobody waits and the rate allows it. Requests wait in FIFO order within a priority.
 *   An abort rejects the wait with `signal.reason` and leaves no timer behind.
 * - What `acquire` resolves with is a *ticket*; `retry()` hands it back to `record(outcome,
 *   ticket)`, so a controller can tell the verdict on a request sent before its last change of
 *   rate from one sent after it.
 * - `record(outcome, ticket?, detail?)`: `'throttled'` for an explicit "slow down" (HTTP 429, a
 *   throttling error: errors with `throttled: true`), `'failure'` for any other failed attempt,
 *   `'success'`; `detail` is the attempt's error or value (`retry()` passes it), where
 *   `adaptiveRate` reads the server's `Retry-After` and `RateLimit`.
 * - `ratePerSecond`: requests per second it lets through now (`Infinity`: no limit yet).
 *
 * Controllers run no timer while nobody waits, and take time from an injected `Clock`.
 */
export interface AdaptiveRateController extends RateController {
  /** Resolves with a ticket when a request may go (see above). */
  acquire(signal?: AbortSignal): unknown;
  /** Reports one attempt's outcome, with the ticket its `acquire` gave. */
  record(outcome: Outcome, ticket?: unknown, detail?: unknown): void;
  /** The rate currently allowed, in requests per second; `Infinity` while unlimited. */
  readonly ratePerSecond: number;
}
