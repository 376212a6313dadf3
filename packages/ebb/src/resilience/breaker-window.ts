/** The failure-rate window of a circuit breaker: calls and counted failures. @internal */
export interface FailureWindow {
  readonly calls: number;
  readonly failures: number;
  add(failed: boolean, now: number): void;
  /** Brings the counts to `now`: calls older than the window leave it (a time window). */
  at(now: number): void;
  clear(): void;
}

/** Counts calls and failures over the last `size` calls. */
export class CountWindow implements FailureWindow {
  readonly #ring: Uint8Array;
  #next = 0;
  calls = 0;
  failures = 0;
  constructor(size: number) {
    this.#ring = new Uint8Array(size);
  }
  add(failed: boolean, _now: number): void {
    const ring = this.#ring;
    if (this.calls === ring.length) this.failures -= ring[this.#next] as number;
    else this.calls++;
    ring[this.#next] = failed ? 1 : 0;
    if (failed) this.failures++;
    this.#next = (this.#next + 1) % ring.length;
  }
  at(_now: number): void {}
  clear(): void {
    this.#ring.fill(0);
    this.#next = this.calls = this.failures = 0;
  }
}

/** Counts calls and failures over the last `windowMs` milliseconds, in ten buckets. */
export class TimeWindow implements FailureWindow {
  static readonly BUCKETS = 10;
  readonly #bucketMs: number;
  readonly #calls = new Float64Array(TimeWindow.BUCKETS);
  readonly #failures = new Float64Array(TimeWindow.BUCKETS);
  /** The bucket number (time / bucketMs) of the newest bucket. */
  #head = -Infinity;
  calls = 0;
  failures = 0;
  constructor(windowMs: number) {
    this.#bucketMs = windowMs / TimeWindow.BUCKETS;
  }
  #roll(now: number): void {
    const bucket = Math.floor(now / this.#bucketMs);
    if (bucket <= this.#head) return;
    const n = TimeWindow.BUCKETS;
    if (bucket - this.#head >= n) {
      this.#calls.fill(0);
      this.#failures.fill(0);
      this.calls = this.failures = 0;
    } else {
      for (let b = this.#head + 1; b <= bucket; b++) {
        const slot = ((b % n) + n) % n;
        this.calls -= this.#calls[slot] as number;
        this.failures -= this.#failures[slot] as number;
        this.#calls[slot] = this.#failures[slot] = 0;
      }
    }
    this.#head = bucket;
  }
  at(now: number): void {
    this.#roll(now);
  }
  add(failed: boolean, now: number): void {
    this.#roll(now);
    const slot = ((this.#head % TimeWindow.BUCKETS) + TimeWindow.BUCKETS) % TimeWindow.BUCKETS;
    this.#calls[slot] = (this.#calls[slot] as number) + 1;
    this.calls++;
    if (failed) {
      this.#failures[slot] = (this.#failures[slot] as number) + 1;
      this.failures++;
    }
  }
  clear(): void {
    this.#calls.fill(0);
    this.#failures.fill(0);
    this.#head = -Infinity;
    this.calls = this.failures = 0;
  }
}
