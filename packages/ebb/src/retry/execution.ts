import type { BackoffRun } from '../backoff/backoff.js';
import { predicate, sleepOn as sleepChecked } from '../core/boundary.js';
import { hostQueue } from '../core/clock.js';
import type { Wakeup } from '../core/timer-queue.js';
import { Attempt, callHook, isThenable, type Operation } from './attempt.js';
import { classify, decide, readClock, startRun } from './decide.js';
import { type GiveUpReason, prop, RetryError, timeoutError, unwrapFinal } from './errors.js';
import { clockOf, deadlineOf, type NextStep, type Prepared } from './options.js';

const noop = (): void => {};
function isThrottle(error: unknown): boolean {
  return prop(error, 'throttled') === true;
}
/** The executor's clock's `sleep()`, checked (a promise, or a TypeError naming the clock). */
const sleepOn = (o: Prepared, ms: number, signal: AbortSignal | undefined): PromiseLike<void> =>
  sleepChecked(clockOf(o), ms, signal);
/**
 * One operation after its first failure (or from the start, when it needs more than the
 * success path): a small state machine rather than an `async` function, so that an operation
 * waiting in its backoff holds only this object, its run and a timer — measured in bench/
 * (memory per pending retry). `poll()` drives it too. @internal
 */
export class Execution<T> implements Wakeup {
  /** Wakeup fields, kept by the timer queue while this execution sleeps on the system clock. */
  dueAt = 0;
  order = 0;
  // Stryker disable next-line UnaryOperator: TimerQueue.remove checks that the entry sits at its slot, so +1 removes nothing either.
  slot = -1;
  readonly #operation: Operation<T>;
  readonly #o: Prepared;
  /** The first clock reading; NaN until attempt 1 failed, on a lazy start. */
  #start: number;
  /** A lazy start: elapsed time counts from attempt 1's failure. */
  readonly #fromFailure: boolean;
  /** The clock's last reading: a later one may not be smaller. */
  #last: number;
  /** The last attempt made. */
  #attempt = 0;
  #run: BackoffRun | undefined;
  /** The running (or just failed) attempt: outcomes of any other are late, and ignored. */
  #current: Attempt | undefined;
  /**
   * The first failure, kept until the adopting promise calls `then`; after that, with a budget,
   * a rate controller or a deadline only, the last error (for `budget.recordSuccess`, and as the
   * cause when the deadline passes during a wait) — one slot keeps a pending retry small.
   */
  #error: unknown;
  /** Cancels the running attempt's timeout timer. */
  #attemptTimer: AbortController | undefined;
  /** The running attempt's rate ticket, released if the attempt ends with no outcome (an abort). */
  #ticket: unknown;
  #resolve: ((value: Awaited<T>) => void) | undefined;
  #reject: ((reason: unknown) => void) | undefined;

  constructor(operation: Operation<T>, o: Prepared, start: number) {
    this.#operation = operation;
    this.#o = o;
    this.#start = start;
    this.#fromFailure = Number.isNaN(start);
    this.#last = Number.isNaN(start) ? -Infinity : start;
  }

  /**
   * Runs the operation to its end, settling through `resolve` and `reject`: from attempt 1, or,
   * with `failed`, from the failure of attempt 1 made on the success path.
   */
  start(
    resolve: (value: Awaited<T>) => void,
    reject: (reason: unknown) => void,
    failed?: Attempt,
    error?: unknown,
  ): void {
    this.#resolve = resolve;
    this.#reject = reject;
    // The execution is its own abort listener (handleEvent): no closure to keep.
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: `once` changes nothing: #settle removes the listener, and a signal fires `abort` once.
    this.#o.signal?.addEventListener('abort', this, { once: true });
    try {
      this.#o.budget?.recordRequest?.();
    } catch (thrown) {
      this.#fail(thrown);
      return;
    }
    if (failed) {
      this.#attempt = 1;
      this.#current = failed;
      this.#failed(failed, error);
    } else this.#next();
  }

