/**
 * What a `sharedRate` member measures of itself and sends with each lease — its sending and
 * accepted rates, counted with the meter `adaptiveRate` measures its own with (rate/meter.ts) — and
 * the law's options as the rate script takes them. Exported for the law's differential test (test/redis/rate-law.test.ts), which
 * feeds the same measures to adaptiveRate and to the fleet's script. `MemberMeter` holds the
 * counters a member keeps between two reports.
 */

import { LAW } from '../rate/law.js';
import type { LawOptions } from '../rate/law-options.js';
import { SlotCounter } from '../rate/meter.js';

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
  granted: SlotCounter,
  delivered: SlotCounter,
  throttled: SlotCounter,
  now: number,
  start: number,
): { used: number; accepted: number; successes: number; spanMs: number; refused: boolean } {
  const used = Math.max(0, granted.rate(now, start, LAW.minDelivered, 0));
  const d = delivered.span(now, start, LAW.minDelivered);
  const accepted = d.covered < 1000 ? -1 : (d.count * 1000) / d.spanMs;
  const refused = 2 * throttled.marked(now, d.slots) >= d.slots;
  return { used, accepted, successes: accepted < 0 ? -1 : d.count, spanMs: d.spanMs, refused };
}

/** A rate as the scripts take it: -1 for Infinity. */
export const finite = (x: number): string => (Number.isFinite(x) ? String(x) : '-1');

/**
 * The law's options as RATE_SCRIPT's ARGV[8..16] (margin, decreaseFactor, increase, the largest
 * step, coolOffMs, maxCoolOffMs, minRatePerSecond, maxRatePerSecond or -1, the keys' expiry in s).
 * Exported for the law's differential test.
 */
export function lawArgs(law: LawOptions): string[] {
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

/** What a `sharedRate` member counts of itself between two reports, read by {@link memberReport}. */
export class MemberMeter {
  readonly #granted = new SlotCounter();
  readonly #delivered = new SlotCounter();
  /** Every throttle this process saw, whatever its epoch: when the service refused it. */
  readonly #throttled = new SlotCounter();
  /** When this process first let a request go: its rates are measured from then. */
  #start = Number.POSITIVE_INFINITY;
  /** Requests were kept waiting by the share since the last report. */
  saturated = false;
  /** A success was recorded since the last report: evidence for a rise, as in `adaptiveRate`. */
  #succeeded = false;

  /** Counts a request let go at `now`. */
  grant(now: number): void {
    this.#granted.add(now);
    if (this.#start === Number.POSITIVE_INFINITY) this.#start = now;
  }

  /** Counts a success recorded at `now`. */
  success(now: number): void {
    this.#delivered.add(now);
    this.#succeeded = true;
  }

  /** Counts a throttle recorded at `now`. */
  throttle(now: number): void {
    this.#throttled.add(now);
  }

  /**
   * The report for a lease call at `now` (`waiting`: requests wait now), and a new period: whether
   * requests were kept waiting and whether a success came are counted afresh from here.
   */
  take(
    now: number,
    waiting: boolean,
  ): ReturnType<typeof memberReport> & { readonly saturated: boolean; readonly succeeded: boolean } {
    const report = memberReport(this.#granted, this.#delivered, this.#throttled, now, this.#start);
    const saturated = this.saturated || waiting;
    const succeeded = this.#succeeded;
    this.saturated = false;
    this.#succeeded = false;
    return { ...report, saturated, succeeded };
  }
}
