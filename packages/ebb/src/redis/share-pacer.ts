/**
 * How a `sharedRate` member spaces its requests at its share of the fleet's rate: in its turns of
 * the fleet's time division when it has them (time-division.ts), else `1000 / share` ms apart, a
 * late wake-up made up for as `adaptiveRate`'s pacer does (rate/pacing.ts). Its own module
 * because pacing is apart from the lease protocol: it reads the fleet as last heard (rate-view.ts)
 * and keeps one number, the time the next request is due.
 */
import { CATCH_UP_MS, catchUpMs } from '../rate/pacing.js';
import type { FleetView } from './rate-view.js';
import { turnNear } from './time-division.js';

/** The pace of one member at its share. */
export class SharePacer {
  /** When the next request is due at the share's pace, ms on the member's clock. */
  #next = Number.NEGATIVE_INFINITY;

  /** `margin`: the law's (`LawOptions.margin`); `leaseMs`: the wait of a member whose share is 0. */
  constructor(
    readonly view: FleetView,
    readonly margin: number,
    readonly leaseMs: number,
  ) {}

  /** How long a request at `now` waits for its time (≤ 0: none): 0 when unlimited, a lease when the share is 0. */
  waitMs(now: number): number {
    const share = this.view.share;
    if (!Number.isFinite(share)) return 0;
    if (!(share > 0)) return this.leaseMs;
    const turns = this.view.turns();
    return (turns ? turnNear(turns, this.#next, now) : this.#next) - now;
  }

  /** A request goes at `now` (`woken`: it waited, and its timer fired): the next one's time moves on. */
  grant(now: number, woken: boolean): void {
    const share = this.view.share;
    const turns = this.view.turns();
    if (turns) {
      // In turn with the other members: the next request's time at the share's pace is one
      // interval on (no debt carried over from turns missed), and it goes in the turn nearest it.
      const turn = turnNear(turns, this.#next, now);
      this.#next = Math.max(this.#next, turn) + Math.max(1000 / share, turns.periodMs(turn));
    } else if (Number.isFinite(share) && share > 0) {
      // A late wake-up keeps its slot (up to catchUpMs); the first request after a silence starts one.
      // Alone in the fleet, the process's spacing is what the limiter sees, and adaptiveRate's rule
      // holds; with other members but no slots yet (the first lease), a wake-up up to one spacing
      // late keeps its slot: at most one request early, per process.
      const interval = 1000 / share;
      const catchUp = this.view.members <= 1 ? catchUpMs(interval, this.margin) : Math.max(CATCH_UP_MS, interval);
      const earliest = woken && this.#next >= now - catchUp ? now - catchUp : now;
      this.#next = Math.max(this.#next, earliest) + interval;
    }
  }

  /**
   * A share heard at `receivedMs`: the next request goes at most one interval of it later, so a
   * larger share is felt at once rather than after the slot a smaller one set; on a share of 0
   * (everything leased to others), at most a lease later.
   */
  heard(receivedMs: number): void {
    const share = this.view.share;
    const gap = share > 0 ? 1000 / share : this.leaseMs;
    if (this.#next > receivedMs + gap) this.#next = receivedMs + gap;
  }
}
