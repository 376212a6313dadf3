/** Why an executor gave up. */
export type GiveUpReason =
  /** The policy's `maxAttempts` were used up. */
  | 'attempts'
  /** The next wait would have ended past the policy's `maxElapsedMs`, or an attempt ran into it. */
  | 'elapsed'
  /** The server asked for a wait (`retryAfterMs`) longer than `maxRetryAfterMs`. */
  | 'retry-after'
  /** The retry budget refused another retry. */
  | 'budget';

/**
 * The error an executor rejects with when it gives up on an operation that kept failing with
 * retryable errors. The last error is `cause`, unchanged.
 *
 * A failure the `retryIf` classifier calls final is *not* wrapped: the caller gets the
 * operation's own error. An abort rejects with `signal.reason`.
 */
export class RetryError extends Error {
  override readonly name = 'RetryError';
  /** Stable across versions, for matching without `instanceof` (across realms or copies). */
  readonly code = 'EBB_RETRY_GAVE_UP';
  /** Why the executor gave up. */
  readonly reason: GiveUpReason;
  /** Calls of the operation made, the first included. */
  readonly attempts: number;
  /** Milliseconds from the start of the operation to giving up. */
  readonly elapsedMs: number;

  constructor(reason: GiveUpReason, attempts: number, elapsedMs: number, cause: unknown, detail: string) {
    const last =
      cause instanceof Error ? `${cause.name}: ${cause.message}` : cause === undefined ? 'none' : String(cause);
    super(
      `Gave up after ${attempts} attempt${attempts === 1 ? '' : 's'} in ${Math.round(elapsedMs)} ms: ${detail}. Last error: ${last}`,
      {
        cause,
      },
    );
    this.reason = reason;
    this.attempts = attempts;
    this.elapsedMs = elapsedMs;
  }
}

/** True for the errors aborts produce (`AbortError`), which the default classifier never retries. */
export function isAbortError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError';
}

/**
 * The reason an attempt's signal is aborted with when its time is up: a `TimeoutError`
 * `DOMException`, as `AbortSignal.timeout()` uses, so `fetch` rejects with it too.
 */
export function timeoutError(message: string): Error {
  return typeof DOMException === 'function'
    ? (new DOMException(message, 'TimeoutError') as unknown as Error)
    : Object.assign(new Error(message), { name: 'TimeoutError' });
}

/** The server's hint, from an error's numeric `retryAfterMs` property, or undefined. */
export function retryAfterOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const ms = (error as { retryAfterMs?: unknown }).retryAfterMs;
  return typeof ms === 'number' && ms >= 0 && Number.isFinite(ms) ? ms : undefined;
}
