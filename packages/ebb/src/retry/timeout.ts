import { sleepOn } from '../core/boundary.js';
import type { Clock } from '../core/clock.js';
import { DEV } from '../core/dev.js';
import { hostQueue } from '../core/host-queues.js';
import type { Wakeup } from '../core/timer-queue.js';
import { checkKeys, invalid, mistyped, optionsObject } from '../core/validate.js';
import type { AttemptContext } from './contexts.js';
import { timeoutError } from './errors.js';
import type { AbortSource } from './execution.js';
import { type Mechanism, SEALED } from './mechanism.js';
import { Scope, sourceOf } from './scope.js';

/** Options of {@link timeout}. */
export interface TimeoutOptions {
  /** Time source; default the system clock (its waits share the process-wide timer queue). */
  readonly clock?: Clock;
}

/**
 * One call through a timeout: the rest of the pipeline runs with a child context whose signal
 * aborts when the time is up; the call then rejects at once with the `TimeoutError` (the
 * operation's late outcome is ignored). An abort of the context aborts the child and rejects at
 * once with the reason. Whichever comes first, the timer and the listener are gone when the call
 * settles.
 */
class TimedCall<T> implements Wakeup, EventListenerObject {
  dueAt = 0;
  order = 0;
  slot = -1;
  readonly #child: Scope;
  readonly #ms: number;
  readonly #unref: boolean;
  readonly #source: AbortSource | undefined;
  /** Cuts a custom clock's sleep short. */
  #sleeper: AbortController | undefined;
  #resolve: ((value: T) => void) | undefined;
  #reject: ((reason: unknown) => void) | undefined;

  constructor(
    child: Scope,
    ms: number,
    source: AbortSource | undefined,
    clock: Clock | undefined,
    unref: boolean,
    resolve: (value: T) => void,
    reject: (reason: unknown) => void,
  ) {
    this.#child = child;
    this.#ms = ms;
    this.#unref = unref;
    this.#source = source;
    this.#resolve = resolve;
    this.#reject = reject;
    // The timer first: a clock whose sleep() throws or returns no promise fails this call (the
    // caller's catch) with no listener left behind.
    if (clock) {
      this.#sleeper = new AbortController();
      sleepOn(clock, ms, this.#sleeper.signal).then(
        () => this.wake(),
        // A sleep that rejects before the call settled (not cut short by it) fails the call.
        (error: unknown) => this.fail(error),
      );
    } else {
      const queue = hostQueue(unref);
      queue.add(this, queue.now() + ms);
    }
    source?.addEventListener('abort', this);
  }

  /** The context aborted (EventListener protocol). */
  handleEvent(): void {
    this.#expire((this.#source as AbortSource).reason);
  }

  /**
   * The time is up. The message names the attempt from the second on: a timeout outside a retry
   * (the whole call's) always sees attempt 1, and "attempt 1 timed out" would misname it.
   */
  wake(): void {
    const n = this.#child.attempt;
    this.#expire(timeoutError(`${n > 1 ? `attempt ${n} ` : ''}timed out after ${this.#ms} ms (timeout(${this.#ms}))`));
  }

  /** Ends the call with `error`: the timer queue's report that `wake` threw, or a custom clock's failed sleep. */
  fail(error: unknown): void {
    this.settle(false, error);
  }

  #expire(reason: unknown): void {
    if (!this.#resolve) return;
    this.#child.abort(reason);
    this.settle(false, reason);
  }

  settle(ok: boolean, value: unknown): void {
    const resolve = this.#resolve;
    const reject = this.#reject as (reason: unknown) => void;
    if (!resolve) return;
    this.#resolve = this.#reject = undefined;
    if (this.slot !== -1) hostQueue(this.#unref).remove(this);
    this.#sleeper?.abort();
    this.#source?.removeEventListener('abort', this);
    if (ok) resolve(value as T);
    else reject(value);
  }
}

/**
 * A time limit, as a pipeline mechanism: everything inside it runs with a context whose signal
 * aborts after `ms` milliseconds (reason: a `TimeoutError` `DOMException`, as
 * `AbortSignal.timeout()` gives), and the call rejects with that error at once, whether or not
 * the operation heeds its signal. Inside a `retrying()` it bounds each attempt (the error is a
 * failure the retry retries, by default); outside, the whole call, waits included (it ends the
 * retries at once).
 *
 * The signal is made only when the operation reads it; the timer is a slot in the process-wide
 * timer queue in Node.js (one host timer for every wait in the process), a `setTimeout` in
 * browsers. Default clock: the system clock; pass `clock` (a `virtualClock()`) in tests.
 *
 * @example
 * const api = pipeline([timeout(10_000), retrying(), timeout(2_000)]); // 2 s an attempt, 10 s in all
 * const res = await api.execute(({ signal }) => fetch(url, { signal }));
 */
export function timeout(ms: number, options?: TimeoutOptions): Mechanism {
  const where = 'timeout()';
  if (typeof ms !== 'number' || !(ms > 0 && ms < Infinity)) {
    invalid(where, 'ms', ms, DEV ? 'a finite number > 0' : '', DEV ? 'For example 5000 for five seconds.' : '');
  }
  const o = optionsObject(where, options);
  checkKeys(where, o, ['clock']);
  const clock = o.clock;
  if (clock !== undefined && (typeof clock?.now !== 'function' || typeof clock.sleep !== 'function')) {
    mistyped(where, 'clock', clock, DEV ? 'an object with now() and sleep()' : '');
  }
  return timeoutOn(ms, clock, false);
}

/**
 * {@link timeout} with its options checked: on `clock`, or on the host queue — the one whose timer
 * does not hold a Node.js process open with `unref` (`withRetry()`'s attempt timeout). @internal
 */
export function timeoutOn(ms: number, clock: Clock | undefined, unref: boolean): Mechanism {
  const mechanism: Mechanism = {
    execute<T>(next: (context: AttemptContext) => Promise<T>, context: AttemptContext): Promise<T> {
      const source = sourceOf(context);
      if (source?.aborted) return Promise.reject(source.reason);
      return new Promise<T>((resolve, reject) => {
        const child = new Scope(context.attempt, context.elapsedMs, undefined, true);
        let call: TimedCall<T>;
        try {
          call = new TimedCall<T>(child, ms, source, clock, unref, resolve, reject);
        } catch (error) {
          reject(error);
          return;
        }
        next(child).then(
          (value) => call.settle(true, value),
          (error: unknown) => call.settle(false, error),
        );
      });
    },
  };
  // What runs inside gets a child context: the one it is given goes no further.
  SEALED.add(mechanism);
  return mechanism;
}
