import { isBranded } from '../core/boundary.js';
import type { BrokenCircuitError } from './broken-circuit-error.js';
import type { LimitExceededError } from './limit-exceeded-error.js';

export { BrokenCircuitError } from './broken-circuit-error.js';
export { LimitExceededError } from './limit-exceeded-error.js';

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
 * True for a {@link BrokenCircuitError} from this copy of ebb or any other in the process (by its
 * stable `code`, `'EBB_CIRCUIT_OPEN'`): a breaker built with the CommonJS build and a caller using
 * the ESM one still tell a refusal from a failure.
 */
export function isBrokenCircuitError(value: unknown): value is BrokenCircuitError {
  return isBranded(value, 'EBB_CIRCUIT_OPEN', 'BrokenCircuitError');
}

/** True for a {@link LimitExceededError} from this copy of ebb or any other (by its `code`, `'EBB_LIMIT_EXCEEDED'`). */
export function isLimitExceededError(value: unknown): value is LimitExceededError {
  return isBranded(value, 'EBB_LIMIT_EXCEEDED', 'LimitExceededError');
}
