import type { BackoffRun } from '../backoff/backoff.js';
import { ignored, isThenable, readNow, sleepOn, verdict } from '../core/boundary.js';
import { DEV } from '../core/dev.js';
import { hostQueue } from '../core/host-queues.js';
import { rebase, type Timeline } from '../core/timeline.js';
import type { Wakeup } from '../core/timer-queue.js';
import { Attempt, type Operation } from './attempt.js';
import { decide, startRun } from './decide.js';
import { defaultIsFailure, isFinal, RetryError, unwrapFinal } from './errors.js';
import { type AbortSource, deadlineOf, type Prepared, timeOf } from './options.js';

export type { AbortSource };

type Hook = ((context: never) => unknown) | undefined;

/**
 * The one reaction of every execution's wake-up promise: no closure per waiting retry (see
 * `#wakeUp`). The promise resolves with the execution in a box: resolved with the execution
 * itself, a thenable, it would call its `then`.
 */
const resume = ([execution]: readonly [{ resume(): void }]): void => execution.resume();

/**
 * One operation after its first failure (or from the start, when it needs more than the
 * success path): a small state machine rather than an `async` function, so that an operation
 * waiting in its backoff holds only this object, its run and a slot in the timer queue —
 * measured in bench/ (memory per pending retry). `poll()` and `retrying()` drive it too.
 *
 * Every step runs inside `#do` (or a promise callback made by `#await`): whatever user code
 * throws there — `isFailure`, a hook, the policy, the clock, the budget — ends this run with that
 * error, and nothing reaches a host callback. The operation's own throws are its failures. What
 * user code answers is checked where it enters (docs/structure.md, "User code at the boundary"):
 * `isFailure`'s verdict, the budget's, the policy's delays, the clock's readings and sleeps.
 *
 * A start is lazy when the prepared options are not `timed` (see `retry()`, "Elapsed time"): no
 * clock is read before attempt 1 fails, and the elapsed time counts from that failure.
 * @internal
 */
export class Execution<T> implements Wakeup, Timeline {
  /** Wakeup fields, kept by the timer queue while this execution sleeps in it. */
  dueAt = 0;
  order = 0;
  slot = -1;
  readonly #operation: Operation<T>;
  readonly #o: Prepared;
  readonly #source: AbortSource | undefined;
  /**
   * The elapsed time's timeline ({@link Timeline}, read by `rebase()`): the last elapsed time
   * given out (0 before the first reading: never less), and what is added to a clock reading to
   * make it one — minus the first reading (NaN until attempt 1 failed, on a lazy start), plus
   * whatever the clock was set back by since.
   */
  last = 0;
  offset: number;
  /** The last attempt made. */
  #attempt = 0;
  #run: BackoffRun | undefined;
  /** The running (or just failed) attempt: outcomes of any other are late, and ignored. */
  #current: Attempt | undefined;
  /**
   * The first failure, kept until the adopting promise calls `then`; after that, with a budget
   * or a deadline only, the last failure (for `budget.recordSuccess`, and as the outcome when
   * the deadline passes during a wait) — one slot keeps a pending retry small. `#value`: it was
   * a value judged a failure, not an error.
   */
  #failure: unknown;
  #value = false;
  #resolve: ((value: Awaited<T>) => void) | undefined;
  #reject: ((reason: unknown) => void) | undefined;
  /**
   * Ends a backoff wait in the host queue. The queue's one host timer fires every due entry from
   * the async context of whichever call armed it; the next attempt instead continues through a
   * promise whose `then` this call registered when it began to wait, so it runs in this call's
   * own context (AsyncLocalStorage, OpenTelemetry) with no Node import. The promise resolves
   * with this execution (boxed), and its one reaction is {@link resume}, shared by every
   * execution: a waiting retry holds the promise, this function and the reaction, and no
   * closure of its own (256 B less per waiting retry than callbacks made per wait: bench `memory`).
   */
  #wakeUp: ((box: readonly [Execution<T>]) => void) | undefined;

  /** `failed`, `error`: attempt 1 was made on the success path and failed with `error`. */
  constructor(
    operation: Operation<T>,
    o: Prepared,
    start: number,
    source?: AbortSource,
    failed?: Attempt,
    error?: unknown,
  ) {
    this.#operation = operation;
    this.#o = o;
    this.#source = source;
    this.offset = -start;
    this.#current = failed;
    this.#failure = error;
  }

