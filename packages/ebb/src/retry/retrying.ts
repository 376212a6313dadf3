import { DEV } from '../core/dev.js';
import { brief } from '../core/validate.js';
import type { AttemptContext } from './contexts.js';
import type { Mechanism } from './mechanism.js';
import { type Prepared, prepare, type RetryOptions } from './options.js';
import { execute } from './retry.js';
import { Scope, sourceOf } from './scope.js';

/** Options of {@link retrying}: those of `retry()` but the signal, which each call brings (`pipeline.execute(op, { signal })`). */
export type RetryingOptions<T = unknown> = Omit<RetryOptions<T>, 'signal'>;

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
 * spans calls (a `budget`) is shared by them.
 *
 * @example
 * const api = pipeline([retrying({ backoff: exponential({ maxAttempts: 4 }) }), circuitBreaker()]);
 */
export function retrying<T = unknown>(options?: RetryingOptions<T>): Mechanism {
  return retryingAs('retrying()', options);
}

/** {@link retrying}, its options checked under the name `where` (a simulator's, `withRetry()`'s). @internal */
export function retryingAs(where: string, options: object | undefined): Mechanism {
  if (typeof options === 'object' && options !== null && 'signal' in options) {
    throw new TypeError(
      DEV
        ? `${where}: \`signal\` is per call: pass it to pipeline.execute(operation, { signal }).`
        : brief(where, 'signal', (options as { signal?: unknown }).signal),
    );
  }
  const o: Prepared = { ...prepare(where, options), Context: Scope };
  return {
    execute: <V>(next: (context: AttemptContext) => Promise<V>, context: AttemptContext): Promise<V> =>
      execute(next, o, sourceOf(context)) as Promise<V>,
  };
}
