import { DEV } from './dev.js';
/**
 * A queue of wake-ups on one host timer: a binary min-heap ordered by due time (ties in the
 * order they were added), with a single `setTimeout` armed for the earliest entry.
 *
 * Why: an operation waiting in its backoff would otherwise hold a host `Timeout` (about 120
 * bytes in Node.js) plus a callback and its arguments; with the queue it holds only its heap slot
 * and three numbers on itself. bench/ measures the difference (memory per pending retry).
 *
 * Rules it keeps:
 * - A wake-up never fires before its due time on `performance.now()`'s scale.
 * - Entries added while the queue is firing wait for the next turn, so a zero-delay entry
 *   added by a wake-up cannot starve the event loop.
 * - Delays beyond setTimeout's 2^31 − 1 ms are reached by re-arming.
 * - When the queue empties, its host timer is cleared at the end of that turn of the event loop
 *   (a `setImmediate`, a zero timeout where there is none), unless an entry came back meanwhile: calls made back to back — a
 *   `timeout()` around each — then keep one armed timer instead of clearing and re-arming it
 *   for each call (about 270 ns a call in Node.js 20, bench/). Nothing is left to hold a process
 *   open once a turn ends with the queue empty.
 * - It is shared by every operation in the process, so no caller can poison it: a due time that
 *   is not a finite number >= 0 is refused where it enters (`add` throws a RangeError, and the
 *   executor fails only that caller's operation), and nothing a wake-up throws escapes into the
 *   host timer's callback (where it would crash a Node.js process): it goes to that entry's
 *   `fail`, and every other entry due in the same turn still wakes in it.
 * @internal
 */
export interface Wakeup extends HeapEntry {
  /** Called once when due (unless removed first). Must not throw; if it does, `fail` gets the error. */
  wake(): void;
  /** Ends the entry's operation with `error`: what its `wake` threw. */
  fail?(error: unknown): void;
}

/**
 * An entry of a deadline heap (this queue's, and the hedging timer's): set by the heap's owner.
 * @internal
 */
export interface HeapEntry {
  /** Due time, on the owner's clock's scale. */
  dueAt: number;
  /** Insertion order, for ties. */
  order: number;
  /** Position in the heap, or -1 when not queued. */
  slot: number;
}

/** Earlier due time first; ties in the order added. */
function less(a: HeapEntry, b: HeapEntry): boolean {
  return a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.order < b.order);
}

/** Moves `heap[i]` up a binary min-heap to its place, keeping every moved entry's `slot`. */
function siftUp(heap: HeapEntry[], i: number): void {
  const entry = heap[i] as HeapEntry;
  while (i > 0) {
    const p = (i - 1) >> 1;
    const parent = heap[p] as HeapEntry;
    if (!less(entry, parent)) break;
    heap[i] = parent;
    parent.slot = i;
    i = p;
  }
  heap[i] = entry;
  entry.slot = i;
}

/** Moves `heap[i]` down a binary min-heap to its place, keeping every moved entry's `slot`. */
function siftDown(heap: HeapEntry[], i: number): void {
  const n = heap.length;
  const entry = heap[i] as HeapEntry;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= n) break;
    const r = l + 1;
    const c = r < n && less(heap[r] as HeapEntry, heap[l] as HeapEntry) ? r : l;
    const child = heap[c] as HeapEntry;
    if (!less(child, entry)) break;
    heap[i] = child;
    child.slot = i;
    i = c;
  }
  heap[i] = entry;
  entry.slot = i;
}

/** Puts `entry` in a deadline heap, due at `dueAt`, `order` breaking ties. @internal */
export function heapAdd(heap: HeapEntry[], entry: HeapEntry, dueAt: number, order: number): void {
  entry.dueAt = dueAt;
  entry.order = order;
  entry.slot = heap.length;
  heap.push(entry);
  siftUp(heap, entry.slot);
}

/** Takes `entry` out of a deadline heap (its `slot` becomes -1); false if it was not there. @internal */
export function heapRemove(heap: HeapEntry[], entry: HeapEntry): boolean {
  const i = entry.slot;
  if (i < 0 || heap[i] !== entry) return false;
  entry.slot = -1;
  const last = heap.pop() as HeapEntry;
  if (last !== entry) {
    heap[i] = last;
    last.slot = i;
    siftDown(heap, i);
    siftUp(heap, i);
  }
  return true;
}

