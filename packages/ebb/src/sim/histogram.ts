/** Values below this are counted exactly (one bin per whole unit). */
const LINEAR = 1024;
/** Bins per doubling above {@link LINEAR}: a quantile is within 2^(1/256) − 1 ≈ 0.27 % of the truth. */
const PER_OCTAVE = 256;

/**
 * Counts non-negative values in bounded memory and answers quantiles: one bin per whole unit
 * below 1024 (exact for whole numbers of slots), logarithmic bins above (within 0.27 %). The
 * mean is kept exactly. Simulations of hundreds of millions of slots record every latency here
 * instead of keeping them all. @internal
 */
export class Histogram {
  #bins = new Float64Array(LINEAR + PER_OCTAVE * 8);
  #count = 0;
  #sum = 0;
  #sumSquares = 0;
  #max = 0;

  /** Records one value (>= 0). */
  add(value: number): void {
    this.#count++;
    this.#sum += value;
    this.#sumSquares += value * value;
    if (value > this.#max) this.#max = value;
    let bin: number;
    if (value < LINEAR) bin = value | 0;
    else {
      bin = LINEAR + Math.floor(Math.log2(value / LINEAR) * PER_OCTAVE);
      if (bin >= this.#bins.length) {
        const grown = new Float64Array(bin + PER_OCTAVE * 4);
        grown.set(this.#bins);
        this.#bins = grown;
      }
    }
    this.#bins[bin] = (this.#bins[bin] as number) + 1;
  }

  /** Values recorded. */
  get count(): number {
    return this.#count;
  }

  /** Their mean (exact); 0 when empty. */
  get mean(): number {
    return this.#count === 0 ? 0 : this.#sum / this.#count;
  }

  /** Their population standard deviation; 0 when empty. */
  get standardDeviation(): number {
    if (this.#count === 0) return 0;
    const m = this.#sum / this.#count;
    const v = this.#sumSquares / this.#count - m * m;
    return v > 0 ? Math.sqrt(v) : 0;
  }

  /** The largest value recorded. */
  get max(): number {
    return this.#max;
  }

  /**
   * The `q`-quantile (0 … 1): the smallest bin holding at least `q` of the values, as its lower
   * edge (a whole number below 1024); never above `max`. 0 when empty.
   */
  quantile(q: number): number {
    if (this.#count === 0) return 0;
    const target = Math.max(1, Math.ceil(q * this.#count));
    let seen = 0;
    const bins = this.#bins;
    for (let i = 0; i < bins.length; i++) {
      seen += bins[i] as number;
      if (seen >= target) {
        const edge = i < LINEAR ? i : LINEAR * 2 ** ((i - LINEAR) / PER_OCTAVE);
        return edge < this.#max ? edge : this.#max;
      }
    }
    return this.#max;
  }
}
