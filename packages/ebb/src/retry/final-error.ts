import { describeThrown, EBB_ERROR } from '../core/boundary.js';
import { DEV } from '../core/dev.js';

// A module of its own: a bundle that only recognises a FinalError (the executor, through
// `isFinal`) does not carry the class (docs/dev/size.md).

/**
 * Wraps an error to end the operation at once, whatever `isFailure` says: the executor rejects
 * with the wrapped error itself (not with the `FinalError`), like p-retry's `AbortError`.
 * Throw it from the operation; `stop(error)` is the same, shorter.
 *
 * @example
 * await retry(async () => {
 *   const res = await fetch(url);
 *   if (res.status === 404) throw new FinalError(new Error('no such item'));
 *   if (!res.ok) throw new Error(`HTTP ${res.status}`);
 *   return res.json();
 * });
 */
export class FinalError extends Error {
  override readonly name = 'FinalError';
  /** Stable across versions, for matching without `instanceof`: see {@link isFinal}. */
  readonly code = 'EBB_FINAL';

  /** @param error what the caller receives — usually an `Error`, but any value is passed on as is. */
  constructor(error: unknown) {
    super(DEV ? `final: ${describeThrown(error)}` : 'final', { cause: error });
  }

  /** The brand other copies of ebb recognise it by: its code. @internal */
  get [EBB_ERROR](): string {
    return 'EBB_FINAL';
  }
}

/**
 * `throw stop(error)` ends the operation at once: the caller receives `error` itself, and no
 * retry follows whatever `isFailure` says. Same as `throw new FinalError(error)`.
 */
export function stop(error: unknown): FinalError {
  return new FinalError(error);
}
