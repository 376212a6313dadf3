/**
 * The fleet as a `sharedRate` member last heard it from Redis — its share, the fleet's rate, the
 * rate the fleet was last throttled at, the epoch and generation, the members and its rank among
 * them, the grids of the time division, the offset of the server's clock — and what the member
 * reads from that record: its turns, the epoch a throttle belongs to, whether a throttle is news,
 * the seed a lease call sends and a fallback starts from. Its own module because it is one record
 * and the rules that read it: the class in shared-rate.ts decides when to call Redis, this says
 * what the last answer told and what follows from it.
 */
import type { LawOptions } from '../rate/law-options.js';
import { LOSSES_TO_FALL_BACK } from './protocol.js';
import { type FallbackSeed, fallbackSeed, SharedTicket } from './rate-fallback.js';
import type { Lease } from './rate-lease.js';
import { type Grids, memberTurns, ServerClock, type Turns } from './time-division.js';

/** What a `sharedRate` member last heard of its fleet (before the first answer: the configured initial state). */
export class FleetView {
  /** This member's share, requests per second (`Infinity`: unlimited, or none heard yet). */
  share = Number.POSITIVE_INFINITY;
  /** The fleet's rate, requests per second: the configured initial rate until heard. */
  fleet: number;
  /** Whether the values came from Redis. */
  heard = false;
  /** The rate the fleet was last throttled at (-1: none): seeds a new state with `fleet`. */
  throttledAt = -1;
  /** The fleet's congestion epoch. */
  epoch = 0;
  /** The state's generation (0: none heard yet). */
  generation = 0;
  /** Processes holding a lease. */
  members = 0;
  /** This member's place in the join order (its time slot; -1: none heard). */
  rank = -1;
  grids: Grids | undefined;
  /** Whether the share was below what this member asked for (it asks again soon). */
  short = false;
  /** The last epoch this member reported a throttle in (-1: none since the state it knew). */
  reported = -1;
  /** Answers in a row that found the state this member knew gone (another generation). */
  lostInRow = 0;

  /** Whether Redis keeps no state for long (gone at {@link LOSSES_TO_FALL_BACK} answers in a row): pace locally. */
  get notKept(): boolean {
    return this.lostInRow >= LOSSES_TO_FALL_BACK;
  }
  readonly serverClock = new ServerClock();

  constructor(readonly law: LawOptions) {
    this.fleet = law.initialRatePerSecond;
  }

  /**
   * Takes a lease sent at `sentMs` and answered at `receivedMs` (this member's clock), and says
   * whether the state this member knew is gone: `'generation'` (another generation answered: the
   * state was lost, repaired or reset), `'epoch'` (the epoch went back: a failover to a replica
   * that lagged), else undefined. Either, or a repair, restarts the epoch bookkeeping, so the
   * next throttle is reported at once.
   */
  hear(lease: Lease, sentMs: number, receivedMs: number): 'generation' | 'epoch' | undefined {
    this.serverClock.add(sentMs, lease.serverMs, receivedMs);
    const known = this.generation !== 0;
    const lost = known && lease.generation !== this.generation;
    const rewound = known && !lost && lease.epoch < this.epoch;
    if (lease.fault || lost || rewound) this.reported = -1;
    this.share = lease.share < 0 ? Number.POSITIVE_INFINITY : lease.share;
    this.fleet = lease.fleet < 0 ? Number.POSITIVE_INFINITY : lease.fleet;
    this.throttledAt = lease.throttledAt;
    this.heard = true;
    this.generation = lease.generation;
    this.epoch = lease.epoch;
    this.short = lease.short;
    this.members = lease.members;
    this.rank = lease.rank;
    this.grids = lease.grids;
    this.lostInRow = lost ? this.lostInRow + 1 : 0;
    return lost ? 'generation' : rewound ? 'epoch' : undefined;
  }

  /** An admin's reset by this process: it goes on from the reset state of `generation` at once. */
  reset(generation: number): void {
    this.generation = generation;
    this.epoch = 0;
    this.reported = -1;
    this.fleet = this.law.initialRatePerSecond;
    this.throttledAt = -1;
  }

  /**
   * The fleet epoch a throttle of `ticket` belongs to, as this member now knows the fleet: a
   * request sent in another generation belongs to the current one's first epoch (0), and one sent
   * in an epoch the fleet has since gone back from (a failover to a replica that lagged) to the
   * current epoch.
   */
  current(ticket: SharedTicket | undefined): number {
    if (!ticket) return this.epoch;
    if (ticket.generation !== this.generation) return 0;
    return Math.min(ticket.epoch, this.epoch);
  }

  /**
   * A throttle of `ticket`'s request as news for the fleet: `'stale'` when the request was sent
   * before the fleet's last change, `'reported'` when this member already reported its epoch (one
   * throttle an epoch is sent), else the throttle to send — its epoch then counts as reported.
   */
  news(ticket: SharedTicket | undefined): SharedTicket | 'stale' | 'reported' {
    const epoch = this.current(ticket);
    if (epoch < this.epoch) return 'stale';
    if (epoch <= this.reported) return 'reported';
    this.reported = epoch;
    return new SharedTicket(epoch, this.generation);
  }

  /**
   * A throttle held back while a call was in flight, after that call's answer: dated in the fleet
   * as it now is, or undefined when the answer made it old news.
   */
  stillNews(cut: SharedTicket | undefined): SharedTicket | undefined {
    if (!cut) return undefined;
    const epoch = this.current(cut);
    return epoch >= this.epoch ? new SharedTicket(epoch, this.generation) : undefined;
  }

  /** This member's turns in the fleet's time division (time-division.ts, `memberTurns`), or undefined. */
  turns(): Turns | undefined {
    return memberTurns(this.members, this.rank, this.serverClock.offset, this.grids, this.share);
  }

  /** Where a local controller starts on fallback (rate-fallback.ts, `fallbackSeed`). */
  fallbackSeed(): FallbackSeed {
    return fallbackSeed(this.law, this.heard, this.share);
  }

  /**
   * The seed a lease call sends, should it find the fleet's state missing or broken: the fleet's
   * rate as last heard — on fallback, no more than the local controller's rate (`localRate`)
   * times the members — else the configured initial rate.
   */
  seed(localRate: number | undefined): number {
    return localRate === undefined ? this.fleet : Math.min(this.fleet, localRate * Math.max(1, this.members));
  }

  /** The members a lease call reports it heard of (0: none heard yet). */
  get membersHeard(): number {
    return this.heard ? this.members : 0;
  }
}
