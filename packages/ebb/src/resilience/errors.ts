import { EBB_ERROR, isEbbError } from '../retry/errors.js';

/** The states of a circuit breaker. */
export type CircuitState =
  /** Calls go through; failures are counted. */
  | 'closed'
  /** Calls fail fast with {@link BrokenCircuitError} until the open period ends. */
  | 'open'
  /** The open period is over: a few probes go through; their outcomes close or reopen the circuit. */
  | 'half-open'
  /** Opened by hand (`isolate()`): every call fails fast until `reset()`. */
  | 'isolated';

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
    return this.code;
  }
}

/**
 * True for a {@link BrokenCircuitError} from this copy of ebb or any other in the process (by its
 * stable `code`, `'EBB_CIRCUIT_OPEN'`): a breaker built with the CommonJS build and a caller using
 * the ESM one still tell a refusal from a failure.
 */
export function isBrokenCircuitError(value: unknown): value is BrokenCircuitError {
  return isEbbError(value, BrokenCircuitError, 'EBB_CIRCUIT_OPEN', 'BrokenCircuitError');
}

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
  constructor(reason: 'queue-full' | 'wait' | 'displaced', limit: number, detail: string, retryAfterMs = 0) {
    super(
      `The concurrency limit (${limit} in flight) refused a request: ${detail}${retryAfterMs > 0 ? `; a slot is likely free in ${retryAfterMs} ms` : ''}.`,
    );
    this.reason = reason;
    this.limit = limit;
    this.retryAfterMs = retryAfterMs;
  }

  /** The brand other copies of ebb recognise it by: its code. @internal */
  get [EBB_ERROR](): string {
    return this.code;
  }
}

/** True for a {@link LimitExceededError} from this copy of ebb or any other (by its `code`, `'EBB_LIMIT_EXCEEDED'`). */
export function isLimitExceededError(value: unknown): value is LimitExceededError {
  return isEbbError(value, LimitExceededError, 'EBB_LIMIT_EXCEEDED', 'LimitExceededError');
}
