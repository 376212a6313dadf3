/**
 * ebb/redis — fleet-wide state kept in the caller's Redis: one `tokenBudget`, `awsRetryQuota` or
 * `ratioBudget` for every process and every process lifetime that uses the same name, the SRE
 * throttle's counts (`sharedAdaptiveThrottle`), and one
 * `adaptiveRate` for a whole fleet (`sharedRate`: each process paces at a lease of the fleet's
 * rate). Zero dependencies: pass a node-redis or ioredis client (or any {@link RedisScripts}).
 * Redis failing never fails or delays a request: each process falls back to local state (a local
 * controller seeded with its share, for the rate) and resyncs when Redis answers again. See
 * docs/redis.md.
 *
 * @packageDocumentation
 */

export { isNoScript, type RedisScripts, redisScripts } from './client.js';
export {
  type SharedAdaptiveThrottle,
  type SharedAdaptiveThrottleOptions,
  type SharedThrottleInspection,
  sharedAdaptiveThrottle,
} from './shared-adaptive-throttle.js';
export {
  type SharedAwsRetryQuota,
  type SharedAwsRetryQuotaOptions,
  sharedAwsRetryQuota,
} from './shared-aws-retry-quota.js';
export {
  type SharedBreakerGuard,
  type SharedBreakerInspection,
  type SharedBreakerStats,
  type SharedCircuitBreaker,
  type SharedCircuitBreakerOptions,
  sharedCircuitBreaker,
} from './shared-breaker.js';
export {
  type SharedRate,
  type SharedRateInspection,
  type SharedRateMember,
  type SharedRateOptions,
  type SharedRateStats,
  sharedRate,
} from './shared-rate.js';
export { type SharedRatioBudget, type SharedRatioBudgetOptions, sharedRatioBudget } from './shared-ratio-budget.js';
export type {
  SharedEvent,
  SharedInspection,
  SharedMode,
  SharedOptions,
  SharedProblem,
  SharedStats,
} from './shared-state.js';
export {
  type SharedControls,
  type SharedTokenBudget,
  type SharedTokenBudgetOptions,
  sharedTokenBudget,
} from './shared-token-budget.js';
