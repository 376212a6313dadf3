import { EBB_ERROR } from '../core/boundary.js';
import type { CircuitState } from './errors.js';

// A module of its own: a bundle that only recognises the error (`isBrokenCircuitError` reads its
// brand) does not carry the class. esbuild keeps a class whose getter has a computed key (the
// brand) whenever its module is in the bundle (docs/dev/size.md).

/**
 * What a circuit breaker throws instead of making a call while it is open, half-open with every
 * probe slot taken, or isolated. Inside a `retrying()` it fails that attempt, which is backed off
 * — at least `retryAfterMs`, the rest of the open period — and retried; a retry that should fail
 * fast instead says so in its `isFailure` (`!isBrokenCircuitError(o.error) && defaultIsFailure(o)`).
 */
export class BrokenCircuitError extends Error {
  override readonly name = 'BrokenCircuitError';
  /** Stable across versions, for matching without `instanceof`: see {@link isBrokenCircuitError}. */
  readonly code = 'EBB_CIRCUIT_OPEN';
  /** The breaker's state when it refused the call. */
  readonly state: Exclude<CircuitState, 'closed'>;
  /**
   * Milliseconds until the breaker lets a probe through: the rest of the open period; 0 when
   * half-open (a probe slot frees when a probe ends); `Infinity` while isolated.
   */
  readonly retryAfterMs: number;

  constructor(state: Exclude<CircuitState, 'closed'>, retryAfterMs: number, detail: string) {
    super(
      state === 'isolated'
        ? `The circuit is isolated (${detail}): every call fails fast until reset().`
        : state === 'open'
          ? `The circuit is open (${detail}): calls fail fast for another ${Math.ceil(retryAfterMs)} ms.`
          : `The circuit is half-open and every probe slot is taken (${detail}): calls fail fast until a probe ends.`,
    );
    this.state = state;
    this.retryAfterMs = retryAfterMs;
  }

  /** The brand other copies of ebb recognise it by: its code. @internal */
  get [EBB_ERROR](): string {
    return 'EBB_CIRCUIT_OPEN';
  }
}
