import { readNow, sleepOn } from '../core/boundary.js';
import type { Clock } from '../core/clock.js';

/**
 * What a rate controller tells its {@link Gate}: how long the next request must wait, and what
 * happens when one goes. @internal
 */
export interface GatePolicy {
  /** Milliseconds until the next request may go; 0 or less means now. */
  waitMs(now: number): number;
  /**
   * One request goes at `now`; returns its ticket (handed back to `record`). `woken` is true
   * when the gate's own wake-up lets it go (which may come late), false when it goes at once.
   */
  grant(now: number, woken: boolean): unknown;
}

interface Waiter {
  readonly resolve: (ticket: unknown) => void;
  readonly reject: (reason: unknown) => void;
  readonly signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  done: boolean;
}

/**
 * The waiting room shared by ebb/rate's controllers: requests wait in one FIFO queue per
 * priority class (class 0 first), and a single clock sleep — armed only while someone waits —
 * wakes the head when the policy lets it go. Nothing runs while the gate is idle. @internal
 */
export class Gate {
  readonly #clock: Clock;
  readonly #policy: GatePolicy;
  /** One queue per class; `#heads[c]` is the index of class c's first waiter not served (it may have left: `done`). */
  readonly #queues: Waiter[][];
  readonly #heads: number[];
  #size = 0;
  #timer: AbortController | undefined;
  #timerDue = Infinity;

  constructor(clock: Clock, classes: number, policy: GatePolicy) {
    this.#clock = clock;
    this.#policy = policy;
    this.#queues = Array.from({ length: classes }, () => []);
    this.#heads = new Array<number>(classes).fill(0);
  }

  /** Requests waiting, over every class. */
  get waiting(): number {
    return this.#size;
  }

  /**
   * Lets a request of class `cls` go: at once (returning its ticket) when nobody waits and the
   * policy allows it, otherwise as a promise of the ticket that rejects with `signal.reason` if
   * the signal aborts first.
   */
  acquire(cls: number, signal: AbortSignal | undefined): unknown {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const now = readNow(this.#clock);
    if (this.#size === 0 && this.#policy.waitMs(now) <= 0) return this.#policy.grant(now, false);
    return new Promise<unknown>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal, onAbort: undefined, done: false };
      if (signal) {
        waiter.onAbort = () => this.#abandon(waiter);
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      (this.#queues[cls] as Waiter[]).push(waiter);
      this.#size++;
      try {
        this.#arm(now);
      } catch (error) {
        // A clock that cannot sleep wakes nobody: every waiter, this one included, is refused.
        this.#failAll(error);
      }
    });
  }

  /** The policy's state changed (its rate rose, say): grant what may go now and re-time the wake-up. */
  poke(): void {
    if (this.#size > 0) this.#pumpOrFail();
  }

  /**
   * `#pump`, where nothing may be thrown back (a wake-up, a poke): a clock that fails — a reading
   * that is no finite number, a sleep that throws or is no promise — leaves the waiters no way to
   * be woken, so each is refused with that error (its call fails), rather than left waiting for
   * good, and the gate is idle again.
   */
  #pumpOrFail(): void {
    try {
      this.#pump();
    } catch (error) {
      this.#failAll(error);
    }
  }

  #failAll(error: unknown): void {
    this.#disarm();
    for (let c = 0; c < this.#queues.length; c++) {
      const queue = this.#queues[c] as Waiter[];
      const waiting = queue.slice(this.#heads[c]);
      queue.length = 0;
      this.#heads[c] = 0;
      for (const waiter of waiting) {
        if (waiter.done) continue;
        waiter.done = true;
        if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
        waiter.reject(error);
      }
    }
    this.#size = 0;
  }

  #abandon(waiter: Waiter): void {
    if (waiter.done) return;
    // Stryker disable next-line BooleanLiteral: a `once` listener runs once, and is removed when the waiter is granted.
    waiter.done = true;
    // It stays in its queue, marked done, until the head passes it (`#shift` skips it): taking it
    // out there cost a search and a splice each, O(n²) when a shutdown aborts n waiters.
    this.#size--;
    waiter.reject((waiter.signal as AbortSignal).reason);
    // No timer is left behind for nobody, and no waiter that left is kept.
    if (this.#size === 0) {
      this.#disarm();
      for (let c = 0; c < this.#queues.length; c++) {
        (this.#queues[c] as Waiter[]).length = 0;
        this.#heads[c] = 0;
      }
    }
  }

  /** The first live waiter of the most important non-empty class, taken out of its queue. */
  #shift(): Waiter | undefined {
    for (let c = 0; c < this.#queues.length; c++) {
      const queue = this.#queues[c] as Waiter[];
      let head = this.#heads[c] as number;
      while (head < queue.length && (queue[head] as Waiter).done) head++;
      if (head < queue.length) {
        const waiter = queue[head] as Waiter;
        // Compact now and then rather than shift() every time: O(1) per request.
        // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator,ArithmeticOperator: the threshold decides only when served waiters leave memory; any value keeps FIFO order.
        const compact = head >= 1024 && head * 2 >= queue.length;
        // Stryker disable next-line ArithmeticOperator: `head - 1 === length` never holds; the compaction below keeps FIFO order too.
        if (head + 1 === queue.length) {
          queue.length = 0;
          this.#heads[c] = 0;
        } else if (
          // Stryker disable next-line ConditionalExpression: as for `compact` above, memory only.
          compact
        ) {
          queue.splice(0, head + 1);
          this.#heads[c] = 0;
        } else this.#heads[c] = head + 1;
        return waiter;
      }
      // Every waiter of this class left.
      queue.length = 0;
      this.#heads[c] = 0;
    }
    return undefined;
  }

  #pump(): void {
    const now = readNow(this.#clock);
    while (this.#size > 0 && this.#policy.waitMs(now) <= 0) {
      const waiter = this.#shift() as Waiter;
      this.#size--;
      // Stryker disable next-line BooleanLiteral: the next line removes the only listener that reads `done`.
      waiter.done = true;
      // Stryker disable next-line OptionalChaining: `onAbort` is set only when there is a signal.
      if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.resolve(this.#policy.grant(now, true));
    }
    if (this.#size === 0) this.#disarm();
    else this.#arm(now);
  }

  /** Makes sure a wake-up is due no later than the head's turn. */
  #arm(now: number): void {
    const wait = this.#policy.waitMs(now);
    const due = now + (wait > 0 ? wait : 0);
    if (this.#timer && this.#timerDue <= due) return;
    this.#disarm();
    const timer = new AbortController();
    this.#timer = timer;
    this.#timerDue = due;
    const wake = (): void => {
      if (this.#timer !== timer) return;
      this.#timer = undefined;
      this.#timerDue = Infinity;
      // A promise reaction of the clock's sleep: nothing may escape it as an unhandled rejection.
      this.#pumpOrFail();
    };
    // A sleep that rejects on its own (not aborted by `#disarm`, which moves `#timer` first) wakes
    // nobody again: each waiter is refused with its error, as for a clock that throws.
    const failed = (error: unknown): void => {
      if (this.#timer === timer) this.#failAll(error);
    };
    try {
      sleepOn(this.#clock, due - now, timer.signal).then(wake, failed);
    } catch (error) {
      this.#timer = undefined;
      this.#timerDue = Infinity;
      throw error;
    }
  }

  #disarm(): void {
    if (!this.#timer) return;
    const timer = this.#timer;
    this.#timer = undefined;
    this.#timerDue = Infinity;
    timer.abort();
  }
}
