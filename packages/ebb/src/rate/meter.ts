/**
 * The delivered-rate meter: events counted in 100-ms slots over the last 3 s (a ring), read back as
 * a rate over the last second — longer, up to the 3 s, until the span holds enough events, so that
 * a low rate is not read from a handful of responses (BBR's delivery-rate sample, per slot rather
 * than per ACK: draft-cheng-iccrg-delivery-rate-estimation). `adaptiveRate` counts its
 * successes and throttles here; a `sharedRate` member (redis/member-report.ts) counts its grants,
 * successes and throttles the same way, so that the fleet's law reads the measures one process reads.
 * Beside it, `SentRate`: the rate `adaptiveRate` sent over the last second, counted per whole
 * second, where the first cut of a controller that was unlimited starts.
 */

/** The width of a slot, ms. */
export const SLOT_MS = 100;
/** The slots the ring keeps: 3 s. */
export const SLOTS = 30;

/** A span read back from the ring (see {@link SlotCounter.span}). */
export interface Span {
  /** The events in the span. */
  readonly count: number;
  /** The time the span covers, ms, less any time `paused` left out: negative when `since` is after `now`. */
  readonly covered: number;
  /** `covered`, at least one slot: what a rate over the span divides by. */
  readonly spanMs: number;
  /** The 100-ms slots the span went through, the current one included. */
  readonly slots: number;
}

/** Events counted in 100-ms slots over the last 3 s. */
export class SlotCounter {
  readonly #counts = new Float64Array(SLOTS);
  /** The slot number each entry counts; -1: none yet (slot numbers of real times are ≥ 0). */
  // Stryker disable next-line UnaryOperator: a slot marked 1 before any event holds 0 events, as a fresh one
  readonly #slots = new Float64Array(SLOTS).fill(-1);

  /** Counts one event at `now` (ms). */
  add(now: number): void {
    const slot = Math.floor(now / SLOT_MS);
    const i = ((slot % SLOTS) + SLOTS) % SLOTS;
    if (this.#slots[i] !== slot) {
      this.#slots[i] = slot;
      this.#counts[i] = 0;
    }
    this.#counts[i] = (this.#counts[i] as number) + 1;
  }

  /**
   * The span ending at `now`: slot by slot back from `now`'s, over the last second — longer, up to
   * 3 s, until it holds `min` events — and never before `since` (when counting began). `paused`
   * gives the ms within `[from, now]` to leave out of the time covered (a pause a server asked for
   * delivers nothing by the client's choice: it is not the service's rate).
   */
  span(now: number, since: number, min: number, paused?: (from: number, to: number) => number): Span {
    const slot = Math.floor(now / SLOT_MS);
    const first = Math.max(now - SLOTS * SLOT_MS, since);
    let count = 0;
    let covered = 0;
    let slots = 0;
    for (let k = 0; k < SLOTS; k++) {
      const s = slot - k;
      const start = s * SLOT_MS;
      const i = ((s % SLOTS) + SLOTS) % SLOTS;
      if (this.#slots[i] === s) count += this.#counts[i] as number;
      slots = k + 1;
      const from = Math.max(start, first);
      covered = now - from - (paused ? paused(from, now) : 0);
      if (start <= first) break;
      if (covered >= 1000 && count >= min) break;
    }
    return { count, covered, spanMs: Math.max(SLOT_MS, covered), slots };
  }

  /**
   * Events per second over {@link span}; -1 (not measured) while less than `minCoveredMs` is
   * covered.
   */
  rate(now: number, since: number, min: number, minCoveredMs: number): number {
    const { count, covered, spanMs } = this.span(now, since, min);
    return covered < minCoveredMs ? -1 : (count * 1000) / spanMs;
  }

  /** How many of the last `slots` 100-ms slots up to `now`'s (that one included) hold an event. */
  marked(now: number, slots: number): number {
    const slot = Math.floor(now / SLOT_MS);
    let n = 0;
    for (let k = 0; k < Math.min(slots, SLOTS); k++) {
      const s = slot - k;
      if (this.#slots[((s % SLOTS) + SLOTS) % SLOTS] === s) n++;
    }
    return n;
  }
}

/**
 * Requests sent, counted in the current and the previous whole second, read back as the rate sent
 * over the last second.
 */
export class SentRate {
  /** When the first request went: the rate measured covers no time before it. */
  first = Infinity;
  // Stryker disable next-line UnaryOperator: no grant's second equals ±Infinity or follows it
  #second = -Infinity;
  #count = 0;
  #previous = 0;

  /** Counts a request sent at `now`. */
  add(now: number): void {
    if (this.first === Infinity) this.first = now;
    const second = Math.floor(now / 1000);
    if (second !== this.#second) {
      this.#previous = second === this.#second + 1 ? this.#count : 0;
      this.#count = 0;
      this.#second = second;
    }
    this.#count++;
  }

  /**
   * Requests per second over the last second (the previous second's overlapping share plus this
   * one's), over the time actually covered when traffic began less than a second ago (at least
   * 100 ms, so that a first burst does not read as an infinite rate).
   */
  perSecond(now: number): number {
    const second = Math.floor(now / 1000);
    const into = now / 1000 - second;
    let grants = 0;
    if (second === this.#second) grants = this.#previous * (1 - into) + this.#count;
    else if (second === this.#second + 1) grants = this.#count * (1 - into);
    const covered = Math.min(1000, Math.max(100, now - this.first));
    return (grants * 1000) / covered;
  }
}
