import type { BackoffRun } from '../backoff/backoff.js';
import { hostQueue } from '../core/clock.js';
import type { Wakeup } from '../core/timer-queue.js';
import { classify, decide, readClock, startRun } from './decide.js';
import { type GiveUpReason, prop, RetryError, timeoutError, unwrapFinal } from './errors.js';
import {
  type AttemptContext,
  clockOf,
  deadlineOf,
  type NextStep,
  NO_OPTIONS,
  type Prepared,
  prepare,
  type RetryOptions,
} from './options.js';

/**
 * The context an attempt receives. A class with a lazy `signal` rather than a frozen object:
 * the success path pays neither `Object.freeze` nor an `AbortController` it does not use.
 * @internal
 */
export class Attempt implements AttemptContext {
  readonly attempt: number;
  readonly elapsedMs: number;
  #controller: AbortController | undefined;
  #reason: unknown;
  #aborted = false;

  constructor(attempt: number, elapsedMs: number) {
    this.attempt = attempt;
    this.elapsedMs = elapsedMs;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Aborts this attempt's signal (now, or when it is first read). */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

type Operation<T> = (context: AttemptContext) => T | PromiseLike<T>;

const noop = (): void => {};

/**
 * Calls `operation` until it succeeds, backing off between attempts by `options.backoff`.
 *
 * - **Success** resolves with the operation's value (after `onSuccess`).
 * - **A final failure** — `retryIf` says so (by default: an abort, or a `TypeError`,
 *   `ReferenceError`, `SyntaxError` or `RangeError` from the caller's own code, see
 *   {@link defaultRetryIf}), or the operation threw a {@link FinalError} — rejects at once with
 *   the operation's own error, unchanged (a `FinalError`'s wrapped error).
 * - **Giving up** — attempts used up, the time budget reached, a server hint above
 *   `maxRetryAfterMs`, a budget's refusal — rejects with {@link RetryError} (`cause`: the last error).
 * - **Abort** (`options.signal`) rejects with `signal.reason` at once: the running attempt's
 *   signal aborts, a wait is cut short, no attempt starts afterwards, and an already-aborted
 *   signal never calls the operation. No hook is called for an abort.
 * - **Bad values from user code** — a policy whose `next()` returns anything but a finite number
 *   >= 0 or -1, a clock whose `now()` is not a finite, non-decreasing number or whose `sleep()`
 *   does not return a promise — reject this operation with a `TypeError`/`RangeError` naming the
 *   source (``backoff.next() returned NaN; …``); other operations are not affected. A hook or
 *   a `retryIf` that throws (or rejects) rejects the operation with that error.
 *
 * Deadlines: with the policy's `maxElapsedMs`, the executor never starts a wait that would end
 * past the deadline (it gives up at once instead — and never sleeps after the last attempt), never
 * starts an attempt past it (also after waiting for a rate controller), and an attempt still
 * running at the deadline has its signal aborted and ends the run.
 *
 * Server hints: an error with a numeric `retryAfterMs` (the HTTP layer sets it from
 * `Retry-After`) makes the next wait at least that long. A hint above `maxRetryAfterMs`
 * (default 60 s; a hint of exactly 60 s is waited) ends the run with reason `'retry-after'`:
 * like got, and unlike ky, which clamps the hint and so retries before the server said it
 * would be ready.
 *
 * Timers: when the returned promise settles, no timer or listener of this call remains.
 *
 * Elapsed time: `elapsedMs` (in contexts, hooks and `RetryError`) and the time budget count from
 * a clock reading taken just before attempt 1 whenever anything configured reads the elapsed time
 * during the run: a time budget (`maxElapsedMs`), an attempt timeout, a signal, a rate
 * controller, a budget, any hook, a custom `clock`, or a policy whose runs may read it (Google's,
 * AWS's, a custom one). Otherwise — the default call, or a curve from `exponential()` and friends
 * with none of those — a success reads no clock at all, and the first reading is taken when
 * attempt 1 fails: `elapsedMs` then counts from that failure (attempt 1's own duration left out).
 *
 *
 * @example
 * const user = await retry(({ signal }) => fetch(url, { signal }).then(check), {
 *   backoff: presets.default,
 *   attemptTimeoutMs: 5_000,
 *   signal: AbortSignal.timeout(30_000),
 * });
 */
export function retry<T>(operation: Operation<T>, options?: RetryOptions): Promise<Awaited<T>> {
  let o: Prepared;
  try {
    if (typeof operation !== 'function') {
      throw new TypeError(
        `retry(): expected \`operation\` to be a function, got ${operation === null ? 'null' : typeof operation}.`,
      );
    }
    o = options === undefined ? NO_OPTIONS : prepare('retry()', options);
  } catch (error) {
    return Promise.reject(error);
  }
  return execute(operation, o);
}

/** `retry()` after its options were prepared. @internal */
export function execute<T>(operation: Operation<T>, o: Prepared): Promise<Awaited<T>> {
  let start: number;
  try {
    if (o.signal?.aborted) return Promise.reject(o.signal.reason);
    // Not read before attempt 1 when nothing configured reads the elapsed time during the run:
    // a success then costs no clock reading (see "Elapsed time" above).
    start = o.timed ? readClock(clockOf(o), -Infinity) : Number.NaN;
  } catch (error) {
    return Promise.reject(error);
  }
  if (o.full) {
    return new Promise((resolve, reject) => new Execution<T>(operation, o, start).start(resolve, reject));
  }
  // The success path: one call, one `then`; nothing else is allocated but the context.
  const context = new Attempt(1, 0);
  let result: T | PromiseLike<T>;
  try {
    result = operation(context);
  } catch (error) {
    return new Promise((resolve, reject) =>
      new Execution<T>(operation, o, start).start(resolve, reject, context, error),
    );
  }
  // On failure the returned promise adopts the execution (a thenable): no second promise.
  const onFailure = (error: unknown) =>
    new Execution<T>(operation, o, start).after(context, error) as unknown as PromiseLike<Awaited<T>>;
  if (result instanceof Promise) return result.then(undefined, onFailure) as Promise<Awaited<T>>;
  if (isThenable(result)) return Promise.resolve(result).then(undefined, onFailure) as Promise<Awaited<T>>;
  return Promise.resolve(result as Awaited<T>);
}

/** True for anything with a callable `then`: promises of any realm and other thenables. @internal */
export function isThenable<T = unknown>(value: unknown): value is PromiseLike<T> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}

function isThrottle(error: unknown): boolean {
  return prop(error, 'throttled') === true;
}

/** A custom clock's `sleep()`, checked: a promise, or a TypeError naming the clock. */
function sleepOn(o: Prepared, ms: number, signal: AbortSignal | undefined): PromiseLike<void> {
  const slept = clockOf(o).sleep(ms, signal);
  if (!isThenable<void>(slept)) {
    throw new TypeError(`clock.sleep() returned ${slept === null ? 'null' : typeof slept}; expected a promise.`);
  }
  return slept;
}

/**
 * Calls `hook(context)` if there is a hook, then `next` — once its promise fulfils, when it
 * returns one. A hook that throws or rejects hands its error to `fail`.
 */
function callHook<C>(
  hook: ((context: C) => unknown) | undefined,
  context: () => C,
  next: () => void,
  fail: (error: unknown) => void,
): void {
  if (hook === undefined) {
    next();
    return;
  }
  try {
    const result = hook(context());
    if (isThenable(result)) {
      result.then(next, fail);
      return;
    }
  } catch (error) {
    fail(error);
    return;
  }
  next();
}

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
  slot = -1;
  readonly #operation: Operation<T>;
  readonly #o: Prepared;
  /** The first clock reading; NaN until attempt 1 failed, on a lazy start. */
  #start: number;
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
    if (!resolve || !reject) return;
    this.#resolve = this.#reject = undefined;
    this.#current = undefined;
    this.#attemptTimer?.abort();
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
    let verdict: boolean | PromiseLike<boolean>;
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

  #decide(error: unknown, retryable: boolean): void {
    if (!this.#resolve) return;
    const o = this.#o;
    let step: number | RetryError;
    let elapsed: number;
    try {
      elapsed = this.#elapsed();
      if (!retryable) {
        const own = unwrapFinal(error);
        this.#end(own, own, 'final', elapsed);
        return;
      }
      this.#run ??= startRun(o);
      step = decide(o, this.#run, this.#attempt, error, elapsed);
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
