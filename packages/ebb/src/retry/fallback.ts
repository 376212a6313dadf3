import { isThenable, verdict } from '../core/boundary.js';
import { DEV } from '../core/dev.js';
import { checkKeys, mistyped, optionsObject } from '../core/validate.js';
import type { AttemptContext } from './contexts.js';
import { defaultIsFailure, type Result } from './errors.js';
import type { Mechanism } from './mechanism.js';
import type { IsFailure } from './options.js';
import { sourceOf } from './scope.js';

/** Options of {@link fallback}. */
export interface FallbackOptions<T = unknown> {
  /**
   * Which outcomes the fallback replaces (see `retry()`'s `isFailure`). Default
   * `defaultIsFailure`: every error but an abort and a bug in the caller's own code; no value.
   */
  readonly isFailure?: IsFailure<T>;
}

/**
 * The mechanism {@link fallback} makes: it may resolve a call with a value of type `F` instead of
 * the operation's, so a {@link pipeline} that holds it resolves with `T | F`.
 */
export interface Fallback<F> extends Mechanism {
  /** Type only, never set: the type of the value it may resolve a call with, read by `pipeline()`'s types. */
  readonly fallsBackTo?: F;
}

/**
 * A fallback, as a pipeline mechanism: when what is inside it fails — by `isFailure` — the call
 * resolves with `value` instead, or with what `value(outcome, context)` returns when it is a
 * function (it may be async; what it throws is the call's error). An abort is never replaced:
 * the call rejects with its reason. Outermost in Microsoft's order, so it also answers for a
 * timeout, a retry that gave up, an open breaker.
 *
 * The pipeline's `execute` is typed to resolve with the operation's value or this one:
 * `pipeline([fallback(null), retrying()]).execute(getUser)` is a `Promise<User | null>`.
 *
 * @example
 * const prices = pipeline([fallback(cachedPrices), retrying(), circuitBreaker()]);
 * const p = await prices.execute(() => fetchPrices()); // cachedPrices when the service is down
 */
export function fallback<T>(
  value: T | ((outcome: Result<T>, context: AttemptContext) => T | PromiseLike<T>),
  options?: FallbackOptions<T>,
): Fallback<T> {
  const where = 'fallback()';
  const o = optionsObject(where, options);
  checkKeys(where, o, ['isFailure']);
  const isFailure = o.isFailure;
  if (isFailure !== undefined && typeof isFailure !== 'function')
    mistyped(where, 'isFailure', isFailure, DEV ? 'a function' : '');
  return {
    execute<V>(next: (context: AttemptContext) => Promise<V>, context: AttemptContext): Promise<V> {
      const source = sourceOf(context);
      const judge = (ok: boolean, x: unknown): unknown => {
        if (!ok && source?.aborted) throw x;
        const outcome = (ok ? { ok, value: x } : { ok, error: x }) as Result<T>;
        const replace = (failed: unknown): unknown => {
          if (!failed) {
            if (ok) return x;
            throw x;
          }
          return typeof value === 'function'
            ? (value as (outcome: Result<T>, context: AttemptContext) => unknown)(outcome, context)
            : value;
        };
        // The answer is checked (true, false or 'throttled'): a bad one is the call's error.
        const answer = (isFailure ?? defaultIsFailure)(outcome, context);
        const checked = (a: unknown) => replace(verdict(where, 'isFailure', a));
        return isThenable(answer) ? Promise.resolve(answer).then(checked) : checked(answer);
      };
      return next(context).then(isFailure ? (v) => judge(true, v) : undefined, (error: unknown) =>
        judge(false, error),
      ) as Promise<V>;
    },
  };
}
