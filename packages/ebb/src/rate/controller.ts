import { mistyped } from '../core/validate.js';
import type { AttemptContext } from '../retry/contexts.js';
import { defaultIsFailure, type FailureVerdict } from '../retry/errors.js';
import { type Judged, judgedExecute } from '../retry/judged-guard.js';
import type { Mechanism } from '../retry/mechanism.js';
import type { IsFailure, Outcome, RateController } from '../retry/options.js';

/**
 * The interface every `ebb/rate` controller shares: the guard protocol (`acquire`, `record`),
 * which a pipeline and `withRetry()`'s `use` drive, plus the rate it currently allows. The
 * controllers `adaptiveRate()`, `awsAdaptiveRate()` and `adaptiveThrottle()` are also pipeline
 * mechanisms (`execute`) that judge each outcome by their `isFailure`.
 *
 * - `acquire(signal?)` resolves when a request may go — at once (a plain value, no promise)
 *   when nobody waits and the rate allows it. Requests wait in FIFO order within a priority.
 *   An abort rejects the wait with `signal.reason` and leaves no timer behind.
 * - What `acquire` resolves with is a *ticket*; `retry()` hands it back to `record(outcome,
 *   ticket)`, so a controller can tell the verdict on a request sent before its last change of
 *   rate from one sent after it.
 * - `record(outcome, ticket?, detail?)`: `'throttled'` for an explicit "slow down" (HTTP 429, a
 *   throttling error: errors with `throttled: true`), `'failure'` for any other failed attempt,
 *   `'success'`; `detail` is the attempt's error or value, where `adaptiveRate` reads the
 *   server's `Retry-After` and `RateLimit`. `record()` takes the outcome as given: a
 *   controller's `isFailure` judges the calls it runs itself, in a pipeline.
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

/**
 * A rate controller as a pipeline mechanism (its `execute`): waits its turn (`acquire`), runs the
 * call, and records `isFailure`'s verdict on the outcome — `'throttled'` is a throttle (the
 * controllers move on nothing else); any other verdict is a `'success'` for a value that is no
 * failure, else a `'failure'` (the detail, for the hints `adaptiveRate` reads). Without an
 * `isFailure`: `defaultIsFailure` (an error with `throttled: true` is a throttle; no value is a
 * failure). Nothing is held while the verdict is awaited. @internal
 */
export function controllerMechanism(
  where: string,
  // biome-ignore lint/suspicious/noExplicitAny: one controller paces calls of every value type
  isFailure: IsFailure<any, any> | undefined,
  acquire: (signal: AbortSignal | undefined) => unknown,
  record: (outcome: Outcome, ticket: unknown, detail: unknown) => void,
): Mechanism {
  const settle = (ticket: unknown, verdict: FailureVerdict, ok: boolean, detail: unknown): void =>
    record(verdict === 'throttled' ? 'throttled' : ok && !verdict ? 'success' : 'failure', ticket, detail);
  const spec: Judged<unknown> = {
    where,
    isFailure,
    judge: (ok, detail) => !ok && defaultIsFailure({ ok, error: detail }),
    acquire: (context, abortable) => acquire(abortable ? context.signal : undefined),
    release() {},
    settle,
    end: (ticket, ok, detail) => (verdict) => settle(ticket, verdict, ok, detail),
  };
  return {
    execute: <T>(next: (context: AttemptContext) => Promise<T>, context: AttemptContext): Promise<T> =>
      judgedExecute(spec, next, context),
  };
}

/** Checks a controller's `isFailure` option. @internal */
export function isFailureOption(where: string, value: unknown): IsFailure | undefined {
  if (value !== undefined && typeof value !== 'function') {
    mistyped(where, 'isFailure', value, "a function (outcome, context) => true, false or 'throttled'");
  }
  return value as IsFailure | undefined;
}
