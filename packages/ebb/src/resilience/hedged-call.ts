import { predicate } from '../core/boundary.js';
import type { Clock } from '../core/clock.js';
import type { AttemptContext, RetryBudget } from '../retry/options.js';
import { Attempt } from '../retry/retry.js';
import type { HedgeDue, HedgeTimer } from './hedge-timer.js';

/** What a call needs of its `hedging()`. @internal */
export interface Shared {
  readonly clock: Clock;
  readonly timer: HedgeTimer;
  readonly budget: RetryBudget;
  readonly maxHedges: number;
  delayNow(): number;
  learn(ms: number): void;
  hedged(): void;
}

const lost = (): Error => Object.assign(new Error('Another hedged attempt won.'), { name: 'AbortError' });

/** The clock's reading, or NaN when it throws: a call without a reading is neither timed nor hedged. */
function readNow(clock: Clock): number {
  try {
    return clock.now();
  } catch {
    return Number.NaN;
  }
}

/**
 * One call: its attempts, and its place in the hedge timer while a hedge may still start. A
 * class, not a nest of closures: a call that settles before its hedging delay allocates this
 * object, its promise and its first attempt's context, and little else — no `AbortController`
 * unless the operation reads `signal` (retry()'s `Attempt`, lazy the same way). It is also the
 * caller's signal's abort listener (`handleEvent`). @internal
 */
export class HedgedCall<T> implements HedgeDue {
  dueAt = 0;
  order = 0;
  slot = -1;
  #first: Attempt | undefined;
  #more: Attempt[] | undefined;
  #running = 0;
  #started = 0;
  #done = false;
  readonly #start: number;
  readonly #shared: Shared;
  readonly #operation: (attempt: AttemptContext) => PromiseLike<T> | T;
  readonly #signal: AbortSignal | undefined;
  readonly #idempotent: boolean;
  readonly #resolve: (value: Awaited<T>) => void;
  readonly #reject: (error: unknown) => void;

  constructor(
    shared: Shared,
    operation: (attempt: AttemptContext) => PromiseLike<T> | T,
    signal: AbortSignal | undefined,
    idempotent: boolean,
    resolve: (value: Awaited<T>) => void,
    reject: (error: unknown) => void,
  ) {
    this.#shared = shared;
    this.#operation = operation;
    this.#signal = signal;
    this.#idempotent = idempotent;
    this.#resolve = resolve;
    this.#reject = reject;
    this.#start = readNow(shared.clock);
    signal?.addEventListener('abort', this, { once: true });
    this.#launch(0);
  }

  /**
   * The hedge timer's call: the delay has passed and the call is still running. A budget whose
   * `tryAcquireRetry` throws or answers anything but a boolean fails this call (its attempts are
   * aborted with that error); it never throws into the timer.
   */
  hedge(): void {
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
    this.#launch(readNow(this.#shared.clock) - this.#start);
  }

  /** Ends the call with `error`, aborting every attempt with it (a budget's throw, reported by the timer). */
  fail(error: unknown): void {
    if (this.#done) return;
    this.#finish();
    this.#abortAll(undefined, error);
    this.#reject(error);
  }

  /** The caller's signal aborted. */
  handleEvent(): void {
    if (this.#done) return;
    this.#finish();
    const reason = this.#signal?.reason;
    this.#abortAll(undefined, reason);
    this.#reject(reason);
  }

  #launch(elapsedMs: number): void {
    const attempt = new Attempt(this.#started + 1, elapsedMs);
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
      this.#failed(error);
      return;
    }
    Promise.resolve(result).then(
      (value) => this.#won(attempt, value as Awaited<T>),
      (error: unknown) => this.#failed(error),
    );
    if (!this.#done && this.#idempotent && this.#started <= shared.maxHedges) {
      const dueAt = readNow(shared.clock) + shared.delayNow();
      // A clock whose now() throws or is not a finite number gives no deadline, and one whose
      // sleep fails cannot arm the timer: the call is not hedged, and settles with its attempts.
      if (dueAt > -Infinity && dueAt < Infinity) {
        try {
          shared.timer.add(this, dueAt);
        } catch {
          // Not hedged (the timer took the entry out again).
        }
      }
    }
  }

  #won(winner: Attempt, value: Awaited<T>): void {
    this.#running--;
    if (this.#done) return;
    // The call's latency, from its first attempt's start, whichever attempt won: the first
    // attempt's own latency, cut off where a hedge beat it. Learning the winner's own time
    // instead leaves out every slow first attempt a hedge beat, so the learned percentile sinks
    // below the service's and the budget goes to fast calls (docs/resilience.md, "Slow-tail
    // figure"). Finagle's BackupRequestFilter likewise records the superseded original's time.
    this.#shared.learn(readNow(this.#shared.clock) - this.#start);
    this.#finish();
    if (this.#more !== undefined) this.#abortAll(winner, undefined);
    this.#resolve(value);
  }

  #failed(error: unknown): void {
    this.#running--;
    if (this.#done || this.#running > 0) return;
    this.#finish();
    this.#reject(error);
  }

  #finish(): void {
    this.#done = true;
    this.#shared.timer.remove(this);
    this.#signal?.removeEventListener('abort', this);
  }

  /** Aborts every attempt but `winner`: with `reason`, or as a loser when there is a winner. */
  #abortAll(winner: Attempt | undefined, reason: unknown): void {
    for (const a of [this.#first, ...(this.#more ?? [])]) {
      if (a !== undefined && a !== winner) a.abort(winner === undefined ? reason : lost());
    }
  }
}
