import { describe, prop } from '../core/boundary.js';
import { checkKeys, mistyped, nonNegative, optionsObject } from '../core/validate.js';
import type { BudgetSuccess, RetryBudget } from '../retry/options.js';

/** The kinds of error the AWS retry quota prices differently. */
export type AwsErrorKind = 'throttling' | 'transient' | 'timeout';

/** What one retry costs, by the kind of error retried. */
export interface AwsRetryCosts {
  readonly throttling: number;
  readonly transient: number;
  readonly timeout: number;
}

/** Options of {@link awsRetryQuota}. */
export interface AwsRetryQuotaOptions {
  /** Tokens in the quota, full at first (`INITIAL_RETRY_TOKENS`). Default 500. */
  readonly capacity?: number;
  /**
   * Which SDK behaviour's costs apply when `costs` is left out: `'2026'` (default, what the
   * published SDK does today: `{ throttling: 5, transient: 14, timeout: 14 }`) or `'pre-2026'`
   * (`@smithy/core` up to 3.39.0 by default: `{ throttling: 5, transient: 10, timeout: 10 }`).
   */
  readonly behaviour?: '2026' | 'pre-2026';
  /** What a retry costs by kind. Default: the `behaviour`'s costs. */
  readonly costs?: AwsRetryCosts;
  /** Tokens an operation that succeeded at once puts back (`NO_RETRY_INCREMENT`). Default 1. */
  readonly noRetryIncrement?: number;
  /**
   * Names an error's kind. Default: `throttled: true` or `status` 429 → `'throttling'`; `name`
   * `'TimeoutError'` (attempt timeouts, `AbortSignal.timeout`) → `'timeout'`; anything else →
   * `'transient'`.
   */
  readonly classify?: (error: unknown) => AwsErrorKind;
}

/** The budget {@link awsRetryQuota} returns. */
export interface AwsRetryQuota extends RetryBudget {
  /** Takes the retry's cost, by the error's kind, if that many tokens are left. */
  tryAcquireRetry(error: unknown): boolean;
  /** Puts back what the last retry cost, or `noRetryIncrement` if the operation needed none. */
  recordSuccess(context: BudgetSuccess): void;
  /** Tokens left now. */
  readonly available: number;
}

/** The default `classify` of {@link awsRetryQuota} (also used by `ebb/redis`). */
export function defaultClassify(error: unknown): AwsErrorKind {
  // Read through `prop`: a property that throws (a revoked proxy, a getter) reads as absent.
  if (prop(error, 'throttled') === true || prop(error, 'status') === 429) return 'throttling';
  return prop(error, 'name') === 'TimeoutError' ? 'timeout' : 'transient';
}

const KINDS: readonly AwsErrorKind[] = ['throttling', 'transient', 'timeout'];

/**
 * The AWS SDKs' retry quota (standard and adaptive modes) as a retry budget: 500 tokens, full
 * at first; each retry takes the cost of its error's kind, and a retry that would overdraw the
 * quota is refused. An operation that succeeds puts back what its last retry cost — or 1 token
 * if it needed no retry — up to the capacity.
 *
 * **Constants.** The defaults are those `@smithy/util-retry` applies today: version 4.6.2 (its
 * code in `@smithy/core` 3.41.0, `StandardRetryStrategy` and `retries-2026-config`) ships with
 * the 2026 retry behaviour switched on, which AWS announced as the default from November 2026:
 * a throttling retry costs 5, any other 14. Before the switch (`@smithy/core` 3.39.0 and earlier,
 * by default), the same strategy charged 5 for throttling and 10 for transient errors and
 * timeouts: `behaviour: 'pre-2026'`; the older
 * `middleware-retry` quota charged 10 for `TimeoutError` and 5 for everything else.
 *
 * **When to use:** to ration retries the way AWS SDK clients do, one quota per client (so per
 * service and region), shared by all its calls.
 *
 * **Gotchas:** during a total outage of transient errors the quota allows `capacity / 14` = 35
 * retries, then none until successes refill it — one token per success, so about 14
 * successful operations pay for one later retry.
 *
 * @example
 * const budget = awsRetryQuota();
 * await retry(() => s3.send(command), { budget, backoff: presets.awsStandard });
 */
export function awsRetryQuota(options?: AwsRetryQuotaOptions): AwsRetryQuota {
  const where = 'awsRetryQuota()';
  const o = optionsObject(where, options) as AwsRetryQuotaOptions;
  checkKeys(where, o, ['behaviour', 'capacity', 'costs', 'noRetryIncrement', 'classify']);
  const behaviour = o.behaviour === undefined ? '2026' : o.behaviour;
  if (behaviour !== '2026' && behaviour !== 'pre-2026') {
    mistyped(where, 'behaviour', o.behaviour, "'2026' or 'pre-2026'", "'2026' is what the SDK does today.");
  }
  const capacity = nonNegative(where, 'capacity', o.capacity, 500, false, 'For example 500, the SDKs’ quota.');
  const noRetryIncrement = nonNegative(where, 'noRetryIncrement', o.noRetryIncrement, 1, false, 'For example 1.');
  const cost = retryCost(where, o, behaviour);
  let available = capacity;
  return {
    get available() {
      return available;
    },
    tryAcquireRetry(error: unknown) {
      const c = cost(error);
      if (available < c) return false;
      available -= c;
      return true;
    },
    recordSuccess(context: BudgetSuccess) {
      const refund = context.attempt > 1 ? cost(context.lastError) : noRetryIncrement;
      available = Math.min(capacity, available + refund);
    },
  };
}

/**
 * What a retry after `error` costs under the quota's options (`costs`, else the `behaviour`'s;
 * `classify`), checked: a bad option throws now, a `classify` answer that is no kind throws at
 * the call that asked. Shared by {@link awsRetryQuota} and `ebb/redis`'s twin. @internal
 */
export function retryCost(
  where: string,
  o: AwsRetryQuotaOptions,
  behaviour: '2026' | 'pre-2026',
): (error: unknown) => number {
  // StandardRetryStrategy.getCapacityCost: `errorType === modifiedCostType() ? throttlingCost() : cost()`,
  // 2026: THROTTLING → 5, else 14; before: TRANSIENT → 10, else (THROTTLING) 5.
  const costs =
    o.costs === undefined
      ? behaviour === '2026'
        ? { throttling: 5, transient: 14, timeout: 14 }
        : { throttling: 5, transient: 10, timeout: 10 }
      : o.costs;
  if (typeof costs !== 'object' || costs === null || Array.isArray(costs)) {
    mistyped(where, 'costs', costs, 'an object { throttling, transient, timeout }');
  }
  checkKeys(`${where} costs`, costs, KINDS);
  for (const kind of KINDS) {
    nonNegative(where, `costs.${kind}`, costs[kind], Number.NaN, false, 'Costs are tokens, such as 5.');
  }
  const classify = o.classify ?? defaultClassify;
  if (typeof classify !== 'function') mistyped(where, 'classify', classify, 'a function (error) => kind');
  return (error) => {
    const kind = classify(error);
    if (!KINDS.includes(kind)) {
      throw new TypeError(
        `${where}: \`classify\` returned ${describe(kind)}; expected 'throttling', 'transient' or 'timeout'.`,
      );
    }
    return costs[kind];
  };
}
