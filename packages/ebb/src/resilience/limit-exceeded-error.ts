import { EBB_ERROR } from '../core/boundary.js';

// A module of its own: a bundle that only recognises the error (`isLimitExceededError` reads its
// brand) does not carry the class. esbuild keeps a class whose getter has a computed key (the
// brand) whenever its module is in the bundle (docs/dev/size.md).

/**
 * What a concurrency limit (or a bulkhead) throws when a request cannot wait: the queue is full,
 * the wait ran past `maxWaitMs`, or a higher-priority request took its place. Inside a
 * `retrying()` it fails that attempt, which is backed off — at least `retryAfterMs` — and retried.
 */
export class LimitExceededError extends Error {
  override readonly name = 'LimitExceededError';
  /** Stable across versions, for matching without `instanceof`: see {@link isLimitExceededError}. */
  readonly code = 'EBB_LIMIT_EXCEEDED';
  /** Why: `'queue-full'`, `'wait'` (maxWaitMs ran out) or `'displaced'` (by a higher priority). */
  readonly reason: 'queue-full' | 'wait' | 'displaced';
  /** The limit when the request was refused. */
  readonly limit: number;
  /**
   * Milliseconds until a slot is likely free: the requests ahead (those waiting, and this one)
   * served at the rate the limit completes them — Little's law, `(queued + 1) × round trip ÷
   * limit`, with the limiter's smoothed round trip. 0 while no round trip has been measured.
   */
  readonly retryAfterMs: number;
  /** @param by what refused, as the message names it: `'concurrency limit'` (the default) or `'bulkhead'`. */
  constructor(
    reason: 'queue-full' | 'wait' | 'displaced',
    limit: number,
    detail: string,
    retryAfterMs = 0,
    by = 'concurrency limit',
  ) {
    super(
      `The ${by} (${limit} in flight) refused a request: ${detail}${retryAfterMs > 0 ? `; a slot is likely free in ${retryAfterMs} ms` : ''}.`,
    );
    this.reason = reason;
    this.limit = limit;
    this.retryAfterMs = retryAfterMs;
  }

  /** The brand other copies of ebb recognise it by: its code. @internal */
  get [EBB_ERROR](): string {
    return 'EBB_LIMIT_EXCEEDED';
  }
}