const MAX_TIMER_MS = 2_147_483_647;

const now: () => number =
  typeof performance !== 'undefined' && typeof performance.now === 'function'
    ? () => performance.now()
    : // Stryker disable next-line ArrowFunction: the fallback for runtimes without performance.now(); Node.js, where the unit tests run, has it.
      () => Date.now();

export class TimerQueue {
  readonly #heap: Wakeup[] = [];
  readonly #unref: boolean;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** When the host timer is armed to fire (Infinity when not armed). */
  #armedAt = Infinity;
  #order = 0;
  /** The pending end-of-turn check that clears the timer of an empty queue. */
  #idle: unknown;

  constructor(unref: boolean) {
    this.#unref = unref;
  }

  /** Entries waiting. */
  get size(): number {
    return this.#heap.length;
  }

  /** The queue's clock. */
  now(): number {
    return now();
  }

  /** Queues `entry` to wake at `dueAt` (on `now()`'s scale). */
  add(entry: Wakeup, dueAt: number): void {
    // `!(x >= 0)` is true for NaN and non-numbers too; NaN would break the heap's order for everyone.
    if (typeof dueAt !== 'number' || !(dueAt >= 0) || dueAt === Infinity) {
      throw new RangeError(
        DEV
          ? `TimerQueue.add(): expected a due time that is a finite number >= 0, got ${String(dueAt)}.`
          : `TimerQueue.add(): \`dueAt\` ${String(dueAt)}`,
      );
    }
    if (entry.slot >= 0) this.remove(entry);
    heapAdd(this.#heap, entry, dueAt, this.#order++);
    if (dueAt < this.#armedAt) this.#arm();
  }

  /** Takes `entry` out of the queue if it is there. */
  remove(entry: Wakeup): void {
    if (heapRemove(this.#heap, entry) && this.#heap.length === 0 && this.#timer !== undefined) {
      // setImmediate is Node.js's; a bundler that gives a browser this build (Parcel by default,
      // Rollup without `browser: true`) or a runtime without it gets a zero timeout instead.
      this.#idle ??=
        typeof setImmediate === 'function' ? setImmediate(this.#disarmIfIdle) : setTimeout(this.#disarmIfIdle, 0);
    }
  }

  /** Clears the host timer at the end of the turn the queue emptied in, if it is still empty. */
  readonly #disarmIfIdle = (): void => {
    this.#idle = undefined;
    if (this.#heap.length === 0) this.#disarm();
  };

  readonly #fire = (): void => {
    this.#timer = undefined;
    this.#armedAt = Infinity;
    const t = now();
    const limit = this.#order;
    const heap = this.#heap;
    // Only entries queued before this turn, and due by now.
    for (let top = heap[0]; top !== undefined && top.dueAt <= t && top.order < limit; top = heap[0]) {
      this.remove(top);
      try {
        top.wake();
      } catch (error) {
        try {
          top.fail?.(error);
        } catch {
          // The entry cannot be told: the host must still not see it.
        }
      }
    }
    if (heap.length > 0 && this.#timer === undefined) this.#arm();
  };

  #arm(): void {
    const first = this.#heap[0];
    if (first === undefined) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    // Round up: a host timer may fire a fraction of a millisecond early against now().
    const wait = Math.min(Math.max(0, Math.ceil(first.dueAt - now())), MAX_TIMER_MS);
    this.#armedAt = first.dueAt;
    const timer = setTimeout(this.#fire, wait);
    if (this.#unref) (timer as { unref?: () => void }).unref?.();
    this.#timer = timer;
  }

  #disarm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedAt = Infinity;
  }
}

/** The two process-wide queues: one whose timer holds a Node.js process open, one that does not. */
export const refQueue: TimerQueue = /* @__PURE__ */ new TimerQueue(false);
export const unrefQueue: TimerQueue = /* @__PURE__ */ new TimerQueue(true);
