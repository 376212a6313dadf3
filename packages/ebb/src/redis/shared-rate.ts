import type { BackoffRun } from '../backoff/backoff.js';
import { type Clock, clockOption, unrefSystemClock } from '../core/clock.js';
import { checkKeys, invalid, nonNegative, optionsObject, show } from '../core/validate.js';
import { type AdaptiveRate, type AdaptiveRateOptions, adaptiveRate, LAW_KEYS } from '../rate/adaptive-rate.js';
import type { AdaptiveRateController } from '../rate/controller.js';
import { Gate } from '../rate/gate.js';
import type { Outcome } from '../retry/options.js';
import { isNoScript, type RedisScripts, redisScripts, scriptSha } from './client.js';
import { Rearm } from './rearm.js';
import { RATE_SCRIPT } from './scripts.js';
import { RECONNECT, type SharedEvent, type SharedMode, Timeout } from './shared-state.js';
import { pick, validateAs } from './validate-as.js';

/** Options of {@link sharedRate}. */
export interface SharedRateOptions extends Pick<AdaptiveRateOptions, (typeof LAW_KEYS)[number] | 'maxServerWaitMs'> {
  /** The caller's client: node-redis, ioredis or a {@link RedisScripts}. Required. */
  readonly client: unknown;
  /** The limit's name; its keys are `<prefix>:{<name>}:rate…`, one Cluster slot. Required. */
  readonly name: string;
  /** Key prefix, default `'ebb'`. */
  readonly prefix?: string;
  /** Longest wait for one Redis call in ms, after which the process falls back to a local controller. Default 100. */
  readonly timeoutMs?: number;
  /**
   * How long a lease of rate share lasts, in ms: each process renews its share this often while
   * it has traffic (one `EVALSHA`), and learns the fleet's changes at the latest then. A lease not
   * renewed for 3 × `leaseMs` (a process that died) returns its share to the fleet. Default 500.
   */
  readonly leaseMs?: number;
  /** Called on fallback and on resync. A throw goes no further. */
  readonly onEvent?: (event: SharedEvent) => void;
  /** Time source for pacing, timeouts and timers; default the unref'd system clock. */
  readonly clock?: Clock;
}

/** Counters of a shared rate. A fresh object on each read. */
export interface SharedRateStats {
  readonly mode: SharedMode;
  /** Commands sent to Redis: one `EVALSHA` per call, plus an `EVAL` when the server lacked the script. */
  readonly commands: number;
  /** Calls that failed or timed out. */
  readonly errors: number;
  /** Times the controller went from shared (or syncing) to local. */
  readonly fallbacks: number;
  /** Times it went from local back to shared. */
  readonly resyncs: number;
  /** Throttles this process reported to Redis (each may or may not have moved the fleet's rate). */
  readonly throttlesSent: number;
}

/** The controller {@link sharedRate} returns: an `adaptiveRate` for a whole fleet. */
export interface SharedRate extends AdaptiveRateController {
  /** This process's share of the fleet's rate while shared; the local controller's rate while on fallback. */
  readonly ratePerSecond: number;
  /** The fleet's rate as last heard from Redis (`Infinity`: no limit learned yet). */
  readonly fleetRatePerSecond: number;
  /** The fleet's congestion epoch as last heard: it grows by one for each throttle event the fleet handled. */
  readonly epoch: number;
  /** Processes holding a lease, as last heard. */
  readonly members: number;
  readonly mode: SharedMode;
  readonly stats: SharedRateStats;
  /** The Redis key of the fleet's state. */
  readonly key: string;
  /** Requests waiting for their turn. */
  readonly waiting: number;
  /** Resolves once the first lease was granted or failed (bounded by `timeoutMs`); never rejects. */
  ready(): Promise<void>;
  /** Gives the share back to the fleet at once and stops the timers. Call before a process exits. */
  close(): Promise<void>;
}

/** A ticket of a request this controller let through on a share: the fleet epoch it was sent in. */
class SharedTicket {
  constructor(readonly epoch: number) {}
}

/** A ticket of a request the local fallback controller let through. */
class LocalTicket {
  constructor(
    readonly controller: AdaptiveRate,
    readonly inner: unknown,
  ) {}
}

