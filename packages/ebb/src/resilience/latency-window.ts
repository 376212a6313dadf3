/**
 * The last `size` latencies, for a percentile read on every call: kept in arrival order (a ring)
 * and also sorted, so the percentile is an index and each new latency moves one value in and one
 * out (a binary search and a shift) instead of sorting the window again — a first version sorted
 * 1,000 latencies after every success, 168–228 µs a call (docs/resilience.md). @internal
 */
export class LatencyWindow {
  readonly #ring: Float64Array;
  readonly #sorted: Float64Array;
  #filled = 0;
  #next = 0;

  constructor(size: number) {
    this.#ring = new Float64Array(size);
    this.#sorted = new Float64Array(size);
  }

  /** Latencies held: up to `size`. */
  get filled(): number {
    return this.#filled;
  }

  /** The `p` quantile (0 to 1) of the latencies held: the value at index ⌊p · n⌋ of the sorted n. */
  percentile(p: number): number {
    return this.#sorted[Math.min(this.#filled - 1, Math.floor(p * this.#filled))] as number;
  }

  /** Adds one latency, dropping the oldest once the window is full. */
  add(ms: number): void {
    const sorted = this.#sorted;
    const size = sorted.length;
    if (this.#filled === size) {
      const out = this.#lowerBound(this.#ring[this.#next] as number, size);
      sorted.copyWithin(out, out + 1, size);
      this.#filled--;
    }
    const at = this.#lowerBound(ms, this.#filled);
    sorted.copyWithin(at + 1, at, this.#filled);
    sorted[at] = ms;
    this.#filled++;
    this.#ring[this.#next] = ms;
    this.#next = (this.#next + 1) % size;
  }

  /** The first index in sorted[0, n) whose value is >= ms. */
  #lowerBound(ms: number, n: number): number {
    const sorted = this.#sorted;
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((sorted[mid] as number) < ms) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
