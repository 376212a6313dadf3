/**
 * The simulators' calendar: a binary min-heap of `(time, id)` pairs in typed arrays, where `id`
 * names a station or client that has exactly one event pending. Ties in time pop in ascending
 * `id` order, so a run is deterministic. Popping the next event jumps straight over the idle
 * time before it: no simulator loops over empty slots or silent stations. @internal
 */
export class EventQueue {
  readonly #time: Float64Array;
  readonly #id: Int32Array;
  #size = 0;

  /** A queue for ids `0 … capacity − 1`, at most one event each. */
  constructor(capacity: number) {
    this.#time = new Float64Array(capacity);
    this.#id = new Int32Array(capacity);
  }

  /** Events pending. */
  get size(): number {
    return this.#size;
  }

  /** The time of the earliest event; `Infinity` when none is pending. */
  peekTime(): number {
    return this.#size > 0 ? (this.#time[0] as number) : Infinity;
  }

  /** Schedules `id` at `time`. The caller keeps one pending event per id. */
  push(time: number, id: number): void {
    const times = this.#time;
    const ids = this.#id;
    let i = this.#size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pt = times[parent] as number;
      if (pt < time || (pt === time && (ids[parent] as number) < id)) break;
      times[i] = pt;
      ids[i] = ids[parent] as number;
      i = parent;
    }
    times[i] = time;
    ids[i] = id;
  }

  /** Removes the earliest event and returns its id (its time was `peekTime()`). Empty: -1. */
  pop(): number {
    const n = this.#size;
    if (n === 0) return -1;
    const times = this.#time;
    const ids = this.#id;
    const top = ids[0] as number;
    const last = --this.#size;
    if (last > 0) {
      const t = times[last] as number;
      const id = ids[last] as number;
      let i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= last) break;
        const right = child + 1;
        if (right < last) {
          const ct = times[child] as number;
          const rt = times[right] as number;
          if (rt < ct || (rt === ct && (ids[right] as number) < (ids[child] as number))) child = right;
        }
        const ct = times[child] as number;
        if (t < ct || (t === ct && id < (ids[child] as number))) break;
        times[i] = ct;
        ids[i] = ids[child] as number;
        i = child;
      }
      times[i] = t;
      ids[i] = id;
    }
    return top;
  }

  /** Removes every event. */
  clear(): void {
    this.#size = 0;
  }
}