  /** The execution as the thenable a promise adopts after attempt 1 failed on the success path. */
  after(failed: Attempt, error: unknown): this {
    this.#current = failed;
    this.#error = error;
    return this;
  }

  // biome-ignore lint/suspicious/noThenProperty: deliberately a thenable, adopted by the promise retry() returned
  then(resolve: (value: Awaited<T>) => void, reject: (reason: unknown) => void): void {
    const error = this.#error;
    this.#error = undefined;
    this.start(resolve, reject, this.#current, error);
  }

  #settle(ok: boolean, value: unknown): void {
    const resolve = this.#resolve;
    const reject = this.#reject;
    // Stryker disable next-line LogicalOperator: resolve and reject are set and cleared together.
    if (!resolve || !reject) return;
    this.#resolve = this.#reject = undefined;
    this.#current = undefined;
    this.#attemptTimer?.abort();
    // Stryker disable next-line OptionalChaining: only an execution on a host clock's queue has a slot >= 0.
    if (this.slot >= 0) hostQueue(clockOf(this.#o))?.remove(this);
    this.#o.signal?.removeEventListener('abort', this);
    if (ok) resolve(value as Awaited<T>);
    else reject(value);
  }

  /** Ends the run with `error`: a step that throws, a hook that throws, a bad value. Nothing is swallowed. */
  #fail(error: unknown): void {
    this.#settle(false, error);
  }

  /** `#fail` as a callback, made where one is needed: a field would cost every pending retry a closure. */
  #failer(): (error: unknown) => void {
    return (error) => this.#settle(false, error);
  }

  /** Milliseconds since the start, by the checked clock. Throws for a bad reading. */
  #elapsed(): number {
    this.#last = readClock(clockOf(this.#o), this.#last);
    // A lazy start: this is the first reading, taken when attempt 1 failed.
    if (Number.isNaN(this.#start)) this.#start = this.#last;
    return this.#last - this.#start;
  }

  /** The caller's signal aborted (EventListener protocol). */
  handleEvent(): void {
    this.#aborted();
  }

  /** The timer queue's call when the backoff sleep is over. */
  wake(): void {
    this.#next();
  }

  /** The timer queue's report that `wake` threw (it cannot: `#next` catches what it calls): this run fails with it. */
  fail(error: unknown): void {
    this.#fail(error);
  }

  #aborted(): void {
    const reason = (this.#o.signal as AbortSignal).reason;
    const running = this.#current;
    running?.abort(reason);
    // The running attempt will report no outcome now (late ones are ignored): free its ticket.
    if (running !== undefined && this.#o.rate !== undefined && this.#resolve) {
      const ticket = this.#ticket;
      this.#ticket = undefined;
      this.#settle(false, reason);
      this.#release(ticket);
      return;
    }
    this.#settle(false, reason);
  }

  /** Hands back a ticket that will get no outcome. A throwing `release` is reported to nobody else. */
  #release(ticket: unknown): void {
    try {
      this.#o.rate?.release?.(ticket);
    } catch (error) {
      // After settling there is nobody to tell; before, the operation fails with it.
      this.#fail(error);
    }
  }