/** Grants and successes are counted in 100-ms slots over at most 3 s, as `adaptiveRate` does. */
const SLOT_MS = 100;
const SLOTS = 30;
/** A late wake-up of the pacer is made up for, up to this much (less below 40 r/s: see `catchUpMs`). */
const CATCH_UP_MS = 25;
/** The accepted rate is measured as `adaptiveRate` measures its delivered rate: over 10 successes at least. */
const MIN_DELIVERED = 10;
/** Sent with a grant in place of a ticket while on fallback: the waiter goes on to the local controller. */
const FORWARD = Symbol('forward');

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
 * per second over the last second (over at least 100 ms since its first, as `adaptiveRate`
 * measures its sending rate for a first cut; 0 before any); `accepted`, its successes per second
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
  const used = Math.max(0, granted.rate(now, start, 0, 0, 1000));
  const accepted = delivered.rate(now, start, MIN_DELIVERED, 1000, 3000);
  const refused = 2 * throttled.marked(now, delivered.lastSlots) >= delivered.lastSlots;
  return { used, accepted, successes: accepted < 0 ? -1 : delivered.lastCount, spanMs: delivered.lastSpanMs, refused };
}

const finite = (x: number): string => (Number.isFinite(x) ? String(x) : '-1');

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

class Shared implements SharedRate {
  readonly #where: string;
  readonly #scripts: RedisScripts;
  readonly #keys: readonly string[];
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #leaseMs: number;
  readonly #onEvent: ((event: SharedEvent) => void) | undefined;
  readonly #law: Required<Pick<AdaptiveRateOptions, (typeof LAW_KEYS)[number]>>;
  readonly #localOptions: AdaptiveRateOptions;
  readonly #lawArgs: readonly string[];
  readonly #id: string;
  readonly #gate: Gate;
  readonly #granted = new Counter();
  readonly #delivered = new Counter();
  /** Every throttle this process saw, whatever its epoch: when the service refused it. */
  readonly #throttled = new Counter();
  /** When this process first let a request go: its rates are measured from then. */
  #start = Number.POSITIVE_INFINITY;
  #sha: string | undefined;
  #mode: SharedMode = 'syncing';
  #share = Number.POSITIVE_INFINITY;
  #fleet: number;
  #epoch = 0;
  #members = 0;
  #short = false;
  #next = Number.NEGATIVE_INFINITY;
  #saturated = false;
  /** A success was recorded since the last call: evidence for a rise, as in `adaptiveRate`. */
  #succeeded = false;
  #activeSince: number;
  #throttledEpoch = -1;
  #pendingCut = -1;
  #local: AdaptiveRate | undefined;
  #inflight: Promise<void> | undefined;
  readonly #timer: Rearm;
  #reconnect: BackoffRun | undefined;
  #nextTryMs = Number.NEGATIVE_INFINITY;
  #closed = false;
  #commands = 0;
  #errors = 0;
  #fallbacks = 0;
  #resyncs = 0;
  #throttlesSent = 0;
  readonly #ready: Promise<void>;
  #readyResolve!: () => void;

