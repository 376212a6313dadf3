import { type Clock, systemClock, unrefSystemClock } from '../core/clock.js';
import { type HeapEntry, heapAdd, heapRemove } from '../core/timer-queue.js';

/** A call waiting for its hedge. Its fields are set by the timer. @internal */
export interface HedgeDue extends HeapEntry {
  /** Called once when due, unless removed first. */
  hedge(): void;
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
 * the clock's scale; hedges queued while the timer is firing wait for the next turn.
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

  /** Queues `entry` to hedge at `dueAt` (on the clock's scale; a finite number). */
  add(entry: HedgeDue, dueAt: number): void {
    heapAdd(this.#heap, entry, dueAt, this.#order++);
    if (dueAt < this.#armedAt) this.#arm(dueAt);
    else if (this.#idle) this.#hold(true);
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
    const t = this.#clock.now();
    const limit = this.#order;
    const heap = this.#heap;
    try {
      for (let top = heap[0]; top !== undefined && top.dueAt <= t && top.order < limit; top = heap[0]) {
        this.remove(top);
        top.hedge();
      }
    } finally {
      const first = heap[0];
      if (first !== undefined && first.dueAt < this.#armedAt) this.#arm(first.dueAt);
    }
  };

  #arm(dueAt: number): void {
    const ms = Math.max(0, dueAt - this.#clock.now());
    this.#armedAt = dueAt;
    const host = this.#host;
    if (host === undefined) {
      this.#sleep?.abort();
      const controller = new AbortController();
      this.#sleep = controller;
      this.#clock.sleep(ms, controller.signal).then(this.#fire, noop);
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
