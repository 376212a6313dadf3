import type { BackoffRun } from '../backoff/backoff.js';
import type { Clock } from '../core/clock.js';
import { type AdaptiveRate, type AdaptiveRateOptions, adaptiveRate } from '../rate/adaptive-rate.js';
import { Gate } from '../rate/gate.js';
import type { LawOptions } from '../rate/law-options.js';
import { CATCH_UP_MS, catchUpMs } from '../rate/pacing.js';
import type { AttemptContext } from '../retry/contexts.js';
import { guard } from '../retry/guard.js';
import type { Mechanism } from '../retry/mechanism.js';
import type { Outcome } from '../retry/options.js';
import { lawArgs, MemberMeter } from './member-report.js';
import { generationOf, processId, quote, RECONNECT, type SharedEvent, type SharedMode } from './protocol.js';
import { adminArgs, leaseArgs, RateLink } from './rate-call.js';
import { acquireLocal, type FallbackSeed, FORWARD, fallbackSeed, LocalTicket, SharedTicket } from './rate-fallback.js';
import { inspection, type Lease, parseLease, type SharedRateInspection } from './rate-lease.js';
import { Tally } from './rate-tally.js';
import { Rearm } from './rearm.js';
import { RATE_SCRIPT } from './scripts.js';
import {
  type SharedRate,
  type SharedRateConfig,
  type SharedRateOptions,
  type SharedRateStats,
  sharedRateOptions,
} from './shared-rate-options.js';
import { type Grids, memberTurns, ServerClock, type Turns, turnNear } from './time-division.js';

export type { SharedRateInspection, SharedRateMember } from './rate-lease.js';
export type { SharedRate, SharedRateOptions, SharedRateStats } from './shared-rate-options.js';

class Shared implements SharedRate {
  #mechanism: Mechanism | undefined;
  readonly #where: string;
  readonly #link: RateLink;
  readonly #keys: readonly string[];
  readonly #clock: Clock;
  readonly #commandTimeoutMs: number;
  readonly #leaseMs: number;
  readonly #tally: Tally;
  readonly #law: LawOptions;
  readonly #localOptions: AdaptiveRateOptions;
  readonly #lawArgs: readonly string[];
  readonly #id: string;
  readonly #gate: Gate;
  /** What this process measures of itself and reports with each lease. */
  readonly #meter = new MemberMeter();
  readonly #serverClock = new ServerClock();
  #mode: SharedMode = 'syncing';
  #began = false;
  #share = Number.POSITIVE_INFINITY;
  #fleet: number;
  /** Whether #fleet came from Redis (else it is the configured initial rate). */
  #heard = false;
  /** The rate the fleet was last throttled at, as heard (-1: none): seeds a new state with #fleet. */
  #throttledAt = -1;
  #epoch = 0;
  #generation = 0;
  #members = 0;
  #rank = -1;
  #grids: Grids | undefined;
  #short = false;
  #next = Number.NEGATIVE_INFINITY;
  #activeSince: number;
  #throttledEpoch = -1;
  #pendingCut: SharedTicket | undefined;
  #local: AdaptiveRate | undefined;
  #inflight: Promise<void> | undefined;
  readonly #timer: Rearm;
  #reconnect: BackoffRun | undefined;
  #nextTryMs = Number.NEGATIVE_INFINITY;
  #closed = false;
  readonly #ready: Promise<void>;
  #readyResolve!: () => void;

