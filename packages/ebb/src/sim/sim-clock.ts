import type { Clock } from '../core/clock.js';

interface SimEvent {
  readonly time: number;
  readonly seq: number;
  readonly fire: () => void;
}

/** One turn of the host's event loop, which runs every queued promise callback first. */
const macrotask: (f: () => void) => void = (() => {
  if (typeof setImmediate === 'function') return (f: () => void) => setImmediate(f);
  // Browsers: a MessageChannel message is a macrotask without setTimeout's 4 ms clamp.
  if (typeof MessageChannel === 'function') {
    const channel = new MessageChannel();
    const waiting: (() => void)[] = [];
    channel.port1.onmessage = () => waiting.shift()?.();
    return (f: () => void) => {
      waiting.push(f);
      channel.port2.postMessage(0);
    };
  }
  return (f: () => void) => setTimeout(f, 0);
})();

const settle = (): Promise<void> => new Promise((resolve) => macrotask(resolve));

/**
 * A discrete-event clock for simulations that run real asynchronous code — `retry()`, rate
 * controllers — in virtual time. Events (sleeps and callbacks from {@link SimClock.at}) fire in
 * order of time, ties in order of scheduling; after each instant, the clock lets every promise
 * callback run before time moves on, so the code under simulation reacts exactly as it would
 * in real time, only without waiting. @internal
 */
export class SimClock implements Clock {
  #now = 0;
  #seq = 0;
  #heap: SimEvent[] = [];

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      if (!signal) {
        this.at(this.#now + (ms > 0 ? ms : 0), resolve);
        return;
      }
      let live = true;
      const onAbort = (): void => {
        live = false;
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.at(this.#now + (ms > 0 ? ms : 0), () => {
        if (!live) return;
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  /** Calls `fire` at `timeMs` (not before now). */
  at(timeMs: number, fire: () => void): void {
    const heap = this.#heap;
    const e: SimEvent = { time: timeMs > this.#now ? timeMs : this.#now, seq: this.#seq++, fire };
    let i = heap.length;
    heap.push(e);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent] as SimEvent;
      if (p.time < e.time || (p.time === e.time && p.seq < e.seq)) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = e;
  }

  /** Events pending. */
  get pending(): number {
    return this.#heap.length;
  }

  /**
   * Fires events in order until none is left or the next is later than `untilMs`, letting
   * promise callbacks run after each instant; then sets the time to `untilMs` if finite.
   * `onInstant` is told each new time (for progress reports).
   */
  async run(untilMs = Infinity, onInstant?: (nowMs: number) => void): Promise<void> {
    await settle();
    const heap = this.#heap;
    while (heap.length > 0 && (heap[0] as SimEvent).time <= untilMs) {
      const time = (heap[0] as SimEvent).time;
      this.#now = time;
      while (heap.length > 0 && (heap[0] as SimEvent).time === time) (this.#pop() as SimEvent).fire();
      onInstant?.(time);
      await settle();
    }
    if (untilMs !== Infinity && untilMs > this.#now) this.#now = untilMs;
  }

  #pop(): SimEvent | undefined {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop() as SimEvent;
    const n = heap.length;
    if (n === 0) return top;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      const c = heap[child] as SimEvent;
      const r = heap[child + 1];
      let best = c;
      if (r && (r.time < c.time || (r.time === c.time && r.seq < c.seq))) {
        child++;
        best = r;
      }
      if (last.time < best.time || (last.time === best.time && last.seq < best.seq)) break;
      heap[i] = best;
      i = child;
    }
    heap[i] = last;
    return top;
  }
}
