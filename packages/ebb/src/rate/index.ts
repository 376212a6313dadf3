/**
 * ebb/rate — backing off as a fleet: closed-loop rate controllers that many operations share
 * (`adaptiveRate`, `awsAdaptiveRate`), client-side adaptive throttling (`adaptiveThrottle`), and retry budgets that keep retries from multiplying
 * load during an outage (`tokenBudget`, `awsRetryQuota`, `ratioBudget`). A controller is a guard
 * of a pipeline (`pipeline([retrying(), rate])`) or `withRetry()`'s `use` (ebb/http); a budget
 * is the `budget` of `retry()`, `retrying()`, `poll()` and `withRetry()`.
 *
 * @packageDocumentation
 */

export type { BudgetSuccess, Outcome, RateController, RetryBudget } from '../retry/options.js';
export { type AdaptiveRate, type AdaptiveRateOptions, adaptiveRate } from './adaptive-rate.js';
export {
  type AdaptiveThrottle,
  type AdaptiveThrottleOptions,
  adaptiveThrottle,
  isLocalThrottleError,
  LocalThrottleError,
} from './adaptive-throttle.js';
export { type AwsAdaptiveRate, type AwsAdaptiveRateOptions, awsAdaptiveRate } from './aws-adaptive-rate.js';
export {
  type AwsErrorKind,
  type AwsRetryCosts,
  type AwsRetryQuota,
  type AwsRetryQuotaOptions,
  awsRetryQuota,
} from './aws-retry-quota.js';
export type { AdaptiveRateController } from './controller.js';
export { type RatioBudget, type RatioBudgetOptions, ratioBudget } from './ratio-budget.js';
export { type TokenBudget, type TokenBudgetOptions, tokenBudget } from './token-budget.js';
