/**
 * ebb/resilience — beyond retry: a circuit breaker whose open period is an ebb backoff. It plugs
 * into `retry()`, `poll()` and `withRetry()` (ebb/http) as their `rate` hook, so one executor
 * does everything.
 *
 * @packageDocumentation
 */

export {
  type BreakerSnapshot,
  type CircuitBreaker,
  type CircuitBreakerOptions,
  circuitBreaker,
  type StateChange,
  type StateChangeReason,
} from './circuit-breaker.js';
export { BrokenCircuitError, type CircuitState } from './errors.js';
