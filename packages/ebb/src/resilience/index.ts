/**
 * ebb/resilience — beyond retry: a circuit breaker whose open period is an ebb backoff, an
 * adaptive concurrency limit (AIMD, Vegas, Gradient2, and `bdp()`: a bound from Little's law),
 * and hedged requests with a budget. The breaker and the limit are guards: mechanisms of a
 * pipeline (`pipeline([retrying(), circuitBreaker(), concurrencyLimit()])`), or `withRetry()`'s
 * `rate` (ebb/http), so one executor does everything; hedging runs inside an attempt.
 *
 * @packageDocumentation
 */

export { type AimdOptions, aimd } from './aimd.js';
export { type BdpOptions, bdp } from './bdp.js';
export type {
  BreakerSnapshot,
  CircuitBreaker,
  CircuitBreakerOptions,
  StateChange,
  StateChangeReason,
} from './breaker-types.js';
export { circuitBreaker } from './circuit-breaker.js';
export {
  type ConcurrencyLimit,
  type ConcurrencyLimitOptions,
  concurrencyLimit,
} from './concurrency-limit.js';
export {
  BrokenCircuitError,
  type CircuitState,
  isBrokenCircuitError,
  isLimitExceededError,
  LimitExceededError,
} from './errors.js';
export { type Gradient2Options, gradient2 } from './gradient2.js';
export { type HedgeBudget, type HedgeBudgetOptions, hedgeBudget } from './hedge-budget.js';
export { type HedgeCallOptions, type Hedging, type HedgingOptions, hedging } from './hedging.js';
export type { LimitAlgorithm, LimitSample } from './limit-algorithm.js';
export { type VegasOptions, vegas } from './vegas.js';
