/**
 * ebb/redis — fleet-wide retry budgets kept in the caller's Redis: one `tokenBudget`,
 * `awsRetryQuota` or `ratioBudget` for every process and every process lifetime that uses the
 * same name. Zero dependencies: pass a node-redis or ioredis client (or any {@link RedisScripts}).
 * Redis failing never fails or delays a request: each process falls back to local state and
 * resyncs when Redis answers again. See docs/redis.md.
 *
 * @packageDocumentation
 */

export { isNoScript, type RedisScripts, redisScripts } from './client.js';
export {
  type SharedAwsRetryQuota,
  type SharedAwsRetryQuotaOptions,
  sharedAwsRetryQuota,
} from './shared-aws-retry-quota.js';
export { type SharedRate, type SharedRateOptions, type SharedRateStats, sharedRate } from './shared-rate.js';
export { type SharedRatioBudget, type SharedRatioBudgetOptions, sharedRatioBudget } from './shared-ratio-budget.js';
export type { SharedEvent, SharedMode, SharedOptions, SharedStats } from './shared-state.js';
export {
  type SharedControls,
  type SharedTokenBudget,
  type SharedTokenBudgetOptions,
  sharedTokenBudget,
} from './shared-token-budget.js';
