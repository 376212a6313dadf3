import { optionsObject } from '../core/validate.js';
import { type AwsRetryQuota, type AwsRetryQuotaOptions, awsRetryQuota, retryCost } from '../rate/aws-retry-quota.js';
import type { BudgetSuccess } from '../retry/options.js';
import { LEVEL_SCRIPT } from './scripts.js';
import { SHARED_KEYS, type SharedControls, type SharedOptions, SharedState, withControls } from './shared-state.js';
import { checkRedisKeys, pick, validateAs } from './validate-as.js';

/** Options of {@link sharedAwsRetryQuota}: those of `awsRetryQuota` plus the shared ones. */
export interface SharedAwsRetryQuotaOptions extends AwsRetryQuotaOptions, SharedOptions {}

/** The quota {@link sharedAwsRetryQuota} returns. */
export interface SharedAwsRetryQuota extends AwsRetryQuota, SharedControls {}

/**
 * `awsRetryQuota` (the AWS SDKs' retry quota) with its tokens in Redis, shared by every process
 * using the same `name`. A retry takes its cost from the local view at once (sent to Redis at
 * once, clamped at 0 there); refunds are summed and sent every `syncIntervalMs`. While the first
 * sync is pending retries are refused; while Redis fails, the local quota goes on from the last
 * known level. Keys, batching and failure behaviour as in {@link sharedTokenBudget}.
 *
 * @example
 * const budget = sharedAwsRetryQuota({ client: redis, name: 's3-eu-west-1' });
 */
export function sharedAwsRetryQuota(options: SharedAwsRetryQuotaOptions): SharedAwsRetryQuota {
  const where = 'sharedAwsRetryQuota()';
  const o = optionsObject(where, options) as SharedAwsRetryQuotaOptions;
  checkRedisKeys(where, o, ['behaviour', 'capacity', 'costs', 'noRetryIncrement', 'classify', ...SHARED_KEYS]);
  const local = validateAs(where, 'awsRetryQuota()', () =>
    awsRetryQuota(pick(o as never, ['behaviour', 'capacity', 'costs', 'noRetryIncrement', 'classify'])),
  );
  const capacity = local.available;
  const noRetryIncrement = o.noRetryIncrement ?? 1;
  const cost = retryCost(where, o, o.behaviour ?? '2026');
  const state = new SharedState(where, o, {
    kind: 'aws-retry-quota',
    script: LEVEL_SCRIPT,
    args: ['0', String(capacity), '86400'],
    initial: capacity,
    min: 0,
    max: capacity,
    apply: (level, delta) => Math.min(capacity, Math.max(0, level + delta)),
  });
  return withControls(
    state,
    {
      get available() {
        return state.level;
      },
      tryAcquireRetry(error: unknown) {
        const c = cost(error);
        if (state.mode === 'syncing' || state.level < c) return false;
        state.change(-c, true);
        return true;
      },
      recordSuccess(context: BudgetSuccess) {
        state.change(context.attempt > 1 ? cost(context.lastError) : noRetryIncrement, false);
      },
    },
    (level) => level,
  );
}
