import { DEV } from '../core/dev.js';
import { hostQueue } from '../core/host-queues.js';
import { brief } from '../core/validate.js';
import type { AttemptContext } from './contexts.js';
import { defaultBudget } from './default-budget.js';
import type { RetryBudget } from './hook-points.js';
import { type Mechanism, RETRIES, SEALED } from './mechanism.js';
import { KEYS, type Prepared, prepare, type RetryOptions } from './options.js';
import { execute } from './retry.js';
import { Scope, sourceOf } from './scope.js';

/**
 * Options of {@link retrying}: those of `retry()` but the signal, which each call brings
 * (`pipeline.execute(op, { signal })`), and a `budget` that defaults to one of its own.
 */
export interface RetryingOptions<T = unknown> extends Omit<RetryOptions<T>, 'signal' | 'budget'> {
  /**
   * The retry budget its calls share. Default: one of its own, kind to a struggling service —
   * retries in the last ~10 s ≤ max(20 % of the calls, 10), so that a total outage costs about
   * 1.2 requests a call while a blip that fails 10 % of requests is retried in full (see
   * docs/retry.md, "The default retry budget"). A refusal gives up with `RetryError`
   * reason `'budget'`. `false`: no budget (every call retries as its policy allows); or a budget of
   * `ebb/rate` (`ratioBudget()`, `tokenBudget()`, `awsRetryQuota()`) to share among mechanisms.
   */
  readonly budget?: RetryBudget | false;
}

/**
 * The retry mechanism of a pipeline: `retry()`'s executor, with the same options, the same
 * decisions and the same state machine, around whatever is inside it in the pipeline. Each
 * attempt runs the inner mechanisms with a fresh context (`attempt` 1, 2, …). A refusal from a
 * guard inside it (an open breaker's `BrokenCircuitError`, a full limit's `LimitExceededError`)
 * is a failure like any other: backed off and retried, waiting at least its `retryAfterMs`; a
 * timeout inside bounds each attempt, one outside the whole call. The call's signal
 * (`pipeline.execute(op, { signal })`) aborts it as `retry()`'s `signal` does.
 *
 * Options are checked once, here. One `retrying()` serves every call of its pipeline: state that
 * spans calls — its retry budget, by default one of its own (see `budget`) — is shared by them.
 *
 * @example
 * const api = pipeline([retrying({ backoff: exponential({ maxAttempts: 4 }) }), circuitBreaker()]);
 */
export function retrying<T = unknown>(options?: RetryingOptions<T>): Mechanism {
  return retryingAs('retrying()', options);
}

/** The executor's options a `retrying()` takes: all but `signal`, which each call brings. @internal */
export const RETRYING_KEYS: readonly string[] = /* @__PURE__ */ KEYS.filter((k) => k !== 'signal');

/**
 * {@link retrying}, its options checked under the name `where` (a simulator's, a client
 * adapter's), an unknown one refused with the list `known` (the adapters add their own). @internal
 */
export function retryingAs(where: string, options: object | undefined, known = RETRYING_KEYS): Mechanism {
  if (typeof options === 'object' && options !== null && 'signal' in options) {
    throw new TypeError(
      DEV
        ? `${where}: \`signal\` is per call: pass it to pipeline.execute(operation, { signal }).`
        : brief(where, 'signal', (options as { signal?: unknown }).signal),
    );
  }
  const given = (options as { budget?: unknown } | undefined)?.budget;
  const prepared = prepare(where, given === false ? { ...options, budget: undefined } : options, known);
  // Without a budget of the caller's, one of its own: calls are counted here, with no clock (the
  // success path stays as it is), and the executor asks it before each retry.
  const own =
    given === undefined ? defaultBudget(() => (prepared.clock ?? hostQueue(prepared.unref)).now()) : undefined;
  const o: Prepared = own
    ? {
        ...prepared,
        Context: Scope,
        budget: { tryAcquireRetry: own.tryAcquireRetry, recordSuccess: own.recordSuccess },
      }
    : { ...prepared, Context: Scope };
  const mechanism: Mechanism = {
    execute: <V>(next: (context: AttemptContext) => Promise<V>, context: AttemptContext): Promise<V> => {
      own?.recordRequest();
      return execute(next, o, sourceOf(context)) as Promise<V>;
    },
  };
  // Each attempt runs with a context of its own: the one it is given goes no further.
  SEALED.add(mechanism);
  RETRIES.add(mechanism);
  return mechanism;
}
