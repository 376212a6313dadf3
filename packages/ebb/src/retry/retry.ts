import type { BackoffRun } from '../backoff/backoff.js';
import { hostQueue } from '../core/clock.js';
import type { Wakeup } from '../core/timer-queue.js';
import { isAbortError, RetryError, retryAfterOf, timeoutError } from './errors.js';
import { type AttemptContext, DEFAULTS, type Prepared, prepare, type RetryOptions } from './options.js';

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
 * - **Success** resolves with the operation's value.
 * - **A final failure** — one `retryIf` rejects (by default: an `AbortError`) — rejects with the
 *   operation's own error, unchanged, at once.
 * - **Giving up** — attempts used up, the time budget reached, a server hint above
 *   `maxRetryAfterMs`, a budget's refusal — rejects with {@link RetryError} (`cause`: the last error).
 * - **Abort** (`options.signal`) rejects with `signal.reason` at once: the running attempt's
 *   signal aborts, a wait is cut short, no attempt starts afterwards, and an already-aborted
 *   signal never calls the operation.
 *
 * Deadlines: with the policy's `maxElapsedMs`, the executor never starts a wait that would end
 * past the deadline (it gives up at once instead — and never sleeps after the last attempt), and
 * an attempt still running at the deadline has its signal aborted and ends the run.
 *
 * Server hints: an error with a numeric `retryAfterMs` (the HTTP layer sets it from
 * `Retry-After`) makes the next wait at least that long. A hint above `maxRetryAfterMs`
 * (default 60 s) ends the run with reason `'retry-after'`: like got, and unlike ky, which clamps
 * the hint and so retries before the server said it would be ready.
 *
 * Timers: when the returned promise settles, no timer or listener of this call remains.
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
    o = options === undefined ? DEFAULTS : prepare('retry()', options);
  } catch (error) {
    return Promise.reject(error);
  }
  const signal = o.signal;
  if (signal?.aborted) return Promise.reject(signal.reason);
  const start = o.clock.now();
  if (!o.plain) {
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

/** Marks the TimeoutError with which the executor's own deadline aborts an attempt. */
const DEADLINE = Symbol('ebb.deadline');

function isThrottle(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { throttled?: unknown }).throttled === true;
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
  readonly #start: number;
  /** The last attempt made. */
  #attempt = 0;
  #run: BackoffRun | undefined;
  /** The running (or just failed) attempt: outcomes of any other are late, and ignored. */
  #current: Attempt | undefined;
  /**
   * The first failure, kept until the adopting promise calls `then`; after that, with a budget
   * only, the error whose retry is running, for `budget.recordSuccess` (one slot for both keeps
   * a pending retry small).
   */
  #error: unknown;
  /** Cancels the running attempt's timeout timer. */
  #attemptTimer: AbortController | undefined;
  #resolve: ((value: Awaited<T>) => void) | undefined;
  #reject: ((reason: unknown) => void) | undefined;

  constructor(operation: Operation<T>, o: Prepared, start: number) {
    this.#operation = operation;
    this.#o = o;
    this.#start = start;
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
    this.#o.signal?.addEventListener('abort', this, { once: true });
    try {
      this.#o.budget?.recordRequest?.();
    } catch (thrown) {
      this.#settle(false, thrown);
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
    if (this.slot >= 0) hostQueue(this.#o.clock)?.remove(this);
    this.#o.signal?.removeEventListener('abort', this);
    if (ok) resolve(value as Awaited<T>);
    else reject(value);
  }

  /** A step that throws ends the run with that error: nothing is swallowed. */
  #fail(error: unknown): void {
    this.#settle(false, error);
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
    this.#current?.abort(reason);
    this.#settle(false, reason);
  }

  /** Starts the next attempt, once the rate controller (if any) lets it go. */
  #next(): void {
    if (!this.#resolve) return;
    const rate = this.#o.rate;
    if (!rate) {
      this.#launch();
      return;
    }
    let acquired: unknown;
    try {
      acquired = rate.acquire(this.#o.signal);
    } catch (error) {
      this.#fail(error);
      return;
    }
    if (isThenable(acquired)) {
      acquired.then(
        (ticket) => this.#launch(ticket),
        (error: unknown) => this.#fail(error),
      );
    } else this.#launch(acquired);
  }

  /**
   * Starts an attempt. `ticket` is what the rate controller's `acquire` gave, handed back to its
   * `record`; the attempt's own callbacks carry it, so a retry waiting in its backoff holds none.
   */
  #launch(ticket?: unknown): void {
    const o = this.#o;
    if (!this.#resolve) return;
    // Another callback may have aborted since the wait ended: no attempt starts after an abort.
    if (o.signal?.aborted) {
      this.#aborted();
      return;
    }
    const elapsed = o.clock.now() - this.#start;
    const context = new Attempt(++this.#attempt, elapsed);
    this.#current = context;
    const left = o.backoff.maxElapsedMs - elapsed;
    const byDeadline = left < o.attemptTimeoutMs;
    const limit = byDeadline ? left : o.attemptTimeoutMs;
    if (limit !== Infinity) {
      const timer = new AbortController();
      this.#attemptTimer = timer;
      o.clock.sleep(limit > 0 ? limit : 0, timer.signal).then(() => {
        if (this.#current !== context) return;
        const error = timeoutError(
          byDeadline
            ? `attempt ${context.attempt} reached the deadline (maxElapsedMs ${o.backoff.maxElapsedMs} ms)`
            : `attempt ${context.attempt} timed out after ${o.attemptTimeoutMs} ms (attemptTimeoutMs)`,
        );
        if (byDeadline) Object.defineProperty(error, DEADLINE, { value: true });
        context.abort(error);
        this.#failed(context, error, ticket);
      }, noop);
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
    try {
      this.#o.rate?.record('success', ticket);
      this.#o.budget?.recordSuccess(Object.freeze({ attempt: context.attempt, lastError: this.#error }));
    } catch (thrown) {
      this.#fail(thrown);
      return;
    }
    this.#settle(true, value);
  }

  #failed(context: Attempt, error: unknown, ticket?: unknown): void {
    if (this.#current !== context || !this.#resolve) return;
    this.#current = undefined;
    this.#attemptTimer?.abort();
    this.#attemptTimer = undefined;
    const o = this.#o;
    let verdict: boolean | PromiseLike<boolean>;
    try {
      o.rate?.record(isThrottle(error) ? 'throttled' : 'failure', ticket);
      if (typeof error === 'object' && error !== null && DEADLINE in error) {
        const detail = `maxElapsedMs (${o.backoff.maxElapsedMs} ms) ran out during attempt ${this.#attempt}`;
        this.#giveUp('elapsed', error, detail);
        return;
      }
      verdict = o.retryIf ? o.retryIf(error, context) : !isAbortError(error);
    } catch (thrown) {
      this.#fail(thrown);
      return;
    }
    if (isThenable(verdict)) {
      verdict.then(
        (retryable) => this.#decide(error, retryable),
        (thrown: unknown) => this.#fail(thrown),
      );
    } else this.#decide(error, verdict);
  }

  #giveUp(reason: RetryError['reason'], error: unknown, detail: string, elapsed?: number): void {
    const ms = elapsed ?? this.#o.clock.now() - this.#start;
    this.#settle(false, new RetryError(reason, this.#attempt, ms, error, detail));
  }

  #decide(error: unknown, retryable: boolean): void {
    if (!this.#resolve) return;
    if (!retryable) {
      this.#settle(false, error);
      return;
    }
    const o = this.#o;
    const attempt = this.#attempt;
    try {
      o.budget?.recordFailure?.(error);
      this.#run ??= o.backoff.start(o.random);
      let delay = this.#run.next();
      const elapsed = o.clock.now() - this.#start;
      if (delay < 0) {
        this.#giveUp('attempts', error, `maxAttempts (${attempt}) reached`, elapsed);
        return;
      }
      const hint = retryAfterOf(error);
      if (hint !== undefined) {
        if (hint > o.maxRetryAfterMs) {
          const detail = `the server asked to wait ${hint} ms, more than maxRetryAfterMs (${o.maxRetryAfterMs} ms)`;
          this.#giveUp('retry-after', error, detail, elapsed);
          return;
        }
        if (hint > delay) delay = hint;
      }
      if (elapsed + delay > o.backoff.maxElapsedMs) {
        const detail = `the next wait (${Math.round(delay)} ms) would end past maxElapsedMs (${o.backoff.maxElapsedMs} ms)`;
        this.#giveUp('elapsed', error, detail, elapsed);
        return;
      }
      if (o.budget) {
        if (!o.budget.tryAcquireRetry(error)) {
          this.#giveUp('budget', error, 'the retry budget refused another retry', elapsed);
          return;
        }
        this.#error = error;
      }
      if (o.onRetry) {
        const hook = o.onRetry(Object.freeze({ attempt, error, delayMs: delay, elapsedMs: elapsed }));
        if (isThenable(hook)) {
          hook.then(
            () => this.#sleep(delay),
            (thrown: unknown) => this.#fail(thrown),
          );
          return;
        }
      }
      this.#sleep(delay);
    } catch (thrown) {
      this.#fail(thrown);
    }
  }

  #sleep(delay: number): void {
    if (!this.#resolve) return;
    const o = this.#o;
    if (o.signal?.aborted) {
      this.#aborted();
      return;
    }
    const queue = hostQueue(o.clock);
    if (queue) {
      queue.add(this, queue.now() + delay);
      return;
    }
    o.clock.sleep(delay, o.signal).then(
      () => this.#next(),
      (error: unknown) => this.#fail(error),
    );
  }
}
