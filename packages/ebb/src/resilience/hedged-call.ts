import { isThenable, predicate, verdict } from '../core/boundary.js';
import type { Clock } from '../core/clock.js';
import { defaultIsFailure, isFinal } from '../retry/errors.js';
import type { AbortSource } from '../retry/execution.js';
import type { AttemptContext, IsFailure, RetryBudget } from '../retry/options.js';
import { Scope } from '../retry/scope.js';
import { type HedgeDue, type HedgeTimer, readingOrNaN } from './hedge-timer.js';

/** What a call needs of its `hedging()`. @internal */
export interface Shared {
  readonly clock: Clock;
  readonly timer: HedgeTimer;
  readonly budget: RetryBudget;
  readonly maxHedges: number;
  /** Which outcomes are failures (a failure wins nothing); undefined: the default (no value, errors but aborts and bugs). */
  // biome-ignore lint/suspicious/noExplicitAny: one hedging() serves calls of every value type
  readonly isFailure: IsFailure<any, any> | undefined;
  delayNow(): number;
  learn(ms: number): void;
  hedged(): void;
}

const lost = (): Error => Object.assign(new Error('Another hedged attempt won.'), { name: 'AbortError' });

/**
 * One call: its attempts, and its place in the hedge timer while a hedge may still start. A
 * class, not a nest of closures: a call that settles before its hedging delay allocates this
 * object, its promise and its first attempt's context, and little else — no `AbortController`
 * unless the operation reads `signal` (a pipeline's `Scope`, lazy the same way). It is also the
 * abort listener of the caller's signal or the pipeline context it runs in (`handleEvent`).
 *
 * Each attempt's outcome is judged by `isFailure`: the first that is no failure ends the call —
 * a value wins (the other attempts are aborted), an error that is no failure is the call's
 * error at once (Polly's hedging returns the first outcome it does not handle); a failure waits
 * for the attempts still running, and ends the call when it is the last. @internal
 */
export class HedgedCall<T> implements HedgeDue {
  dueAt = 0;
  order = 0;
  slot = -1;
  #first: Scope | undefined;
  #more: Scope[] | undefined;
  /** Attempts started whose outcome is not judged yet. */
  #running = 0;
  #started = 0;
  #done = false;
  readonly #start: number;
  readonly #shared: Shared;
  readonly #operation: (attempt: AttemptContext) => PromiseLike<T> | T;
  readonly #source: AbortSource | undefined;
  readonly #idempotent: boolean;
  readonly #resolve: (value: Awaited<T>) => void;
  readonly #reject: (error: unknown) => void;
  /**
   * Starts the hedge. The timer fires every due hedge from the async context of whichever call
   * armed it; the hedge instead continues through a promise whose `then` this call registered when
   * it queued, so it runs in this call's own context (AsyncLocalStorage, OpenTelemetry), as
   * `retry()`'s attempts after a backoff wait do.
   */
  #wake: (() => void) | undefined;
  /** The first attempt's number (the call's own attempt in a retry; 1 otherwise) and elapsed time. */
  readonly #attempt: number;
  readonly #elapsedMs: number;

  constructor(
    shared: Shared,
    operation: (attempt: AttemptContext) => PromiseLike<T> | T,
    source: AbortSource | undefined,
    idempotent: boolean,
    resolve: (value: Awaited<T>) => void,
    reject: (error: unknown) => void,
    attempt = 1,
    elapsedMs = 0,
  ) {
    this.#shared = shared;
    this.#operation = operation;
    this.#source = source;
    this.#idempotent = idempotent;
    this.#resolve = resolve;
    this.#reject = reject;
    this.#attempt = attempt;
    this.#elapsedMs = elapsedMs;
    this.#start = readingOrNaN(shared.clock);
    source?.addEventListener('abort', this);
    this.#launch(0);
  }

