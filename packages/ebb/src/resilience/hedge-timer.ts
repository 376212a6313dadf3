import { ignored, sleepOn } from '../core/boundary.js';
import { type Clock, systemClock, unrefSystemClock } from '../core/clock.js';
import { type HeapEntry, heapAdd, heapRemove } from '../core/timer-queue.js';

/**
 * The clock's reading, or NaN when it throws or answers anything but a number (a bigint, a
 * string): a call without a reading is neither timed nor hedged. Not core's `readNow()`, which
 * fails the call: a hedge is an optimisation, and a call goes on without it. @internal
 */
export function readingOrNaN(clock: Clock): number {
  try {
    const t: unknown = clock.now();
    if (typeof t === 'number') return t;
    ignored(t);
    return Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** A call waiting for its hedge. Its fields are set by the timer. @internal */
export interface HedgeDue extends HeapEntry {
  /** Called once when due, unless removed first. Must not throw; if it does, `fail` gets the error. */
  hedge(): void;
  /** Ends the entry's call with `error`: what `hedge` threw. */
  fail?(error: unknown): void;
}

/** The host's timer functions; a test passes its own. @internal */
export interface HostTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const MAX_TIMER_MS = 2_147_483_647;
const globalTimers: HostTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
const noop = (): void => {};

/**
 * One timer for every call of a `hedging()` in flight: a min-heap of the calls' hedge deadlines
 * (ties in the order they were added) under a single timer armed for the earliest.
 *
 * Why: a call that settles before its hedging delay — the common case — should cost little.
 * Arming a host timer and clearing it on every call costs about as much as the rest of the call
 * (bench/figures/resilience-overhead.mjs). Here a call only takes a heap slot and gives it back;
 * the timer is re-armed only for a deadline earlier than the one it is armed for, and is not
 * cleared when the heap empties: it is `unref()`ed instead (on Node.js), so it still holds the
 * process open exactly while a hedge is pending, and fires once, to no effect, when it comes.
 *
 * On a clock other than the system clocks (a virtual clock in tests and simulators) it sleeps on
 * that clock and cancels the sleep when the heap empties, so no stray wake-up is left behind.
 *
 * Rules it keeps, as ebb's shared timer queue does: a hedge never fires before its deadline on
 * the clock's scale; hedges queued while the timer is firing wait for the next turn; nothing
 * escapes the timer's callback into the host — a hedge that throws fails its own call (`fail`),
 * and a clock that throws or returns garbage leaves the calls unhedged (each still settles with
 * its attempts), never the process crashed or a rejection unhandled.
 * @internal
 */
export class HedgeTimer {
  readonly #heap: HedgeDue[] = [];
  readonly #clock: Clock;
  /** The host's timers for a system clock, else undefined (sleep on the clock). */
  readonly #host: HostTimers | undefined;
  readonly #unref: boolean;
  #handle: unknown;
  #sleep: AbortController | undefined;
  /** When the armed timer fires (Infinity when none is armed). */
  #armedAt = Infinity;
  /** True while the armed host timer is unref()ed because nothing waits. */
  #idle = false;
  #order = 0;

  constructor(clock: Clock, host?: HostTimers) {
    this.#clock = clock;
    const system = clock === systemClock || clock === unrefSystemClock;
    this.#host = host ?? (system ? globalTimers : undefined);
    this.#unref = clock === unrefSystemClock;
  }

  /** Calls waiting. */
  get size(): number {
    return this.#heap.length;
  }

  /**
   * Queues `entry` to hedge at `dueAt` (on the clock's scale; a finite number). Throws what the
   * clock threw (or a `TypeError` for a sleep that is no promise) when the timer cannot be armed,
   * with the entry taken out again: that call goes unhedged.
   */
  add(entry: HedgeDue, dueAt: number): void {
    heapAdd(this.#heap, entry, dueAt, this.#order++);
    if (dueAt < this.#armedAt) {
      try {
        this.#arm(dueAt);
      } catch (error) {
        this.remove(entry);
        this.#armedAt = Infinity;
        throw error;
      }
    } else if (this.#idle) this.#hold(true);
  }

  /** Takes `entry` out if it is queued. */
  remove(entry: HedgeDue): void {
    if (heapRemove(this.#heap, entry) && this.#heap.length === 0) this.#release();
  }

  readonly #fire = (): void => {
    this.#handle = undefined;
    this.#sleep = undefined;
    this.#armedAt = Infinity;
    this.#idle = false;
    // No reading, no deadline passed: the waiting calls go unhedged and settle on their own.
    const t = readingOrNaN(this.#clock);
    const limit = this.#order;
    const heap = this.#heap;
    for (let top = heap[0]; top !== undefined && top.dueAt <= t && top.order < limit; top = heap[0]) {
      this.remove(top);
      try {
        top.hedge();
      } catch (error) {
        try {
          top.fail?.(error);
        } catch {
          // The entry cannot be told: the host must still not see it.
        }
      }
    }
    const first = heap[0];
    if (first !== undefined && first.dueAt < this.#armedAt) {
      try {
        this.#arm(first.dueAt);
      } catch {
        // A clock that cannot sleep: the waiting calls go unhedged.
        this.#armedAt = Infinity;
      }
    }
  };

  #arm(dueAt: number): void {
    const ms = Math.max(0, dueAt - readingOrNaN(this.#clock));
    // A clock whose now() is not a number gives no wait to arm: the calls go unhedged.
    if (!(ms >= 0)) return;
    this.#armedAt = dueAt;
    const host = this.#host;
    if (host === undefined) {
      this.#sleep?.abort();
      const controller = new AbortController();
      this.#sleep = controller;
      const fire = (): void => {
        // A custom clock's thenable that calls back late (after a newer sleep) or twice wakes nothing.
        if (this.#sleep === controller) this.#fire();
      };
      try {
        sleepOn(this.#clock, ms, controller.signal).then(fire, noop);
      } catch (error) {
        this.#sleep = undefined;
        throw error;
      }
      return;
    }
    if (this.#handle !== undefined) host.clearTimeout(this.#handle);
    // Round up: a host timer may fire a fraction of a millisecond early against now(); a delay
    // beyond setTimeout's range fires early and re-arms.
    this.#handle = host.setTimeout(this.#fire, Math.min(Math.ceil(ms), MAX_TIMER_MS));
    this.#idle = false;
    if (this.#unref) this.#hold(false);
  }

  /** Nothing waits: stop holding the process (host timer) or cancel the sleep (other clocks). */
  #release(): void {
    if (this.#host === undefined) {
      this.#sleep?.abort();
      this.#sleep = undefined;
      this.#armedAt = Infinity;
    } else if (this.#handle !== undefined && !this.#unref) {
      this.#hold(false);
      this.#idle = true;
    }
  }

  /** ref() or unref() the host timer, where the host has them (Node.js). */
  #hold(ref: boolean): void {
    const handle = this.#handle as { ref?: () => void; unref?: () => void } | undefined;
    if (ref) {
      handle?.ref?.();
      this.#idle = false;
    } else handle?.unref?.();
  }
}