  /**
   * Runs the operation to its end, settling through `resolve` and `reject`: from attempt 1, or
   * from the failure of attempt 1 made on the success path. The execution is thenable so that,
   * after that failure, the promise `retry()` returned adopts it: no second promise.
   */
  // biome-ignore lint/suspicious/noThenProperty: deliberately a thenable, adopted by the promise retry() returned
  then(resolve: (value: Awaited<T>) => void, reject: (reason: unknown) => void): void {
    this.#resolve = resolve;
    this.#reject = reject;
    // The execution is its own abort listener (handleEvent): no closure to keep.
    this.#source?.addEventListener('abort', this);
    const failed = this.#current;
    const error = this.#failure;
    this.#failure = undefined;
    this.#do(() => {
      ignored(this.#o.budget?.recordRequest?.());
      if (failed) {
        this.#attempt = 1;
        this.#ended(failed, false, error);
      } else this.#next();
    });
  }

  /**
   * The abort source aborted (EventListener protocol), or was found aborted: the running
   * attempt's signal aborts, and the call rejects with the reason.
   */
  handleEvent(): void {
    const reason = (this.#source as AbortSource).reason;
    this.#current?.abort(reason);
    this.#settle(false, reason);
  }

  /** The timer queue's call when the backoff wait is over (a promise's resolve: it cannot throw, so no `fail`). */
  wake(): void {
    this.#wakeUp?.([this]);
  }

  #settle(ok: boolean, value: unknown): void {
    const resolve = this.#resolve;
    const reject = this.#reject as (reason: unknown) => void;
    if (!resolve) return;
    this.#resolve = this.#reject = this.#current = this.#wakeUp = undefined;
    // Only an execution waiting in the host queue has a slot.
    if (this.slot !== -1) hostQueue(this.#o.unref).remove(this);
    this.#source?.removeEventListener('abort', this);
    (ok ? resolve : reject)(value as Awaited<T>);
  }

  /** A backoff wait in the host queue is over: the next attempt (see `#wakeUp`). */
  resume(): void {
    this.#do(() => this.#next());
  }

  /** Runs one step; what it throws ends the run. */
  #do(step: () => void): void {
    try {
      step();
    } catch (error) {
      this.#settle(false, error);
    }
  }

  /**
   * Continues with `step` once `promise` (user code's) fulfils, as one step; its rejection ends
   * the run. Made where one is needed: a callback kept in a field would cost every pending retry
   * a closure.
   */
  #await<V>(promise: PromiseLike<V>, step: (value: V) => void): void {
    promise.then(
      (value) => this.#do(() => step(value)),
      (error) => this.#settle(false, error),
    );
  }

  /**
   * Milliseconds since the start, by the checked clock; a clock set back reads as no time
   * passing, then goes on from where it was. Throws for a reading that is not a finite number.
   */
  #elapsed(): number {
    const now = readNow(timeOf(this.#o));
    // A lazy start: this is the first reading, taken when attempt 1 failed, and time 0. Not
    // through rebase(), which would store a computed 0 in `last`: a retry waiting after one
    // failure holds 16 B more that way (bench: figures/memory.mjs).
    if (Number.isNaN(this.offset)) {
      this.offset = -now;
      return 0;
    }
    return rebase(this, now);
  }

  /** Calls `hook` (if any) with the frozen `context()`, then — once its promise fulfils, if it returns one — `then`, unless the run ended meanwhile. */
  #hook(hook: Hook, context: () => object, then: () => void): void {
    const result = hook?.(Object.freeze(context()) as never);
    const go = () => {
      if (this.#resolve) then();
    };
    if (isThenable(result)) this.#await(result, go);
    else go();
  }

  /** Starts the next attempt. */
  #next() {
    if (!this.#resolve) return;
    // Another callback may have aborted since the wait began: no attempt starts after an abort.
    if (this.#source?.aborted) return this.handleEvent();
    const attempts = this.#attempt;
    // On a lazy start attempt 1 reads no clock: its elapsed time is 0 by definition.
    const elapsedMs = attempts || this.#o.timed ? this.#elapsed() : 0;
    const deadline = deadlineOf(this.#o);
    if (attempts && elapsedMs > deadline) {
      // A backoff wait whose wake-up came late (a host timer on a busy machine fires late; the
      // wait was planned to end in time): no attempt starts after the deadline.
      const ok = this.#value;
      const failure = this.#failure;
      return this.#giveUp(
        ok,
        failure,
        ok
          ? failure
          : new RetryError(
              'elapsed',
              attempts,
              elapsedMs,
              failure,
              DEV
                ? `maxElapsedMs (${deadline} ms) ran out while waiting (the wake-up came late) before attempt ${attempts + 1}`
                : '',
            ),
        elapsedMs,
        'elapsed',
      );
    }
    const context = new (this.#o.Context ?? Attempt)(attempts + 1, elapsedMs, this.#source);
    this.#attempt++;
    this.#current = context;
    let result: T | PromiseLike<T>;
    try {
      result = this.#operation(context);
      if (isThenable(result)) {
        result.then(
          (value) => this.#do(() => this.#ended(context, true, value)),
          (error) => this.#do(() => this.#ended(context, false, error)),
        );
        return;
      }
    } catch (error) {
      return this.#ended(context, false, error);
    }
    this.#ended(context, true, result);
  }

  /**
   * Attempt `context` ended: with a value (`ok`) or a thrown error. Asks `isFailure` (by default
   * no value is one; a `FinalError` of any copy of ebb, thrown or returned, never is), whose answer is checked.
   */
  #ended(context: Attempt, ok: boolean, outcome: unknown) {
    if (this.#current !== context || !this.#resolve) return;
    this.#current = undefined;
    // A FinalError returned instead of thrown (`return stop(error)`) ends the run as a thrown one does.
    if (ok && outcome instanceof Error && isFinal(outcome)) ok = false;
    const isFailure = this.#o.isFailure;
    if (ok ? !isFailure : isFinal(outcome)) return this.#judged(ok, outcome, false);
    const answer = (isFailure ?? defaultIsFailure)(ok ? { ok, value: outcome } : { ok, error: outcome }, context);
    const judge = (late: unknown) => this.#judged(ok, outcome, verdict('retry()', 'isFailure', late));
    if (isThenable(answer)) this.#await(answer, judge);
    else judge(answer);
  }

  /** `isFailure`'s checked answer on the last attempt's outcome: success, an error that is no failure (final), or the decision. */
  #judged(ok: boolean, outcome: unknown, failed: boolean | 'throttled') {
    if (!this.#resolve) return;
    const o = this.#o;
    const attempt = this.#attempt;
    if (ok && !failed) {
      ignored(o.budget?.recordSuccess(Object.freeze({ attempt, lastError: this.#failure })));
      return this.#hook(
        o.onSuccess,
        () => ({ attempt, elapsedMs: this.#elapsed(), value: outcome }),
        () => this.#settle(true, outcome),
      );
    }
    const elapsedMs = this.#elapsed();
    // The next wait (a number), the RetryError to give up with, or none for an error that is no failure.
    if (failed) this.#run ??= startRun(o);
    else outcome = unwrapFinal(outcome);
    const step = failed ? decide(o, this.#run as BackoffRun, attempt, outcome, elapsedMs, !o.timed) : undefined;
    const retrying = typeof step === 'number';
    const error = ok ? undefined : outcome;
    const value = ok ? outcome : undefined;
    // Kept for the budget's recordSuccess, and as the outcome when the deadline passes during the wait.
    if (retrying && (o.budget || deadlineOf(o) !== Infinity)) {
      this.#failure = outcome;
      this.#value = ok;
    }
    const reason = retrying ? undefined : step?.reason;
    this.#hook(
      o.onFailedAttempt,
      () => ({
        attempt,
        error,
        value,
        elapsedMs,
        next: retrying ? 'retry' : step ? 'give-up' : 'final',
        delayMs: retrying ? step : undefined,
        reason,
      }),
      retrying
        ? () =>
            this.#hook(
              o.onRetry,
              () => ({ attempt, error, value, delayMs: step, elapsedMs }),
              () => this.#sleep(step),
            )
        : () => this.#giveUp(ok, outcome, ok ? outcome : (step ?? outcome), elapsedMs, reason ?? 'final'),
    );
  }

  /**
   * `onGiveUp`, then settles with `result`: resolves with it when the last failure was a value
   * (`ok`, the value `outcome`), else rejects.
   */
  #giveUp(ok: boolean, outcome: unknown, result: unknown, elapsedMs: number, reason: string): void {
    this.#hook(
      this.#o.onGiveUp,
      () => ({
        attempts: this.#attempt,
        error: ok ? undefined : outcome,
        value: ok ? outcome : undefined,
        elapsedMs,
        reason,
      }),
      () => this.#settle(ok, result),
    );
  }

  #sleep(delay: number) {
    if (this.#source?.aborted) return this.handleEvent();
    const clock = this.#o.clock;
    if (!clock) {
      const queue = hostQueue(this.#o.unref);
      queue.add(this, queue.now() + delay);
      new Promise<readonly [Execution<T>]>((resolve) => {
        this.#wakeUp = resolve;
      }).then(resume);
      return;
    }
    // The abort source cuts the sleep short: the caller's signal, or the pipeline context's own
    // (made now: only a custom clock needs one).
    const source = this.#source;
    this.#await(
      sleepOn(clock, delay, source instanceof Attempt ? source.signal : (source as AbortSignal | undefined)),
      () => this.#next(),
    );
  }
}
