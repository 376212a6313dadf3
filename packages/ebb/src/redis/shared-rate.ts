import type { Clock } from '../core/clock.js';
import { Gate } from '../rate/gate.js';
import type { AttemptContext } from '../retry/contexts.js';
import { guard } from '../retry/guard.js';
import type { Outcome } from '../retry/options.js';
import { lawArgs, MemberMeter } from './member-report.js';
import { generationOf, processId, Reconnect, type SharedMode, stateNotKept } from './protocol.js';
import { adminArgs, leaseArgs, RateLink } from './rate-call.js';
import { FORWARD, LocalFallback, LocalTicket, SharedTicket } from './rate-fallback.js';
import { inspection, parseLease, type SharedRateInspection } from './rate-lease.js';
import { Tally } from './rate-tally.js';
import { FleetView } from './rate-view.js';
import { Rearm } from './rearm.js';
import { RATE_SCRIPT } from './scripts.js';
import { SharePacer } from './share-pacer.js';
import type { SharedRate, SharedRateConfig, SharedRateOptions, SharedRateStats } from './shared-rate-options.js';
import { sharedRateOptions } from './shared-rate-options.js';

export type { SharedRateInspection, SharedRateMember } from './rate-lease.js';
export type { SharedRate, SharedRateOptions, SharedRateStats } from './shared-rate-options.js';

class Shared implements SharedRate {
  /** As a pipeline mechanism: `acquire`, the call, `record` (or `release` on an abort), by `guard()`. */
  readonly #mechanism = guard(this);
  readonly #where: string;
  readonly #link: RateLink;
  readonly #keys: readonly string[];
  readonly #clock: Clock;
  readonly #commandTimeoutMs: number;
  readonly #leaseMs: number;
  readonly #tally: Tally;
  readonly #lawArgs: readonly string[];
  readonly #id: string;
  readonly #gate: Gate;
  /** What this process measures of itself and reports with each lease. */
  readonly #meter = new MemberMeter();
  readonly #view: FleetView;
  readonly #pacer: SharePacer;
  #mode: SharedMode = 'syncing';
  #began = false;
  #activeSince: number;
  #pendingCut: SharedTicket | undefined;
  readonly #fallback: LocalFallback;
  #inflight: Promise<void> | undefined;
  readonly #timer: Rearm;
  readonly #reconnect = new Reconnect();
  #closed = false;
  readonly #ready: Promise<void>;
  #readyResolve!: () => void;

