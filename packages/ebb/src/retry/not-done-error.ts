import { EBB_ERROR } from '../core/boundary.js';

// A module of its own: a bundle that only recognises the error (`isNotDoneError` reads its
// brand) does not carry the class. esbuild keeps a class whose getter has a computed key (the
// brand) whenever its module is in the bundle (docs/dev/size.md).

/**
 * The error a "not done yet" check counts as: it is what `onRetry` sees for such a check, and
 * the `cause` of the `RetryError` when the policy runs out while the work is still not done.
 */
export class NotDoneError extends Error {
  override readonly name = 'NotDoneError';
  /** Stable across versions, for matching without `instanceof`: see {@link isNotDoneError}. */
  readonly code = 'EBB_NOT_DONE';
  constructor(readonly attempt: number) {
    super(`check ${attempt} reported not done`);
  }

  /** The brand other copies of ebb recognise it by: its code. @internal */
  get [EBB_ERROR](): string {
    return 'EBB_NOT_DONE';
  }
}
