/**
 * ebb/resilience — beyond retry: a circuit breaker whose open period is an ebb backoff, an
 * adaptive concurrency limit (AIMD, Vegas, Gradient2, and `bdp()`: a bound from Little's law), a
 * fixed bulkhead, and hedged requests with a budget. Each is a mechanism of a pipeline
 * (`pipeline([retrying(), hedging(), circuitBreaker(), concurrencyLimit(), timeout(2_000)])`)
 * that judges outcomes by its `isFailure`; the breaker, the limit and the bulkhead are also
 * guards for `withRetry()`'s `use` (ebb/http), and hedging its `hedge`, so one executor does
 * everything.
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
export { type Bulkhead, type BulkheadOptions, bulkhead } from './bulkhead.js';
export { circuitBreaker } from './circuit-breaker.js';
export {
  type ConcurrencyLimit,
  type ConcurrencyLimitOptions,
  concurrencyLimit,
  type LimitView,
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
