/**
 * A sum over a sliding window of time, kept in slices: Finagle's `WindowedAdder`
 * (twitter/finagle, `finagle-core/.../util/WindowedAdder.scala`), ported without its
 * concurrency machinery. The window `rangeMs` is cut into `slices` slices of
 * `floor(rangeMs / slices)` ms; the current slice collects additions and `slices − 1` older
 * ones are kept. When a slice's time is up, the next read or write moves on, zeroing the
 * slices skipped while idle — so a value counts for between `rangeMs − slice` and `rangeMs`.
 * Slice boundaries follow the moment of that move (Finagle's `old = now()`), not a fixed grid.
 * @internal
 */
export class WindowedAdder {
  readonly #now: () => number;
  readonly #window: number;
  readonly #buf: number[];
  #i = 0;
  #old: number;
  #writer = 0;

  constructor(rangeMs: number, slices: number, now: () => number) {
    this.#now = now;
    this.#window = Math.floor(rangeMs / slices);
    this.#buf = new Array<number>(slices - 1).fill(0);
    this.#old = now();
  }

  add(x: number): void {
    this.#roll(this.#now());
    this.#writer += x;
  }

  sum(): number {
    this.#roll(this.#now());
    let sum = this.#writer;
    for (const v of this.#buf) sum += v;
    return sum;
  }

  #roll(now: number): void {
    if (now - this.#old < this.#window) return;
    const n = this.#buf.length;
    this.#buf[this.#i] = this.#writer;
    this.#writer = 0;
    this.#i = (this.#i + 1) % n;
    // Scala's Long division: whole windows elapsed, minus the one just closed.
    const skip = Math.min(Math.floor((now - this.#old) / this.#window) - 1, n);
    for (let k = 0; k < skip; k++) this.#buf[(this.#i + k) % n] = 0;
    if (skip > 0) this.#i = (this.#i + skip) % n;
    this.#old = now;
  }
}
