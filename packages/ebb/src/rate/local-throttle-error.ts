import { EBB_ERROR } from '../core/boundary.js';

// A module of its own: a bundle that only recognises the error (`isLocalThrottleError` reads its
// brand) does not carry the class. esbuild keeps a class whose getter has a computed key (the
// brand) whenever its module is in the bundle (docs/dev/size.md).

/** The error a locally rejected request fails with. */
export class LocalThrottleError extends Error {
  override readonly name = 'LocalThrottleError';
  /** Stable code for programs, the same across versions: see {@link isLocalThrottleError}. */
  readonly code = 'EBB_LOCAL_THROTTLE';
  /** Marks it a throttle, for classifiers that look for `throttled: true`. */
  readonly throttled = true;
  /** The rejection probability it was drawn against. */
  readonly probability: number;

  constructor(probability: number) {
    super(
      `Rejected locally by adaptiveThrottle (probability ${probability.toFixed(3)}): the backend accepted too few of the recent requests.`,
    );
    this.probability = probability;
  }

  /** The brand other copies of ebb recognise it by: its code. @internal */
  get [EBB_ERROR](): string {
    return 'EBB_LOCAL_THROTTLE';
  }
}
