import { describeThrown, EBB_ERROR } from '../core/boundary.js';
import { DEV } from '../core/dev.js';

// A module of its own: a bundle that only recognises the error (`isRetryError` reads its
// brand) does not carry the class. esbuild keeps a class whose getter has a computed key (the
// brand) whenever its module is in the bundle (docs/dev/size.md).

/** Why an executor gave up. */
export type GiveUpReason =
  /** The policy's `maxAttempts` were used up. */
  | 'attempts'
  /** The next wait would have ended past the policy's `maxElapsedMs`, or a wait's wake-up came after it. */
  | 'elapsed'
  /** The server asked for a wait (`retryAfterMs`) longer than `maxRetryAfterMs`. */
  | 'retry-after'
  /** The retry budget refused another retry. */
  | 'budget';

/**
 * The error an executor rejects with when it gives up on an operation that kept failing with
 * retryable errors. The last error is `cause`, unchanged.
 *
 * An error `isFailure` says is no failure is *not* wrapped: the caller gets the
 * operation's own error. An abort rejects with `signal.reason`.
 */
export class RetryError extends Error {
  override readonly name = 'RetryError';
  /** Stable across versions, for matching without `instanceof` (across realms or copies): see {@link isRetryError}. */
  readonly code = 'EBB_RETRY_GAVE_UP';
  /** Why the executor gave up. */
  declare readonly reason: GiveUpReason;
  /** Calls of the operation made, the first included. */
  declare readonly attempts: number;
  /**
   * Milliseconds from the start of the operation to giving up — from attempt 1's failure when
   * nothing configured read the elapsed time during the run (see `retry()`, "Elapsed time").
   */
  declare readonly elapsedMs: number;

  /**
   * `detail` says why in words; `fromFailure`: `elapsedMs` counts from attempt 1's failure (a
   * lazy start), and the message says so rather than pass it off as the whole run's time. The
   * production build's message is short: the reason and the attempts (`gave up (attempts) after
   * attempt 5`); `cause` holds the last error in every build.
   */
  constructor(
    reason: GiveUpReason,
    attempts: number,
    elapsedMs: number,
    cause: unknown,
    detail?: string,
    fromFailure?: boolean,
  ) {
    super(
      DEV
        ? `Gave up after ${attempts} attempt${attempts === 1 ? '' : 's'}${fromFailure ? `, ${Math.round(elapsedMs)} ms after attempt 1 failed` : ` in ${Math.round(elapsedMs)} ms`}: ${detail}. Last error: ${cause === undefined ? 'none' : describeThrown(cause)}`
        : `gave up (${reason}) after attempt ${attempts}`,
      { cause },
    );
    this.reason = reason;
    this.attempts = attempts;
    this.elapsedMs = elapsedMs;
  }

  /** The brand other copies of ebb recognise it by: its code. @internal */
  get [EBB_ERROR](): string {
    return 'EBB_RETRY_GAVE_UP';
  }
}