  /**
   * The hedge timer's call: the delay has passed and the call is still running. A budget whose
   * `tryAcquireRetry` throws or answers anything but a boolean fails this call (its attempts are
   * aborted with that error); it never throws into the timer.
   */
  hedge(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /** The hedge, in this call's own async context (see `#wake`). */
  #hedge(): void {
    if (this.#done) return;
    let granted: boolean;
    try {
      granted = predicate(
        'hedging()',
        'budget.tryAcquireRetry',
        this.#shared.budget.tryAcquireRetry(undefined) as unknown,
      );
    } catch (error) {
      this.fail(error);
      return;
    }
    if (!granted) return;
    this.#shared.hedged();
    this.#launch(readingOrNaN(this.#shared.clock) - this.#start);
  }

  /** Ends the call with `error`, aborting every attempt with it (a budget's throw, reported by the timer). */
  fail(error: unknown): void {
    if (this.#done) return;
    this.#finish();
    this.#abortAll(undefined, error);
    this.#reject(error);
  }

  /** The caller's signal (or the pipeline context) aborted. */
  handleEvent(): void {
    if (this.#done) return;
    this.#finish();
    const reason = this.#source?.reason;
    this.#abortAll(undefined, reason);
    this.#reject(reason);
  }

  #launch(elapsedMs: number): void {
    const attempt = new Scope(this.#attempt + this.#started, this.#elapsedMs + elapsedMs, undefined, true);
    if (this.#first === undefined) this.#first = attempt;
    else if (this.#more === undefined) this.#more = [attempt];
    else this.#more.push(attempt);
    this.#started++;
    this.#running++;
    const shared = this.#shared;
    let result: PromiseLike<T> | T;
    try {
      result = this.#operation(attempt);
    } catch (error) {
      this.#ended(attempt, false, error);
      return;
    }
    Promise.resolve(result).then(
      (value) => this.#ended(attempt, true, value),
      (error: unknown) => this.#ended(attempt, false, error),
    );
    if (!this.#done && this.#idempotent && this.#started <= shared.maxHedges) {
      const dueAt = readingOrNaN(shared.clock) + shared.delayNow();
      // A clock whose now() throws or is not a finite number gives no deadline, and one whose
      // sleep fails cannot arm the timer: the call is not hedged, and settles with its attempts.
      if (dueAt > -Infinity && dueAt < Infinity) {
        try {
          shared.timer.add(this, dueAt);
          new Promise<void>((resolve) => {
            this.#wake = resolve;
          }).then(() => {
            try {
              this.#hedge();
            } catch (error) {
              this.fail(error);
            }
          });
        } catch {
          // Not hedged (the timer took the entry out again).
        }
      }
    }
  }

  /**
   * An attempt ended: its outcome is judged by `isFailure` (a value is no failure by default, and
   * needs no judging then; a `FinalError` is none), its answer checked. A throw, a rejection or
   * a bad answer fails the call, its attempts aborted.
   */
  #ended(attempt: Scope, ok: boolean, outcome: unknown): void {
    if (this.#done) {
      this.#running--;
      return;
    }
    const isFailure = this.#shared.isFailure;
    if (ok && !isFailure) {
      this.#judged(attempt, ok, outcome, false);
      return;
    }
    let answer: unknown;
    try {
      answer =
        !ok && isFinal(outcome)
          ? false
          : isFailure
            ? isFailure(ok ? { ok, value: outcome } : { ok, error: outcome }, attempt)
            : defaultIsFailure({ ok: false, error: outcome });
    } catch (error) {
      this.#running--;
      this.fail(error);
      return;
    }
    if (isThenable(answer)) {
      Promise.resolve(answer).then(
        (late) => this.#judged(attempt, ok, outcome, late),
        (error: unknown) => {
          this.#running--;
          this.fail(error);
        },
      );
    } else this.#judged(attempt, ok, outcome, answer);
  }

  #judged(attempt: Scope, ok: boolean, outcome: unknown, answer: unknown): void {
    this.#running--;
    if (this.#done) return;
    let failed: boolean | 'throttled';
    try {
      failed = verdict('hedging()', 'isFailure', answer);
    } catch (error) {
      this.fail(error);
      return;
    }
    if (!failed) {
      if (ok) {
        // The call's latency, from its first attempt's start, whichever attempt won: the first
        // attempt's own latency, cut off where a hedge beat it. Learning the winner's own time
        // instead leaves out every slow first attempt a hedge beat, so the learned percentile sinks
        // below the service's and the budget goes to fast calls (docs/resilience.md, "Slow-tail
        // figure"). Finagle's BackupRequestFilter likewise records the superseded original's time.
        this.#shared.learn(readingOrNaN(this.#shared.clock) - this.#start);
      }
      this.#finish();
      if (this.#more !== undefined) this.#abortAll(attempt, undefined);
      this.#settle(ok, outcome);
      return;
    }
    // A failure ends the call only when no other attempt is running.
    if (this.#running > 0) return;
    this.#finish();
    this.#settle(ok, outcome);
  }

  #settle(ok: boolean, outcome: unknown): void {
    if (ok) this.#resolve(outcome as Awaited<T>);
    else this.#reject(outcome);
  }

  #finish(): void {
    this.#done = true;
    this.#wake = undefined;
    this.#shared.timer.remove(this);
    this.#source?.removeEventListener('abort', this);
  }

  /** Aborts every attempt but `winner`: with `reason`, or as a loser when there is a winner. */
  #abortAll(winner: Scope | undefined, reason: unknown): void {
    for (const a of [this.#first, ...(this.#more ?? [])]) {
      if (a !== undefined && a !== winner) a.abort(winner === undefined ? reason : lost());
    }
  }
}