  constructor(c: SharedRateConfig) {
    const { where, key, law } = c;
    this.#where = where;
    this.#keys = [key, `${key}-members`, `${key}-leases`, `${key}-order`];
    this.#clock = c.clock;
    this.#timer = new Rearm(this.#clock, () => this.#renew());
    this.#commandTimeoutMs = c.commandTimeoutMs;
    this.#leaseMs = c.leaseMs;
    this.#link = new RateLink(where, c.scripts, this.#keys, this.#clock, this.#commandTimeoutMs);
    this.#tally = new Tally(c.onEvent);
    this.#law = law;
    this.#localOptions = c.localOptions;
    this.#fleet = law.initialRatePerSecond;
    this.#lawArgs = lawArgs(law);
    this.#id = processId();
    this.#activeSince = this.#clock.now();
    this.#gate = new Gate(this.#clock, 1, {
      waitMs: (now) => this.#waitMs(now),
      grant: (now, woken) => this.#grant(now, woken),
    });
    this.#ready = new Promise((resolve) => {
      this.#readyResolve = resolve;
    });
  }

  get key(): string {
    return this.#keys[0] as string;
  }

  get ratePerSecond(): number {
    return this.#mode === 'local' && this.#local ? this.#local.ratePerSecond : this.#share;
  }

  get fleetRatePerSecond(): number {
    return this.#fleet;
  }

  get epoch(): number {
    return this.#epoch;
  }

  get generation(): number {
    return this.#generation;
  }

  get members(): number {
    return this.#members;
  }

  get mode(): SharedMode {
    return this.#mode;
  }

  get waiting(): number {
    return this.#gate.waiting + (this.#local?.waiting ?? 0);
  }

  get stats(): SharedRateStats {
    return this.#tally.stats(this.#mode, this.#link.commands);
  }

  ready(): Promise<void> {
    this.#begin();
    return this.#ready;
  }

  acquire(signal?: AbortSignal): unknown {
    this.#begin();
    const now = this.#clock.now();
    if (now - this.#activeSince > 3 * this.#leaseMs && this.#mode === 'shared') {
      // Traffic again after a silence: the lease has lapsed, and the share it held may be someone
      // else's now. Requests wait for a new lease, as at the start (at most commandTimeoutMs).
      this.#mode = 'syncing';
      this.#activeSince = now;
      this.#send(undefined);
    }
    this.#activeSince = now;
    if (this.#mode === 'local') return this.#acquireLocal(signal);
    const ticket = this.#gate.acquire(0, signal);
    if (ticket instanceof Promise) {
      // Kept waiting by the share: saturated. In turns, every request waits for one; only a
      // second request waiting behind it (see #grant) says the share is used up.
      if (!this.#turns()) this.#meter.saturated = true;
      return ticket.then((t) => (t === FORWARD ? this.#acquireLocal(signal) : t));
    }
    return ticket === FORWARD ? this.#acquireLocal(signal) : ticket;
  }

  record(outcome: Outcome, ticket?: unknown, detail?: unknown): void {
    if (ticket instanceof LocalTicket) {
      ticket.controller.record(outcome, ticket.inner, detail);
      return;
    }
    if (outcome === 'success') {
      this.#meter.success(this.#clock.now());
    } else if (outcome === 'throttled') this.#meter.throttle(this.#clock.now());
    if (this.#mode === 'local') {
      // A request sent on a share that answered after the fallback: the local controller learns from it.
      this.#local?.record(outcome, undefined, detail);
      return;
    }
    if (outcome !== 'throttled') return;
    // Only a throttle of a request sent in the fleet's current epoch can be news; one per epoch is sent.
    const epoch = this.#current(ticket instanceof SharedTicket ? ticket : undefined);
    if (epoch < this.#epoch) {
      this.#tally.staleThrottles++;
      return;
    }
    if (epoch <= this.#throttledEpoch) return;
    this.#throttledEpoch = epoch;
    this.#tally.throttlesSent++;
    this.#send(new SharedTicket(epoch, this.#generation));
  }

  release(ticket?: unknown): void {
    if (ticket instanceof LocalTicket) ticket.controller.release?.(ticket.inner);
  }

  /** As a pipeline mechanism: `acquire`, the call, `record` (or `release` on an abort), by `guard()`. */
  execute<T>(next: (context: AttemptContext) => Promise<T>, context: AttemptContext): Promise<T> {
    this.#mechanism ??= guard(this);
    return this.#mechanism.execute(next, context);
  }

  async close(): Promise<void> {
    this.#timer.cancel();
    if (this.#inflight) await this.#inflight;
    if (!this.#closed && this.#mode === 'shared') {
      this.#closed = true;
      this.#timer.stop();
      // Lease 0 leaves the fleet: the share goes back at once, not after three lease periods.
      this.#inflight = this.#call(undefined, 0);
      await this.#inflight;
    }
    this.#closed = true;
    this.#timer.stop();
  }

  async inspect(): Promise<SharedRateInspection> {
    const reply = await this.#link.bounded(this.#link.run(this.#adminArgs('inspect')));
    if (!Array.isArray(reply) || reply.length !== 6) {
      throw new TypeError(`${this.#where}: Redis answered ${quote(reply)}; expected the inspection's six parts`);
    }
    return inspection(this.#keys, reply as unknown[][], this.#law.maxRatePerSecond);
  }

  async reset(): Promise<void> {
    const reply = await this.#link.bounded(this.#link.run(this.#adminArgs('reset')));
    const generation = generationOf(this.#where, Array.isArray(reply) ? reply[0] : reply);
    // This process goes on from the reset state at once; the others hear it at their next renewal.
    this.#generation = generation;
    this.#epoch = 0;
    this.#throttledEpoch = -1;
    this.#fleet = this.#law.initialRatePerSecond;
    this.#throttledAt = -1;
  }

  /** The first lease is asked for at the first `acquire()` or `ready()`: an admin's inspect() or reset() takes none. */
  #begin(): void {
    if (this.#began) return;
    this.#began = true;
    this.#send(undefined);
  }

  /**
   * The fleet epoch a throttle of `ticket` belongs to, as this process now knows the fleet: a
   * request sent in another generation belongs to the current one's first epoch (0), and one sent
   * in an epoch the fleet has since gone back from (a failover to a replica that lagged) to the
   * current epoch.
   */
  #current(ticket: SharedTicket | undefined): number {
    if (!ticket) return this.#epoch;
    if (ticket.generation !== this.#generation) return 0;
    return Math.min(ticket.epoch, this.#epoch);
  }

  #acquireLocal(signal: AbortSignal | undefined): unknown {
    return acquireLocal(this.#localController(), signal);
  }

  #fallbackSeed(): FallbackSeed {
    return fallbackSeed(this.#law, this.#heard, this.#share);
  }

  #localController(): AdaptiveRate {
    if (!this.#local) {
      this.#local = adaptiveRate({
        ...this.#localOptions,
        initialRatePerSecond: this.#fallbackSeed().seed,
        clock: this.#clock,
      });
    }
    return this.#local;
  }

  /** The member's turns in the fleet's time division (time-division.ts, `memberTurns`), or undefined. */
  #turns(): Turns | undefined {
    return memberTurns(this.#members, this.#rank, this.#serverClock.offset, this.#grids, this.#share);
  }

  /** The turn a request may go in (time-division.ts, `turnNear`), for the time its share's pace gives. */
  #turn(turns: Turns, now: number): number {
    return turnNear(turns, this.#next, now);
  }

  #waitMs(now: number): number {
    if (this.#mode === 'local') return 0;
    // Until the first lease answers (or fails, within commandTimeoutMs), requests wait for it.
    if (this.#mode === 'syncing') return this.#commandTimeoutMs;
    // Back from a fallback: the local controller's waiters go first, so the two never pace at once.
    if (this.#local && this.#local.waiting > 0) return 20;
    if (!Number.isFinite(this.#share)) return 0;
    if (!(this.#share > 0)) return this.#leaseMs;
    const turns = this.#turns();
    if (turns) return this.#turn(turns, now) - now;
    return this.#next - now;
  }

  #grant(now: number, woken: boolean): unknown {
    if (this.#mode === 'local') return FORWARD;
    this.#meter.grant(now);
    if (this.#gate.waiting > 0) this.#meter.saturated = true;
    const turns = this.#turns();
    if (turns) {
      // In turn with the other members: the next request's time at the share's pace is one
      // interval on (no debt carried over from turns missed), and it goes in the turn nearest it.
      const turn = this.#turn(turns, now);
      this.#next = Math.max(this.#next, turn) + Math.max(1000 / this.#share, turns.periodMs(turn));
    } else if (Number.isFinite(this.#share) && this.#share > 0) {
      // A late wake-up keeps its slot (up to catchUpMs); the first request after a silence starts one.
      // Alone in the fleet, the process's spacing is what the limiter sees, and adaptiveRate's rule
      // holds; with other members but no slots yet (the first lease), a wake-up up to one spacing
      // late keeps its slot: at most one request early, per process.
      const interval = 1000 / this.#share;
      const catchUp = this.#members <= 1 ? catchUpMs(interval, this.#law.margin) : Math.max(CATCH_UP_MS, interval);
      const earliest = woken && this.#next >= now - catchUp ? now - catchUp : now;
      this.#next = Math.max(this.#next, earliest) + interval;
    }
    return new SharedTicket(this.#epoch, this.#generation);
  }

  /** The lease's renewal: only while there is traffic (an idle process lets its lease lapse). */
  #renew(): void {
    if (this.#clock.now() - this.#activeSince > 3 * this.#leaseMs && this.#mode === 'shared') return;
    this.#send(undefined);
  }

  #send(cut: SharedTicket | undefined): void {
    if (this.#closed) return;
    if (this.#inflight) {
      // The throttle goes with the call after this one, unless that call's answer makes it old news.
      if (cut) this.#pendingCut = cut;
      return;
    }
    const wait = this.#nextTryMs - this.#clock.now();
    if (wait > 0) {
      this.#timer.arm(wait);
      return;
    }
    this.#timer.cancel();
    this.#inflight = this.#call(cut, this.#leaseMs);
  }

  /** ARGV for an admin call: no report, no lease change; the seed is the configured initial rate. */
  #adminArgs(mode: 'inspect' | 'reset'): string[] {
    return adminArgs(this.#id, this.#leaseMs, this.#law.initialRatePerSecond, this.#lawArgs, mode);
  }

  async #call(cut: SharedTicket | undefined, leaseMs: number): Promise<void> {
    const now = this.#clock.now();
    // Redis sums the members' rates and successes: the fleet's accepted rate is known once every
    // member's covers a second and the fleet's successes are 10.
    const { used, accepted, successes, spanMs, refused, saturated, succeeded } = this.#meter.take(
      now,
      this.#gate.waiting > 0,
    );
    // The seed, should this call find the fleet's state missing or broken: the fleet's rate as
    // last heard — on fallback, no more than the local controller's rate times the members —
    // else the configured initial rate.
    let seed = this.#fleet;
    if (this.#mode === 'local' && this.#local)
      seed = Math.min(seed, this.#local.ratePerSecond * Math.max(1, this.#members));
    const args = leaseArgs({
      id: this.#id,
      saturated,
      used,
      accepted,
      leaseMs,
      cut,
      seed,
      lawArgs: this.#lawArgs,
      succeeded,
      successes,
      spanMs,
      refused,
      members: this.#heard ? this.#members : 0,
      throttledAt: this.#throttledAt,
    });
    try {
      const lease = parseLease(
        this.#where,
        await this.#link.bounded(this.#link.run(args)),
        this.#law.minRatePerSecond,
        this.#law.maxRatePerSecond,
        leaseMs === 0,
      );
      const received = this.#clock.now();
      this.#serverClock.add(now, lease.serverMs, received);
      this.#share = lease.share < 0 ? Number.POSITIVE_INFINITY : lease.share;
      // A smaller share takes effect now; a share of 0 (everything leased to others) waits for the next lease.
      const gap = this.#share > 0 ? 1000 / this.#share : this.#leaseMs;
      if (this.#next > received + gap) this.#next = received + gap;
      this.#fleet = lease.fleet < 0 ? Number.POSITIVE_INFINITY : lease.fleet;
      this.#throttledAt = lease.throttledAt;
      this.#heard = true;
      this.#hear(lease);
      this.#short = lease.short;
      this.#members = lease.members;
      this.#rank = lease.rank;
      this.#grids = lease.grids;
      this.#nextTryMs = Number.NEGATIVE_INFINITY;
      this.#reconnect = undefined;
      const was = this.#mode;
      this.#mode = 'shared';
      if (was === 'local') {
        this.#tally.resyncs++;
        this.#emit({ type: 'resync', error: undefined, atMs: this.#clock.now() });
      }
    } catch (error) {
      this.#tally.errors++;
      this.#reconnect ??= RECONNECT.start();
      this.#nextTryMs = this.#clock.now() + this.#reconnect.next();
      if (this.#mode !== 'local') {
        this.#mode = 'local';
        this.#tally.fallbacks++;
        this.#localController();
        const { seed: start, from } = this.#fallbackSeed();
        this.#emit({ type: 'fallback', error, atMs: this.#clock.now(), seedFrom: from, seed: start });
      }
    } finally {
      this.#inflight = undefined;
      this.#readyResolve();
      this.#gate.poke();
      if (!this.#closed) {
        const pending = this.#pendingCut;
        this.#pendingCut = undefined;
        const epoch = pending ? this.#current(pending) : -1;
        if (this.#mode === 'shared' && pending && epoch >= this.#epoch) {
          this.#send(new SharedTicket(epoch, this.#generation));
        } else if (this.#mode === 'local') this.#timer.arm(Math.max(0, this.#nextTryMs - this.#clock.now()));
        // A share below what was asked for is asked again soon: it grows as other leases shrink.
        else this.#timer.arm(this.#short ? Math.min(100, this.#leaseMs) : this.#leaseMs);
      }
      if (this.#mode === 'shared' && this.#local && this.#local.waiting === 0) this.#local = undefined;
    }
  }

  /**
   * A lease's generation and epoch against what this process last heard: a new generation (the
   * state was lost, repaired or reset) or an epoch that went back (a failover to a replica that
   * lagged) restarts the epoch bookkeeping, so the next throttle is heard at once.
   */
  #hear(lease: Lease): void {
    const known = this.#generation !== 0;
    const lost = known && lease.generation !== this.#generation;
    const rewound = known && !lost && lease.epoch < this.#epoch;
    if (lease.fault) {
      this.#tally.repairs++;
      this.#emit({ type: 'repair', error: undefined, atMs: this.#clock.now(), ...lease.fault });
    } else if (lost || rewound) {
      this.#tally.stateLosses++;
      const field = lost ? 'generation' : 'epoch';
      this.#emit({ type: 'state-lost', error: undefined, atMs: this.#clock.now(), key: this.key, field });
    }
    if (lease.fault || lost || rewound) this.#throttledEpoch = -1;
    this.#generation = lease.generation;
    this.#epoch = lease.epoch;
  }

  #emit(event: SharedEvent): void {
    this.#tally.emit(event);
  }
}

/**
 * One `adaptiveRate` for a whole fleet of processes, kept in the caller's Redis: one rate, one
 * cooling-off, one learned limit for every process that uses the same `name`, each process
 * pacing at its lease of the fleet's rate.
 *
 * **The protocol** (docs/redis.md): the fleet's rate and control state live in one Redis hash,
 * changed only by {@link RATE_SCRIPT}, atomically. Each process holds a *lease* of rate share —
 * max-min fair between processes by their recent demand — renewed every `leaseMs` (500) while it
 * has traffic: one `EVALSHA`, so 2 commands a second per process whatever its request rate
 * (0.04 per request at 50 requests/s). A throttle (HTTP 429) of a request sent in the fleet's
 * current *epoch* is sent at once; the script compares that epoch with the fleet's, so the first
 * report of a congestion event moves the rate and every later report of it changes nothing.
 * Rises come from the script too, after the cool-off, as `adaptiveRate`'s do.
 *
 * **Staleness:** a process learns another's throttle or a rise at its next renewal: at most
 * `leaseMs` plus one round trip (≤ `commandTimeoutMs`) late; its own throttles reach Redis at once.
 *
 * **Redis failing never fails a request:** every call races `commandTimeoutMs` (100); a call that fails
 * or times out switches the process to a local `adaptiveRate` seeded with its last share
 * (`mode: 'local'`, event `'fallback'`), Redis is tried again on ebb's own backoff (100 ms doubling
 * to 2 s, full jitter), and the first answer resyncs (event `'resync'`). Before the first answer,
 * requests wait for it (at most `commandTimeoutMs`).
 *
 * **Gotchas:** the control-law options are the fleet's and are sent with every call: give every
 * process of one `name` the same ones. No priority classes; `Retry-After` and `RateLimit` hints
 * are read only on fallback (the local `adaptiveRate` does). Close it (`await rate.close()`)
 * before a process exits, or its share returns to the fleet only after 3 × `leaseMs`.
 *
 * @example
 * const rate = sharedRate({ client: redis, name: 'payments-api' });
 * await rate.ready();
 * await pipeline([retrying(), rate]).execute(() => callPayments()); // withRetry(fetch, { rate }) too
 * await rate.close();
 */
export function sharedRate(options: SharedRateOptions): SharedRate {
  return new Shared(sharedRateOptions(options));
}