  constructor(
    where: string,
    o: SharedRateOptions,
    law: Required<Pick<AdaptiveRateOptions, (typeof LAW_KEYS)[number]>>,
    key: string,
  ) {
    this.#where = where;
    this.#scripts = redisScripts(o.client, where);
    this.#keys = [key, `${key}-members`, `${key}-leases`];
    this.#clock = o.clock === undefined ? unrefSystemClock : clockOption(where, o.clock);
    this.#timer = new Rearm(this.#clock, () => this.#renew());
    this.#timeoutMs = nonNegative(where, 'timeoutMs', o.timeoutMs, 100, false, 'For example 100.');
    if (this.#timeoutMs < 1) invalid(where, 'timeoutMs', o.timeoutMs, 'a finite number >= 1', 'For example 100.');
    this.#leaseMs = nonNegative(where, 'leaseMs', o.leaseMs, 500, false, 'For example 500.');
    if (this.#leaseMs < 10) invalid(where, 'leaseMs', o.leaseMs, 'a finite number >= 10', 'For example 500.');
    if (o.onEvent !== undefined && typeof o.onEvent !== 'function') {
      invalid(where, 'onEvent', o.onEvent, 'a function (event) => void');
    }
    this.#onEvent = o.onEvent;
    this.#law = law;
    this.#localOptions = pick(o as never, [...LAW_KEYS, 'maxServerWaitMs']) as AdaptiveRateOptions;
    this.#fleet = law.initialRatePerSecond;
    this.#lawArgs = lawArgs(law);
    const bytes = new Uint8Array(12);
    crypto.getRandomValues(bytes);
    this.#id = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
    this.#activeSince = this.#clock.now();
    this.#gate = new Gate(this.#clock, 1, {
      waitMs: (now) => this.#waitMs(now),
      grant: (now, woken) => this.#grant(now, woken),
    });
    this.#ready = new Promise((resolve) => {
      this.#readyResolve = resolve;
    });
    this.#send(-1);
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
    return {
      mode: this.#mode,
      commands: this.#commands,
      errors: this.#errors,
      fallbacks: this.#fallbacks,
      resyncs: this.#resyncs,
      throttlesSent: this.#throttlesSent,
    };
  }

  ready(): Promise<void> {
    return this.#ready;
  }

  acquire(signal?: AbortSignal): unknown {
    const now = this.#clock.now();
    if (now - this.#activeSince > 3 * this.#leaseMs && this.#mode === 'shared') {
      // Traffic again after a silence: the lease has lapsed, and the share it held may be someone
      // else's now. Requests wait for a new lease, as at the start (at most timeoutMs).
      this.#mode = 'syncing';
      this.#activeSince = now;
      this.#send(-1);
    }
    this.#activeSince = now;
    if (this.#mode === 'local') return this.#acquireLocal(signal);
    const ticket = this.#gate.acquire(0, signal);
    if (ticket instanceof Promise) {
      this.#saturated = true;
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
      this.#delivered.add(this.#clock.now());
      this.#succeeded = true;
    } else if (outcome === 'throttled') this.#throttled.add(this.#clock.now());
    if (this.#mode === 'local') {
      // A request sent on a share that answered after the fallback: the local controller learns from it.
      this.#local?.record(outcome, undefined, detail);
      return;
    }
    if (outcome !== 'throttled') return;
    // Only a throttle of a request sent in the fleet's current epoch can be news; one per epoch is sent.
    const epoch = ticket instanceof SharedTicket ? ticket.epoch : this.#epoch;
    if (epoch < this.#epoch || epoch <= this.#throttledEpoch) return;
    this.#throttledEpoch = epoch;
    this.#throttlesSent++;
    this.#send(epoch);
  }

  release(ticket?: unknown): void {
    if (ticket instanceof LocalTicket) ticket.controller.release?.(ticket.inner);
  }

  async close(): Promise<void> {
    this.#timer.cancel();
    if (this.#inflight) await this.#inflight;
    if (!this.#closed && this.#mode === 'shared') {
      this.#closed = true;
      this.#timer.stop();
      // Lease 0 leaves the fleet: the share goes back at once, not after three lease periods.
      this.#inflight = this.#call(-1, 0);
      await this.#inflight;
    }
    this.#closed = true;
    this.#timer.stop();
  }

  #acquireLocal(signal: AbortSignal | undefined): unknown {
    const local = this.#localController();
    const inner = local.acquire(signal);
    return inner instanceof Promise ? inner.then((t) => new LocalTicket(local, t)) : new LocalTicket(local, inner);
  }

  #localController(): AdaptiveRate {
    if (!this.#local) {
      const share = this.#share;
      const { minRatePerSecond: lo, maxRatePerSecond: hi } = this.#law;
      // Seeded with the last known share: the fleet's rate divided as it was when Redis went away.
      const seed = Number.isFinite(share) ? Math.min(hi, Math.max(lo, share)) : undefined;
      this.#local = adaptiveRate({ ...this.#localOptions, initialRatePerSecond: seed, clock: this.#clock });
    }
    return this.#local;
  }

  #waitMs(now: number): number {
    if (this.#mode === 'local') return 0;
    // Until the first lease answers (or fails, within timeoutMs), requests wait for it.
    if (this.#mode === 'syncing') return this.#timeoutMs;
    // Back from a fallback: the local controller's waiters go first, so the two never pace at once.
    if (this.#local && this.#local.waiting > 0) return 20;
    if (!Number.isFinite(this.#share)) return 0;
    if (!(this.#share > 0)) return this.#leaseMs;
    return this.#next - now;
  }

  #grant(now: number, woken: boolean): unknown {
    if (this.#mode === 'local') return FORWARD;
    this.#granted.add(now);
    if (this.#start === Number.POSITIVE_INFINITY) this.#start = now;
    if (this.#gate.waiting > 0) this.#saturated = true;
    if (Number.isFinite(this.#share)) {
      // A late wake-up keeps its slot (up to catchUpMs); the first request after a silence starts one.
      // Alone in the fleet, the process's spacing is what the limiter sees, and adaptiveRate's rule
      // holds; with other members, their requests come between ours at any distance, our spacing
      // protects nothing, and making up less for late timers would only lose rate (measured: a
      // fleet of 5 sent 36-43 of its 50 r/s at load 6 with at most margin × the spacing made up,
      // and 39-42 of 50 at load 9-13 with 25 ms, its event loops often later than that). So a
      // wake-up up to one spacing late keeps its slot: at most one request early, per process.
      if (this.#share > 0) {
        const interval = 1000 / this.#share;
        const catchUp = this.#members <= 1 ? catchUpMs(interval, this.#law.margin) : Math.max(CATCH_UP_MS, interval);
        const earliest = woken && this.#next >= now - catchUp ? now - catchUp : now;
        this.#next = Math.max(this.#next, earliest) + interval;
      }
    }
    return new SharedTicket(this.#epoch);
  }

  /** The lease's renewal: only while there is traffic (an idle process lets its lease lapse). */
  #renew(): void {
    if (this.#clock.now() - this.#activeSince > 3 * this.#leaseMs && this.#mode === 'shared') return;
    this.#send(-1);
  }

  #send(cutEpoch: number): void {
    if (this.#closed) return;
    if (this.#inflight) {
      // The throttle goes with the call after this one, unless that call's answer makes it old news.
      if (cutEpoch >= 0) this.#pendingCut = cutEpoch;
      return;
    }
    const wait = this.#nextTryMs - this.#clock.now();
    if (wait > 0) {
      this.#timer.arm(wait);
      return;
    }
    this.#timer.cancel();
    this.#inflight = this.#call(cutEpoch, this.#leaseMs);
  }

  async #call(cutEpoch: number, leaseMs: number): Promise<void> {
    const stop = new AbortController();
    const now = this.#clock.now();
    // Redis sums the members' rates and successes: the fleet's accepted rate is known once every
    // member's covers a second and the fleet's successes are 10.
    const { used, accepted, successes, spanMs, refused } = memberReport(
      this.#granted,
      this.#delivered,
      this.#throttled,
      now,
      this.#start,
    );
    const saturated = this.#saturated || this.#gate.waiting > 0;
    const succeeded = this.#succeeded;
    this.#saturated = false;
    this.#succeeded = false;
    const args = [
      this.#id,
      saturated ? '1' : '0',
      String(used),
      String(accepted),
      String(leaseMs),
      String(cutEpoch),
      finite(this.#fleet),
      ...this.#lawArgs,
      succeeded ? '1' : '0',
      String(successes),
      String(spanMs),
      refused ? '1' : '0',
    ];
    try {
      const reply = await Promise.race([
        this.#run(args),
        this.#clock.sleep(this.#timeoutMs, stop.signal).then(() => {
          throw new Timeout(`${this.#where}: Redis did not answer within ${this.#timeoutMs} ms`);
        }),
      ]);
      const [share, fleet, epoch, short, members] = parseReply(this.#where, reply);
      this.#share = share < 0 ? Number.POSITIVE_INFINITY : share;
      // A smaller share takes effect now; a share of 0 (everything leased to others) waits for the next lease.
      const gap = this.#share > 0 ? 1000 / this.#share : this.#leaseMs;
      if (this.#next > now + gap) this.#next = now + gap;
      this.#fleet = fleet < 0 ? Number.POSITIVE_INFINITY : fleet;
      this.#epoch = epoch;
      this.#short = short === 1;
      this.#members = members;
      this.#nextTryMs = Number.NEGATIVE_INFINITY;
      this.#reconnect = undefined;
      const was = this.#mode;
      this.#mode = 'shared';
      if (was === 'local') {
        this.#resyncs++;
        this.#emit({ type: 'resync', error: undefined, atMs: this.#clock.now() });
      }
    } catch (error) {
      this.#errors++;
      this.#reconnect ??= RECONNECT.start();
      this.#nextTryMs = this.#clock.now() + this.#reconnect.next();
      if (this.#mode !== 'local') {
        this.#mode = 'local';
        this.#fallbacks++;
        this.#localController();
        this.#emit({ type: 'fallback', error, atMs: this.#clock.now() });
      }
    } finally {
      stop.abort();
      this.#inflight = undefined;
      this.#readyResolve();
      this.#gate.poke();
      if (!this.#closed) {
        const cut = this.#pendingCut;
        this.#pendingCut = -1;
        if (this.#mode === 'shared' && cut >= this.#epoch) this.#send(cut);
        else if (this.#mode === 'local') this.#timer.arm(Math.max(0, this.#nextTryMs - this.#clock.now()));
        // A share below what was asked for is asked again soon: it grows as other leases shrink.
        else this.#timer.arm(this.#short ? Math.min(100, this.#leaseMs) : this.#leaseMs);
      }
      if (this.#mode === 'shared' && this.#local && this.#local.waiting === 0) this.#local = undefined;
    }
  }

  async #run(args: readonly string[]): Promise<unknown> {
    this.#commands++;
    this.#sha ??= await scriptSha(RATE_SCRIPT);
    try {
      return await this.#scripts.evalSha(this.#sha, this.#keys, args);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      this.#commands++;
      return await this.#scripts.eval(RATE_SCRIPT, this.#keys, args);
    }
  }

  #emit(event: SharedEvent): void {
    try {
      this.#onEvent?.(Object.freeze(event));
    } catch {
      // A listener's throw must not break the controller every request of the process shares.
    }
  }
}

/** The script's reply: five numbers as strings; anything else is a failed call, never stored. */
function parseReply(where: string, reply: unknown): [number, number, number, number, number] {
  if (Array.isArray(reply) && reply.length === 5) {
    const xs = reply.map((x) => (typeof x === 'string' || typeof x === 'number' ? Number(x) : Number.NaN));
    const [share, fleet, epoch, short, members] = xs as [number, number, number, number, number];
    if (
      xs.every(Number.isFinite) &&
      (share >= 0 || share === -1) &&
      (fleet >= 0 || fleet === -1) &&
      Number.isSafeInteger(epoch) &&
      epoch >= 0 &&
      (short === 0 || short === 1) &&
      Number.isSafeInteger(members) &&
      members >= 0
    ) {
      return [share, fleet, epoch, short, members];
    }
  }
  throw new TypeError(`${where}: Redis answered ${show(reply)}; expected the rate script's five numbers`);
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
 * `leaseMs` plus one round trip (≤ `timeoutMs`) late; its own throttles reach Redis at once.
 *
 * **Redis failing never fails a request:** every call races `timeoutMs` (100); a call that fails
 * or times out switches the process to a local `adaptiveRate` seeded with its last share
 * (`mode: 'local'`, event `'fallback'`), Redis is tried again on ebb's own backoff (100 ms doubling
 * to 2 s, full jitter), and the first answer resyncs (event `'resync'`). Before the first answer,
 * requests wait for it (at most `timeoutMs`).
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
  const where = 'sharedRate()';
  const o = optionsObject(where, options) as SharedRateOptions;
  checkKeys(where, o, [
    ...LAW_KEYS,
    'maxServerWaitMs',
    'client',
    'name',
    'prefix',
    'timeoutMs',
    'leaseMs',
    'onEvent',
    'clock',
  ]);
  // The local twin checks the law's options (and is what a fallback runs).
  validateAs(where, 'adaptiveRate()', () => adaptiveRate(pick(o as never, [...LAW_KEYS, 'maxServerWaitMs'])));
  const law = {
    initialRatePerSecond: o.initialRatePerSecond ?? o.maxRatePerSecond ?? Number.POSITIVE_INFINITY,
    decreaseFactor: o.decreaseFactor ?? 0.5,
    coolOffMs: o.coolOffMs ?? 1000,
    maxCoolOffMs: o.maxCoolOffMs ?? Math.max(8000, o.coolOffMs ?? 1000),
    margin: o.margin ?? 0.05,
    increase: o.increase ?? 0.1,
    minRatePerSecond: o.minRatePerSecond ?? 1,
    maxRatePerSecond: o.maxRatePerSecond ?? Number.POSITIVE_INFINITY,
  };
  const name = o.name;
  if (typeof name !== 'string' || name === '' || /[{}]/.test(name)) {
    invalid(where, 'name', name, 'a non-empty string without { or }', "For example 'payments-api'.");
  }
  const prefix = o.prefix === undefined ? 'ebb' : o.prefix;
  if (typeof prefix !== 'string' || /[{}]/.test(prefix)) {
    invalid(where, 'prefix', prefix, 'a string without { or }', "Leave it out for 'ebb'.");
  }
  // The hash tag {name}: the state, the leases and their expiry share one Cluster slot.
  const key = `${prefix === '' ? '' : `${prefix}:`}{${name}}:rate`;
  return new Shared(where, o, law, key);
}
