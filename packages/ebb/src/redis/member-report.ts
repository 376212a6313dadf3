/**
 * What a `sharedRate` member measures of itself and sends with each lease — its sending and
 * accepted rates, measured as `adaptiveRate` measures its own — and how it makes up for a late
 * pacer when alone. Exported for the law's differential test (test/redis/rate-law.test.ts), which
 * feeds the same measures to adaptiveRate and to the fleet's script.
 */
import type { AdaptiveRateOptions, LAW_KEYS } from '../rate/adaptive-rate.js';

/** Grants and successes are counted in 100-ms slots over at most 3 s, as `adaptiveRate` does. */
const SLOT_MS = 100;
const SLOTS = 30;
/** A late wake-up of the pacer is made up for, up to this much (less below 40 r/s: see `catchUpMs`). */
export const CATCH_UP_MS = 25;
/** The accepted rate is measured as `adaptiveRate` measures its delivered rate: over 10 successes at least. */
const MIN_DELIVERED = 10;

/** Events counted in 100-ms slots over the last 3 s. Exported for the law's differential test only. */
export class Counter {
  readonly #counts = new Float64Array(SLOTS);
  readonly #slots = new Float64Array(SLOTS).fill(-1);
  /** The events the last `rate()` counted. */
  lastCount = 0;
  /** The span the last `rate()` counted them over, in ms (at least one slot). */
  lastSpanMs: number = SLOT_MS;
  /** The 100-ms slots the last `rate()` went through, the current one included. */
  lastSlots = 1;

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
   * Events per second over the last second — longer, up to `maxCoveredMs`, until `min` events are
   * in the span — since `since`; -1 while less than `minCoveredMs` of history is covered.
   */
  rate(now: number, since: number, min: number, minCoveredMs: number, maxCoveredMs = 3000): number {
    const slot = Math.floor(now / SLOT_MS);
    const from = Math.max(now - SLOTS * SLOT_MS, since);
    let n = 0;
    let covered = 0;
    for (let k = 0; k < SLOTS; k++) {
      const s = slot - k;
      const start = s * SLOT_MS;
      const i = ((s % SLOTS) + SLOTS) % SLOTS;
      if (this.#slots[i] === s) n += this.#counts[i] as number;
      this.lastSlots = k + 1;
      covered = now - Math.max(start, from);
      if (start <= from) break;
      if (covered >= 1000 && n >= min) break;
      if (covered >= maxCoveredMs) break;
    }
    this.lastCount = n;
    this.lastSpanMs = Math.max(SLOT_MS, covered);
    if (covered < minCoveredMs) return -1;
    return (n * 1000) / Math.max(SLOT_MS, covered);
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
 * What a member reports of itself (exported for the law's differential test): `used`, its grants
 * per second over the last second — longer, up to 3 s, until 10 grants, so that a member sending
 * a few a second reports its rate and not the noise of a count of one or two (the fleet's rises
 * need the members' sum; measured: six members of 2–3 r/s each reported 6.7–11.6 r/s for a fleet
 * sending 11) — over at least 100 ms since its first, as `adaptiveRate` measures its sending rate
 * for a first cut (0 before any); `accepted`, its successes per second
 * as `adaptiveRate` measures its delivered rate — over the last second, longer (up to 3 s) until
 * 10 successes, -1 while under a second is covered; `successes`, how many that counted;
 * `spanMs`, the span they were counted over; and `refused`, whether a throttle (`throttled`
 * counts every one) came in at least half the 100-ms slots of that span, as `adaptiveRate`'s
 * `#refused`: the blind cut's correction may then go past `decreaseFactor`.
 */
export function memberReport(
  granted: Counter,
  delivered: Counter,
  throttled: Counter,
  now: number,
  start: number,
): { used: number; accepted: number; successes: number; spanMs: number; refused: boolean } {
  const used = Math.max(0, granted.rate(now, start, MIN_DELIVERED, 0, 3000));
  const accepted = delivered.rate(now, start, MIN_DELIVERED, 1000, 3000);
  const refused = 2 * throttled.marked(now, delivered.lastSlots) >= delivered.lastSlots;
  return { used, accepted, successes: accepted < 0 ? -1 : delivered.lastCount, spanMs: delivered.lastSpanMs, refused };
}

/** A rate as the scripts take it: -1 for Infinity. */
export const finite = (x: number): string => (Number.isFinite(x) ? String(x) : '-1');

/**
 * The law's options as RATE_SCRIPT's ARGV[8..16] (margin, decreaseFactor, increase, the largest
 * step, coolOffMs, maxCoolOffMs, minRatePerSecond, maxRatePerSecond or -1, the keys' expiry in s).
 * Exported for the law's differential test.
 */
export function lawArgs(law: Required<Pick<AdaptiveRateOptions, (typeof LAW_KEYS)[number]>>): string[] {
  return [
    String(law.margin),
    String(law.decreaseFactor),
    String(law.increase),
    String(1 / law.decreaseFactor - 1),
    String(law.coolOffMs),
    String(law.maxCoolOffMs),
    String(law.minRatePerSecond),
    finite(law.maxRatePerSecond),
    '86400',
  ];
}

/**
 * How late a pacer's wake-up may be made up for at `interval` ms between requests: `adaptiveRate`'s
 * rule (`#catchUpMs`) — the whole CATCH_UP_MS where requests are closer than it, else at most
 * `margin` × the interval, so that two requests of one process never go closer than
 * `(1 − margin)` × its spacing (nginx's `limit_req` without burst refuses closer ones).
 */
export function catchUpMs(interval: number, margin: number): number {
  return interval <= CATCH_UP_MS ? CATCH_UP_MS : Math.min(CATCH_UP_MS, margin * interval);
}