  /** Starts the next attempt, once the rate controller (if any) lets it go. */
  #next(): void {
    if (!this.#resolve) return;
    const rate = this.#o.rate;
    if (!rate) {
      this.#launch(undefined, false);
      return;
    }
    let acquired: unknown;
    try {
      acquired = rate.acquire(this.#o.signal, this.#attempt + 1);
      if (isThenable(acquired)) {
        acquired.then((ticket) => this.#launch(ticket, true), this.#failer());
        return;
      }
    } catch (error) {
      this.#fail(error);
      return;
    }
    this.#launch(acquired, false);
  }

  /**
   * Starts an attempt. `ticket` is what the rate controller's `acquire` gave, handed back to its
   * `record`; the attempt's own callbacks carry it, so a retry waiting in its backoff holds none.
   * `waited`: the rate controller made this attempt wait, so the deadline is checked again.
   */
  #launch(ticket: unknown, waited: boolean): void {
    const o = this.#o;
    // Stryker disable next-line BlockStatement: only an abort settles a run waiting in acquire(), and the signal check below hands the ticket back the same way.
    if (!this.#resolve) {
      // Settled while waiting for rate.acquire(): the ticket gets no attempt.
      if (o.rate) this.#release(ticket);
      return;
    }
    // Another callback may have aborted since the wait ended: no attempt starts after an abort.
    if (o.signal?.aborted) {
      this.#aborted();
      if (o.rate) this.#release(ticket);
      return;
    }
    let context: Attempt;
    try {
      const elapsed = this.#elapsed();
      if ((waited || this.#attempt > 0) && elapsed > deadlineOf(o)) {
        // A wait ran past the deadline: the rate controller's, or a backoff wait whose wake-up came
        // late (a host timer on a busy machine fires late; the wait was planned to end in time).
        // No attempt starts after the deadline.
        const during = waited ? 'while waiting for rate.acquire()' : 'while waiting (the wake-up came late)';
        const detail = `maxElapsedMs (${deadlineOf(o)} ms) ran out ${during} before attempt ${this.#attempt + 1}`;
        const error = this.#error;
        if (o.rate) this.#release(ticket);
        this.#end(new RetryError('elapsed', this.#attempt, elapsed, error, detail), error, 'elapsed', elapsed, false);
        return;
      }
      context = new Attempt(++this.#attempt, elapsed);
      this.#current = context;
      this.#ticket = ticket;
      const timeoutMs = o.attemptTimeoutMs ?? Infinity;
      const left = deadlineOf(o) - elapsed;
      const byDeadline = left < timeoutMs;
      const limit = byDeadline ? left : timeoutMs;
      if (limit !== Infinity) {
        const timer = new AbortController();
        this.#attemptTimer = timer;
        sleepOn(o, limit > 0 ? limit : 0, timer.signal).then(() => {
          if (this.#current !== context) return;
          const error = timeoutError(
            byDeadline
              ? `attempt ${context.attempt} reached the deadline (maxElapsedMs ${deadlineOf(o)} ms)`
              : `attempt ${context.attempt} timed out after ${timeoutMs} ms (attemptTimeoutMs)`,
          );
          context.abort(error);
          this.#failed(context, error, ticket, byDeadline);
        }, noop);
      }
    } catch (error) {
      if (o.rate) {
        this.#ticket = undefined;
        this.#release(ticket);
      }
      this.#fail(error);
      return;
    }
    let result: T | PromiseLike<T>;
    try {
      result = this.#operation(context);
    } catch (error) {
      this.#failed(context, error, ticket);
      return;
    }
    if (isThenable(result)) {
      result.then(
        (value) => this.#succeeded(context, value, ticket),
        (error: unknown) => this.#failed(context, error, ticket),
      );
    } else this.#succeeded(context, result, ticket);
  }

  #succeeded(context: Attempt, value: unknown, ticket: unknown): void {
    if (this.#current !== context) return;
    const o = this.#o;
    this.#ticket = undefined;
    try {
      o.rate?.record('success', ticket, value);
      o.budget?.recordSuccess(Object.freeze({ attempt: context.attempt, lastError: this.#error }));
      if (o.onSuccess) {
        const elapsedMs = this.#elapsed();
        const done = () => this.#settle(true, value);
        callHook(
          o.onSuccess,
          () => Object.freeze({ attempt: context.attempt, elapsedMs, value }),
          done,
          this.#failer(),
        );
        return;
      }
    } catch (thrown) {
      this.#fail(thrown);
      return;
    }
    this.#settle(true, value);
  }

  /** Attempt `context` failed with `error`; `deadline`: it ran into `maxElapsedMs`, which ends the run. */
  #failed(context: Attempt, error: unknown, ticket?: unknown, deadline = false): void {
    if (this.#current !== context || !this.#resolve) return;
    this.#current = undefined;
    this.#attemptTimer?.abort();
    this.#attemptTimer = undefined;
    this.#ticket = undefined;
    const o = this.#o;
    let verdict: unknown;
    try {
      o.rate?.record(isThrottle(error) ? 'throttled' : 'failure', ticket, error);
      if (deadline) {
        const elapsed = this.#elapsed();
        const detail = `maxElapsedMs (${deadlineOf(o)} ms) ran out during attempt ${this.#attempt}`;
        this.#end(new RetryError('elapsed', this.#attempt, elapsed, error, detail), error, 'elapsed', elapsed);
        return;
      }
      verdict = classify(o.retryIf, error, context);
      if (isThenable(verdict)) {
        verdict.then((retryable) => this.#decide(error, retryable), this.#failer());
        return;
      }
    } catch (thrown) {
      this.#fail(thrown);
      return;
    }
    this.#decide(error, verdict);
  }

  #decide(error: unknown, verdict: unknown): void {
    if (!this.#resolve) return;
    const o = this.#o;
    let step: number | RetryError;
    let elapsed: number;
    try {
      const retryable = predicate('retry()', 'retryIf', verdict);
      elapsed = this.#elapsed();
      if (!retryable) {
        const own = unwrapFinal(error);
        this.#end(own, own, 'final', elapsed);
        return;
      }
      this.#run ??= startRun(o);
      step = decide(o, this.#run, this.#attempt, error, elapsed, this.#fromFailure);
    } catch (thrown) {
      this.#fail(thrown);
      return;
    }
    if (typeof step !== 'number') {
      this.#end(step, error, step.reason, elapsed);
      return;
    }
    const delay = step;
    const attempt = this.#attempt;
    // Kept for the budget's recordSuccess, and as the cause when the deadline passes during the wait.
    if (o.budget || o.rate || deadlineOf(o) !== Infinity) this.#error = error;
    const sleep = () => this.#sleep(delay);
    const retryHook = () =>
      callHook(
        o.onRetry,
        () => Object.freeze({ attempt, error, delayMs: delay, elapsedMs: elapsed }),
        sleep,
        this.#failer(),
      );
    this.#failedHook(error, elapsed, 'retry', delay, undefined, retryHook);
  }

  /** `onFailedAttempt` for the attempt that just failed, then `next`. */
  #failedHook(
    error: unknown,
    elapsedMs: number,
    step: NextStep,
    delayMs: number | undefined,
    reason: GiveUpReason | undefined,
    then: () => void,
  ): void {
    const attempt = this.#attempt;
    const context = () => Object.freeze({ attempt, error, elapsedMs, next: step, delayMs, reason });
    const next = (): void => {
      if (this.#resolve) then();
    };
    callHook(this.#o.onFailedAttempt, context, next, this.#failer());
  }

  /**
   * Ends the run in failure: `onFailedAttempt` (unless no attempt failed just now — the deadline
   * passed in `rate.acquire()`), `onGiveUp`, then rejects with `outcome`.
   */
  #end(outcome: unknown, error: unknown, reason: GiveUpReason | 'final', elapsedMs: number, failedNow = true): void {
    // A run already settled gives up nothing: a release() that threw just before has failed it
    // with its own error, and onGiveUp must not follow.
    if (!this.#resolve) return;
    const attempts = this.#attempt;
    const reject = () => this.#settle(false, outcome);
    const giveUp = () =>
      callHook(this.#o.onGiveUp, () => Object.freeze({ attempts, error, elapsedMs, reason }), reject, this.#failer());
    if (!failedNow) giveUp();
    else if (reason === 'final') this.#failedHook(error, elapsedMs, 'final', undefined, undefined, giveUp);
    else this.#failedHook(error, elapsedMs, 'give-up', undefined, reason, giveUp);
  }

  #sleep(delay: number): void {
    if (!this.#resolve) return;
    const o = this.#o;
    if (o.signal?.aborted) {
      this.#aborted();
      return;
    }
    try {
      const queue = hostQueue(clockOf(o));
      if (queue) {
        queue.add(this, queue.now() + delay);
        return;
      }
      sleepOn(o, delay, o.signal).then(() => this.#next(), this.#failer());
    } catch (error) {
      this.#fail(error);
    }
  }
}
