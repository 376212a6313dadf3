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
 * probe slot taken, or isolated. `retry()` treats it as final: a rate hook that throws ends the
 * operation at once, so a broken circuit costs the caller no backoff waits.
 */
export class BrokenCircuitError extends Error {
  override readonly name = 'BrokenCircuitError';
  /** Stable across versions, for matching without `instanceof`. */
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
}