  constructor(c: SharedRateConfig) {
    const { where, key, law } = c;
    this.#where = where;
    this.#keys = [key, `${key}-members`, `${key}-leases`, `${key}-order`];
    this.#clock = c.ownClock;
    this.#timer = new Rearm(this.#clock, () => this.#renew());
    this.#commandTimeoutMs = c.commandTimeoutMs;
    this.#leaseMs = c.leaseMs;
    this.#link = new RateLink(where, c.scripts, this.#keys, this.#clock, this.#commandTimeoutMs);
    this.#tally = new Tally(c.onEvent);
    this.#view = new FleetView(law);
    this.#pacer = new SharePacer(this.#view, law.margin, c.leaseMs);
    this.#fallback = new LocalFallback(
      c.localOptions,
      c.clock,
      () => this.#view.fallbackSeed().seed,
      () => this.#meter.grant(this.#clock.now()),
    );
    this.#lawArgs = lawArgs(law);
    this.#id = processId();
    this.#activeSince = this.#clock.now();
    this.#gate = new Gate(c.clock, 1, {
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
    const local = this.#fallback.running;
    return this.#mode === 'local' && local ? local.ratePerSecond : this.#view.share;
  }

  get fleetRatePerSecond(): number {
    return this.#view.fleet;
  }

  get epoch(): number {
    return this.#view.epoch;
  }

  get generation(): number {
    return this.#view.generation;
  }

  get members(): number {
    return this.#view.members;
  }

  get mode(): SharedMode {
    return this.#mode;
  }

  get waiting(): number {
    return this.#gate.waiting + this.#fallback.waiting;
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
    if (this.#mode === 'local') return this.#fallback.acquire(signal);
    const ticket = this.#gate.acquire(0, signal);
    if (ticket instanceof Promise) {
      // Kept waiting by the share: saturated. In turns, every request waits for one; only a
      // second request waiting behind it (see #grant) says the share is used up.
      if (!this.#view.turns()) this.#meter.saturated = true;
      return ticket.then((t) => (t === FORWARD ? this.#fallback.acquire(signal) : t));
    }
    return ticket === FORWARD ? this.#fallback.acquire(signal) : ticket;
  }

  record(outcome: Outcome, ticket?: unknown, detail?: unknown): void {
    // The meter counts what the service did on a share and on the fallback: a resync reports no gap.
    if (outcome === 'success') this.#meter.success(this.#clock.now());
    else if (outcome === 'throttled') this.#meter.throttle(this.#clock.now());
    if (ticket instanceof LocalTicket) ticket.controller.record(outcome, ticket.inner, detail);
    // A request sent on a share that answered after the fallback: the local controller learns from it.
    else if (this.#mode === 'local') this.#fallback.running?.record(outcome, undefined, detail);
    else if (outcome === 'throttled') {
      // Only a throttle of a request sent in the fleet's current epoch can be news; one per epoch is sent.
      const news = this.#view.news(ticket instanceof SharedTicket ? ticket : undefined);
      if (news === 'stale') this.#tally.staleThrottles++;
      else if (news !== 'reported') {
        this.#tally.throttlesSent++;
        this.#send(news);
      }
    }
  }

  release(ticket?: unknown): void {
    if (ticket instanceof LocalTicket) ticket.controller.release?.(ticket.inner);
  }

  execute<T>(next: (context: AttemptContext) => Promise<T>, context: AttemptContext): Promise<T> {
    return this.#mechanism.execute(next, context);
  }

  async close(): Promise<void> {
    this.#timer.stop();
    if (this.#inflight) await this.#inflight;
    const leave = !this.#closed && this.#mode === 'shared';
    this.#closed = true;
    // Closed, it paces alone at the rate it had (waiters too); lease 0 gives its share back at once.
    this.#mode = 'local';
    this.#fallback.controller();
    this.#gate.poke();
    if (leave) this.#inflight = this.#call(undefined, 0);
    await this.#inflight;
  }

  async inspect(): Promise<SharedRateInspection> {
    const reply = await this.#link.bounded(this.#link.run(this.#adminArgs('inspect')));
    return inspection(this.#where, this.#keys, reply, this.#view.law.maxRatePerSecond);
  }

  async reset(): Promise<void> {
    const reply = await this.#link.bounded(this.#link.run(this.#adminArgs('reset')));
    const generation = generationOf(this.#where, Array.isArray(reply) ? reply[0] : reply);
    // This process goes on from the reset state at once; the others hear it at their next renewal.
    this.#view.reset(generation);
  }

  /** The first lease is asked for at the first `acquire()` or `ready()`: an admin's inspect() or reset() takes none. */
  #begin(): void {
    if (this.#began) return;
    this.#began = true;
    this.#send(undefined);
  }

  #waitMs(now: number): number {
    if (this.#mode === 'local') return 0;
    // Until the first lease answers (or fails, within commandTimeoutMs), requests wait for it.
    if (this.#mode === 'syncing') return this.#commandTimeoutMs;
    // Back from a fallback: the local controller's waiters go first, so the two never pace at once.
    if (this.#fallback.waiting > 0) return 20;
    return this.#pacer.waitMs(now);
  }

  #grant(now: number, woken: boolean): unknown {
    if (this.#mode === 'local') return FORWARD;
    this.#meter.grant(now);
    if (this.#gate.waiting > 0) this.#meter.saturated = true;
    this.#pacer.grant(now, woken);
    return new SharedTicket(this.#view.epoch, this.#view.generation);
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
    const wait = this.#reconnect.waitMs(this.#clock.now());
    if (wait > 0) {
      this.#timer.arm(wait);
      return;
    }
    this.#timer.cancel();
    this.#inflight = this.#call(cut, this.#leaseMs);
  }

  /** ARGV for an admin call: no report, no lease change; the seed is the configured initial rate. */
  #adminArgs(mode: 'inspect' | 'reset'): string[] {
    return adminArgs(this.#id, this.#leaseMs, this.#view.law.initialRatePerSecond, this.#lawArgs, mode);
  }

  async #call(cut: SharedTicket | undefined, leaseMs: number): Promise<void> {
    const now = this.#clock.now();
    const view = this.#view;
    const args = leaseArgs({
      // Redis sums the members' rates and successes: the fleet's accepted rate is known once every
      // member's covers a second and the fleet's successes are 10.
      ...this.#meter.take(now, this.#gate.waiting > 0),
      id: this.#id,
      leaseMs,
      cut,
      seed: view.seed(this.#mode === 'local' ? this.#fallback.running?.ratePerSecond : undefined),
      lawArgs: this.#lawArgs,
      members: view.membersHeard,
      throttledAt: view.throttledAt,
    });
    try {
      const lease = parseLease(
        this.#where,
        await this.#link.bounded(this.#link.run(args)),
        view.law.minRatePerSecond,
        view.law.maxRatePerSecond,
        leaseMs === 0,
      );
      const received = this.#clock.now();
      const lost = view.hear(lease, now, received);
      this.#pacer.heard(received);
      if (lease.fault) this.#tally.repair(lease.fault, this.#clock.now());
      else if (lost) this.#tally.stateLost(this.key, lost, this.#clock.now());
      if (view.notKept) return this.#local(stateNotKept(this.#where, view.lostInRow));
      this.#reconnect.answered();
      const was = this.#mode;
      // A closed member stays local: the answer to its leaving (an unlimited share) paces nothing.
      if (!this.#closed) this.#mode = 'shared';
      if (was === 'local' && !this.#closed) this.#tally.resync(this.#clock.now());
    } catch (error) {
      this.#tally.errors++;
      this.#local(error);
    } finally {
      this.#inflight = undefined;
      this.#readyResolve();
      this.#gate.poke();
      if (!this.#closed) {
        const cut = this.#mode === 'shared' ? view.stillNews(this.#pendingCut) : undefined;
        this.#pendingCut = undefined;
        if (cut) this.#send(cut);
        else if (this.#mode === 'local') this.#timer.arm(Math.max(0, this.#reconnect.waitMs(this.#clock.now())));
        // A share below what was asked for is asked again soon: it grows as other leases shrink.
        else this.#timer.arm(view.short ? Math.min(100, this.#leaseMs) : this.#leaseMs);
      }
      if (this.#mode === 'shared') this.#fallback.settle();
    }
  }

  /** Paces on the local controller (once: the event and its seed on the way in) and tries Redis again on ebb's backoff. */
  #local(error: unknown): void {
    this.#reconnect.failed(this.#clock.now());
    if (this.#mode === 'local') return;
    this.#mode = 'local';
    this.#fallback.controller();
    this.#tally.fallback(error, this.#clock.now(), this.#view.fallbackSeed());
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
 * requests wait for it (at most `commandTimeoutMs`). A state gone at three answers in a row (Redis
 * evicting it: give ebb's keys `noeviction`) is a fallback too, until one stays.
 *
 * **Gotchas:** the control-law options are the fleet's and are sent with every call: give every
 * process of one `name` the same ones. No priority classes; `Retry-After` and `RateLimit` hints
 * are read only on fallback (the local `adaptiveRate` does). Close it (`await rate.close()`)
 * before a process exits, or its share returns to the fleet only after 3 × `leaseMs`.
 *
 * @example
 * const rate = sharedRate({ client: redis, name: 'payments-api' });
 * await rate.ready();
 * await pipeline([retrying(), rate]).execute(() => callPayments()); // or withRetry(fetch, { use: [rate] })
 * await rate.close();
 */
export function sharedRate(options: SharedRateOptions): SharedRate {
  return new Shared(sharedRateOptions(options));
}
