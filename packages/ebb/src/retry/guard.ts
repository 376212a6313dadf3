import { ignored, isThenable } from '../core/boundary.js';
import { DEV } from '../core/dev.js';
import { mistyped } from '../core/validate.js';
import type { AttemptContext } from './contexts.js';
import { prop } from './errors.js';
import type { AbortSource } from './execution.js';
import type { RateController } from './hook-points.js';
import type { Mechanism } from './mechanism.js';
import { sourceOf } from './scope.js';

/**
 * One call through a guard: waits for its ticket, runs the rest of the pipeline, records the
 * outcome with the ticket — or, when the call's context aborts first, hands the ticket back
 * (`release`) and rejects at once with the reason; the outcome that comes later is ignored.
 * Every ticket ends in exactly one `record` or `release`.
 */
class GuardedCall<T> implements EventListenerObject {
  readonly #guard: RateController;
  readonly #source: AbortSource;
  readonly #resolve: (value: T) => void;
  readonly #reject: (reason: unknown) => void;
  /** The ticket held while the call runs (`#held`), until it is recorded or handed back. */
  #ticket: unknown;
  #held = false;
  #done = false;

  constructor(
    guard: RateController,
    source: AbortSource,
    resolve: (value: T) => void,
    reject: (reason: unknown) => void,
  ) {
    this.#guard = guard;
    this.#source = source;
    this.#resolve = resolve;
    this.#reject = reject;
    source.addEventListener('abort', this);
  }

  /** The ticket was granted: runs the call, unless it ended while waiting (then the ticket goes back). */
  run(ticket: unknown, next: (context: AttemptContext) => Promise<T>, context: AttemptContext): void {
    if (this.#done) {
      this.#release(ticket);
      return;
    }
    this.#ticket = ticket;
    this.#held = true;
    next(context).then(
      (value) => this.#recorded('success', value, true),
      (error: unknown) => this.#recorded(outcomeOf(error), error, false),
    );
  }

  /** The context aborted (EventListener protocol): the ticket goes back, the call rejects now. */
  handleEvent(): void {
    const held = this.#held;
    this.#end(false, this.#source.reason);
    if (held) this.#release(this.#ticket);
  }

  /** Ends the call with `reason` (an acquire that threw or rejected): no ticket is held. */
  fail(reason: unknown): void {
    this.#end(false, reason);
  }

  #recorded(outcome: 'success' | 'throttled' | 'failure', detail: unknown, ok: boolean): void {
    if (this.#done) return;
    this.#held = false;
    try {
      ignored(this.#guard.record(outcome, this.#ticket, detail));
    } catch (error) {
      this.#end(false, error);
      return;
    }
    this.#end(ok, detail);
  }

  #release(ticket: unknown): void {
    this.#held = false;
    try {
      ignored(this.#guard.release?.(ticket));
    } catch (error) {
      // After the call ended there is nobody to tell; before, it fails with it.
      this.#end(false, error);
    }
  }

  #end(ok: boolean, value: unknown): void {
    if (this.#done) return;
    this.#done = true;
    this.#source.removeEventListener('abort', this);
    if (ok) this.#resolve(value as T);
    else this.#reject(value);
  }
}

/** How a guard records a thrown error: `'throttled'` for one that says "slow down" (`throttled: true`). */
const outcomeOf = (error: unknown): 'throttled' | 'failure' =>
  prop(error, 'throttled') === true ? 'throttled' : 'failure';

/**
 * A hand-written guard of the `acquire`/`record`/`release` shape as a pipeline mechanism, for
 * `pipeline([...])`, `withRetry()`'s `use` and `instrument()`, which take mechanisms only (ebb's
 * own `circuitBreaker()`, `concurrencyLimit()`, `bulkhead` and rate controllers are mechanisms
 * already). `acquire(signal, attempt)` runs before the call — its throw (a refusal) is the call's
 * failure, which an outer `retrying()` backs off and retries like any other, waiting at least its
 * `retryAfterMs` —, then `record(outcome, ticket, detail)` once with what the call ended with:
 * `'success'` and its value, `'throttled'` for an error with `throttled: true`, else `'failure'`
 * and the error. When the context aborts while the guard waits or the call runs, the ticket goes
 * back (`release`, when the guard has one) and the call rejects at once with the reason. Every
 * ticket ends in exactly one `record` or `release`.
 *
 * The signal handed to `acquire` is the context's own, made only when something can abort the
 * call (a caller's signal, a timeout around it): otherwise `acquire` gets none, and the success
 * path makes no `AbortSignal`.
 *
 * @example
 * // At most 10 calls at once, with a guard written by hand.
 * let running = 0;
 * const tenAtOnce = guard({
 *   acquire() {
 *     if (running >= 10) throw new Error('busy');
 *     running++;
 *   },
 *   record() { running--; },
 *   release() { running--; },
 * });
 * const api = pipeline([retrying(), tenAtOnce]);
 */
export function guard(g: RateController): Mechanism {
  if (typeof prop(g, 'acquire') !== 'function' || typeof prop(g, 'record') !== 'function') {
    mistyped(
      'guard()',
      'guard',
      g,
      DEV ? 'an object { acquire(signal, attempt), record(outcome, ticket, detail) }' : '',
    );
  }
  return {
    execute<T>(next: (context: AttemptContext) => Promise<T>, context: AttemptContext): Promise<T> {
      const source = sourceOf(context);
      if (source === undefined) {
        // Nothing can abort this call: no listener, no signal, one promise.
        let ticket: unknown;
        try {
          ticket = g.acquire(undefined, context.attempt);
        } catch (error) {
          return Promise.reject(error);
        }
        const go = (t: unknown) =>
          next(context).then(
            (value) => {
              ignored(g.record('success', t, value));
              return value;
            },
            (error: unknown) => {
              ignored(g.record(outcomeOf(error), t, error));
              throw error;
            },
          );
        return isThenable(ticket) ? Promise.resolve(ticket).then(go) : go(ticket);
      }
      if (source.aborted) return Promise.reject(source.reason);
      return new Promise<T>((resolve, reject) => {
        const call = new GuardedCall<T>(g, source, resolve, reject);
        let ticket: unknown;
        try {
          ticket = g.acquire(context.signal, context.attempt);
          if (isThenable(ticket)) {
            ticket.then(
              (t) => call.run(t, next, context),
              (error: unknown) => call.fail(error),
            );
            return;
          }
        } catch (error) {
          call.fail(error);
          return;
        }
        call.run(ticket, next, context);
      });
    },
  };
}

/**
 * `m` when it is a mechanism, else the guard `m` wrapped by {@link guard}: for the simulators,
 * whose `limit` and `rate` options take any guard, as they always did. @internal
 */
export const asMechanism = (m: RateController | Mechanism): Mechanism =>
  typeof (m as Partial<Mechanism>).execute === 'function' ? (m as Mechanism) : guard(m as RateController);
