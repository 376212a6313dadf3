import type { BackoffPolicy } from '../backoff/backoff.js';
import { exponential } from '../backoff/exponential.js';
import { equalJitter } from '../backoff/jitter-equal.js';
import { describe, isLocalRefusal } from '../core/boundary.js';
import type { Clock } from '../core/clock.js';
import { type Random, randomOption } from '../core/random.js';
import { count, inRange, invalid, mistyped, nonNegative, optionsObject } from '../core/validate.js';
import type { AttemptContext } from '../retry/contexts.js';
import { defaultIsFailure, EBB_ERROR, type FailureVerdict } from '../retry/errors.js';
import { type Judged, judgedExecute, recordedVerdict } from '../retry/judged-guard.js';
import type { IsFailure, Outcome } from '../retry/options.js';
import { BREAKER, type FleetRule, type KeyReport, PROBE_OPS, periodFor } from './breaker-law.js';
import { sharedClockOption } from './repaired-clock.js';
import { checkRedisKeys } from './validate-as.js';

export type { SharedBreakerInspection } from './breaker-wire.js';

import { BREAKER_SCRIPT } from './breaker-script.js';
import {
  type CheckedReply,
  parseInspection,
  parseReply,
  reportArgs,
  type SharedBreakerInspection,
} from './breaker-wire.js';
import { isNoScript, type RedisScripts, redisScripts, scriptSha } from './client.js';
import {
  listenerOption,
  msOption,
  newGeneration,
  processId,
  Reconnect,
  type SharedEvent,
  type SharedListener,
  type SharedMode,
  sendEvent,
  sharedKey,
  Timeout,
} from './protocol.js';
import { Rearm } from './rearm.js';
import { KeyState, SharedTicket } from './shared-breaker-key.js';

/** Options of {@link sharedCircuitBreaker}. Durations in milliseconds. */
export interface SharedCircuitBreakerOptions<T = unknown> {
  /** The caller's client: node-redis, ioredis or a {@link RedisScripts}. Required. */
  readonly client: unknown;
  /** The breaker's name; its keys are `<prefix>:{<name>}:breaker:<key>…`, one Cluster slot. Required. */
  readonly name: string;
  /** Key prefix, default `'ebb'`. */
  readonly prefix?: string;
  /** Longest wait for one Redis call, after which the member follows its local breaker. Default 100. */
  readonly commandTimeoutMs?: number;
  /** The fleet opens when this share of its calls in the window failed, from 0 (exclusive) to 1. Default 0.5. */
  readonly failureRate?: number;
  /** Calls the fleet's window must hold first (and a member's own, for its local breaker). Default 20. */
  readonly minCalls?: number;
  /**
   * Members whose own calls meet `failureRate` needed to open the fleet's breaker. Default 2: one
   * member whose every call fails — partitioned from a service the others reach — opens only its
   * own local breaker. 1, with `memberFailureRate` 0, lets any member open it for everyone.
   */
  readonly minMembers?: number;
  /**
   * The fleet opens only when more than this share of its members — those that reported within
   * `windowMs` — see `failureRate` in their own calls, from 0 up to, not including, 1. Default
   * 0.5, a majority: members cut off from a service that answers the others (a partition, a bad
   * route, a broken host) open only their own local breakers while they are half the fleet or
   * fewer, however many they are; a real outage, seen by every member, opens the fleet as before.
   * 0: `minMembers` alone decides.
   */
  readonly memberFailureRate?: number;
  /** The window of the failure rate: each member's calls of the last this many ms. Default 10 000. */
  readonly windowMs?: number;
  /** Probes let through at once while half-open, fleet-wide (one per member at most). Default 1. */
  readonly maxHalfOpenProbes?: number;
  /** Successful probes needed to close. Default 1. */
  readonly successesToClose?: number;
  /**
   * How long a probe lease lasts: a prober that neither reports nor hands it back (it died, it
   * hangs) counts as a failed probe when it lapses, and the fleet reopens for the next period.
   * Default: the open period before the probe.
   */
  readonly probeTimeoutMs?: number;
  /**
   * The open periods: the fleet's first opening waits the first step, each failed probe the next
   * (fleet-wide); closing starts over. The member that opens the fleet proposes its draws. Default:
   * 5 s doubling to 60 s, equal jitter — `circuitBreaker`'s.
   */
  readonly openBackoff?: BackoffPolicy;
  /** A success that took longer than this counts as a failure. Default `Infinity` (off). */
  readonly slowCallMs?: number;
  /**
   * What counts as a failure, as `circuitBreaker`'s: judges each call's outcome
   * (`{ ok: true, value } | { ok: false, error }`) and answers `true`, `false` or `'throttled'`
   * (counted as a failure), or a promise of it in a pipeline (`record()` needs the answer at
   * once). An error it calls no failure counts for nothing; a value it calls one counts as a
   * failed call (a 503 `Response`). Default `defaultIsFailure`: every error but an abort or a bug
   * in the caller's code; no value.
   */
  readonly isFailure?: IsFailure<T>;
  /**
   * How often a member with traffic reports its window (one `EVALSHA` for up to 32 keys), and so
   * learns the fleet's state at the latest: every `reportMs` while its calls succeed, every
   * `reportMs / 4` while its window holds failures. Default 1000; at most `windowMs / 2`, so that a
   * member with traffic never drops off the fleet's roster between two reports.
   */
  readonly reportMs?: number;
  /** Keys a member keeps state for; the least recently used beyond it is forgotten. Default 1000. */
  readonly maxKeys?: number;
  /** A key's state in Redis lapses after this long without a report. Default 600 000 (10 min). */
  readonly keyTtlMs?: number;
  /** Called on fallback, resync, state lost and repair (see `SharedEvent`). A throw goes no further. */
  readonly onEvent?: (event: SharedEvent) => void;
  /**
   * Time source. Default the unref'd system clock. A reading that throws or is not a finite
   * number stands for the last good one, a clock set back goes on from where it was, and a
   * sleep that fails waits on a host timer: nothing a broken clock does reaches Redis or the host.
   */
  readonly clock?: Clock;
  /** Randomness for the open periods' jitter. Default `Math.random`. */
  readonly random?: Random;
}

/** A guard of one key: what a pipeline takes (`pipeline([retrying(), breaker.forKey('api.example.com')])`). */
export interface SharedBreakerGuard {
  acquire(signal?: AbortSignal, attempt?: number): unknown;
  /** Counts a call's outcome: `isFailure` judges `detail` (the value or the error), as the pipeline does. */
  record(outcome: Outcome, ticket?: unknown, detail?: unknown): void;
  release(ticket?: unknown): void;
  /** The guard as a pipeline mechanism: admits the call, runs it, judges its outcome (a value too) by `isFailure`. */
  execute<V>(next: (context: AttemptContext) => Promise<V>, context: AttemptContext): Promise<V>;
}

/** Counters of a shared breaker. A fresh object on each read. */
export interface SharedBreakerStats {
  readonly mode: SharedMode;
  /** Redis commands sent: one `EVALSHA` per report or claim, plus an `EVAL` when the server lacked the script. */
  readonly commands: number;
  /** Calls admitted or refused (`acquire`). */
  readonly calls: number;
  /** Calls refused: by the fleet's state, or by this member's local breaker. */
  readonly refusedByFleet: number;
  readonly refusedByLocal: number;
  readonly errors: number;
  readonly fallbacks: number;
  readonly resyncs: number;
  readonly repairs: number;
  readonly stateLosses: number;
  /** Keys held in memory. */
  readonly keys: number;
}

/** The breaker {@link sharedCircuitBreaker} returns: a guard of the key `''`, and one per key. */
export interface SharedCircuitBreaker extends SharedBreakerGuard {
  /** The guard of `key` (a host, a route, a tenant): each key is its own breaker, fleet-wide. */
  forKey(key: string): SharedBreakerGuard;
  /** What this member does now for `key` (default `''`): `'closed'`, `'open'` or `'half-open'`, by the fleet's state or its local breaker's. */
  stateOf(key?: string): 'closed' | 'open' | 'half-open';
  readonly mode: SharedMode;
  readonly stats: SharedBreakerStats;
  /** Sends the pending reports now (before a process exits, or in tests). */
  flush(): Promise<void>;
  /**
   * Reads `key`'s fleet state in Redis (default `''`) without changing it: one `EVALSHA` that
   * writes nothing, takes no probe lease, sends no evidence, and keeps no state of the key in this
   * member. Rejects if Redis fails, answers out of shape, or does not answer within `commandTimeoutMs`.
   */
  inspect(key?: string): Promise<SharedBreakerInspection>;
  /**
   * Sets `key`'s fleet state (default `''`) back to closed with a new generation, its evidence and
   * probe leases dropped, while members run: this member goes on from it at once; each other
   * member hears the new generation at its next report (event `'state-lost'`), closes its local
   * breaker and goes on. Rejects if Redis fails or does not answer within `commandTimeoutMs`.
   */
  reset(key?: string): Promise<void>;
  /** Stops the timer; the member's evidence lapses from the fleet after `windowMs`. */
  close(): Promise<void>;
}

const defaultOpenBackoff = /* @__PURE__ */ exponential({
  initialDelayMs: 5_000,
  maxDelayMs: 60_000,
  jitter: equalJitter,
  maxAttempts: Infinity,
});

const OUTCOMES: readonly string[] = ['success', 'throttled', 'failure'];

/** The largest number a `Random` returns: 1 − 2^-53. */
const LARGEST_DRAW = 1 - 2 ** -53;

/** A key's entries that say nothing of a key: what 'reset' sends ('inspect' adds its longest period). */
const CLOSED: KeyReport = {
  generation: 0,
  epoch: -1,
  calls: 0,
  failures: 0,
  op: PROBE_OPS.none,
  leaseId: 0,
  seed: { s: 0, n: 0, remainingMs: 0, om: 0 },
  periods: [],
  longestMs: 0,
};

let knownSha: string | undefined;
/**
 * The script's SHA-1, computed once per process. The digest runs off the main thread, so a
 * simulation awaits it before its virtual time starts: no member's first report then waits on a
 * thread, and equal seeds give equal runs. @internal
 */
export async function breakerScriptSha(): Promise<string> {
  knownSha ??= await scriptSha(BREAKER_SCRIPT);
  return knownSha;
}

/** The default verdict: `defaultIsFailure`'s (no value is a failure; an abort or a bug in the caller's code is none). */
const judge = (ok: boolean, detail: unknown): FailureVerdict => !ok && defaultIsFailure({ ok, error: detail });

/**
 * Refusals by a mechanism inside the breaker — a full limit or bulkhead, an inner breaker,
 * `adaptiveThrottle()`'s local rejection — known by their codes: the call never reached the
 * service, so it counts for nothing whatever `isFailure` said (as in `circuitBreaker`).
 */
const counted = (v: FailureVerdict, ok: boolean, detail: unknown): FailureVerdict =>
  !ok && isLocalRefusal(detail) ? false : v;

/** The options 1.0 renamed, with what to write instead (the messages `circuitBreaker` gives). */
const RENAMED: Readonly<Record<string, string>> = {
  minimumCalls: 'use `minCalls`.',
  halfOpenProbes: 'use `maxHalfOpenProbes`.',
  minimumMembers: 'use `minMembers`.',
};

/** A refusal, recognised by `isBrokenCircuitError` (ebb/resilience) by its code `EBB_CIRCUIT_OPEN`. */
class FleetRefusal extends Error {
  override readonly name = 'BrokenCircuitError';
  readonly code = 'EBB_CIRCUIT_OPEN';
  constructor(
    readonly state: 'open' | 'half-open',
    readonly retryAfterMs: number,
    readonly by: 'fleet' | 'local',
    readonly key: string,
  ) {
    super(
      state === 'open'
        ? `The circuit${key === '' ? '' : ` of ${key}`} is open (${by === 'fleet' ? 'fleet-wide' : 'this member'}): calls fail fast for another ${Math.ceil(retryAfterMs)} ms.`
        : `The circuit${key === '' ? '' : ` of ${key}`} is half-open and its probe is out (${by === 'fleet' ? 'fleet-wide' : 'this member'}): calls fail fast until it ends.`,
    );
  }
  get [EBB_ERROR](): string {
    return this.code;
  }
}

class Breaker implements SharedCircuitBreaker {
  readonly #where: string;
  readonly #scripts: RedisScripts;
  readonly #base: string;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #reportMs: number;
  readonly #maxKeys: number;
  readonly #keyTtlMs: number;
  readonly #rule: FleetRule;
  readonly #localRule: FleetRule;
  readonly #slowCallMs: number;
  readonly #isFailure: IsFailure | undefined;
  readonly #openBackoff: BackoffPolicy;
  readonly #random: Random | undefined;
  readonly #onEvent: SharedListener;
  readonly #id = processId();
  readonly #keys = new Map<string, KeyState>();
  readonly #timer: Rearm;
  #due = Number.POSITIVE_INFINITY;
  #periods: number[] | undefined;
  #envelope: number | undefined;
  #seq = 0;
  /** The latest command answered: an older one's failure arriving after it changes no mode. */
  #answeredSeq = 0;
  #sha: string | undefined;
  #mode: SharedMode = 'syncing';
  #reporting: Promise<void> | undefined;
  readonly #reconnect = new Reconnect();
  #closed = false;
  #s = {
    commands: 0,
    calls: 0,
    refusedByFleet: 0,
    refusedByLocal: 0,
    errors: 0,
    fallbacks: 0,
    resyncs: 0,
    repairs: 0,
    stateLosses: 0,
  };

  constructor(where: string, o: SharedCircuitBreakerOptions, base: string) {
    this.#where = where;
    this.#base = base;
    this.#scripts = redisScripts(o.client, where);
    this.#clock = sharedClockOption(where, o.clock);
    this.#timeoutMs = msOption(where, 'commandTimeoutMs', o.commandTimeoutMs, 100, 'For example 100.');
    const failureRate = inRange(where, 'failureRate', o.failureRate, 0.5, 0, 1, 'For example 0.5 for half the calls.');
    if (failureRate === 0) invalid(where, 'failureRate', 0, 'a number above 0, up to 1', 'For example 0.5.');
    const minCalls = count(where, 'minCalls', o.minCalls, 20, 1, false, 'For example 20.');
    const minMembers = count(where, 'minMembers', o.minMembers, 2, 1, false, 'For example 2.');
    const memberFailureRate = inRange(
      where,
      'memberFailureRate',
      o.memberFailureRate,
      0.5,
      0,
      1,
      'For example 0.5 for a majority of the members.',
    );
    if (memberFailureRate === 1) {
      invalid(
        where,
        'memberFailureRate',
        1,
        'a number from 0 up to, not including, 1',
        'For example 0.5 for a majority of the members.',
      );
    }
    const windowMs = Math.ceil(nonNegative(where, 'windowMs', o.windowMs, 10_000, false, 'For example 10000.'));
    if (windowMs < 10 || windowMs > BREAKER.dayMs) {
      invalid(where, 'windowMs', o.windowMs, 'a number from 10 to 86400000 (a day)', 'For example 10000.');
    }
    const maxHalfOpenProbes = count(where, 'maxHalfOpenProbes', o.maxHalfOpenProbes, 1, 1, false, 'For example 1.');
    if (maxHalfOpenProbes > BREAKER.maxProbes) {
      invalid(where, 'maxHalfOpenProbes', maxHalfOpenProbes, `at most ${BREAKER.maxProbes}`, 'For example 1.');
    }
    const successesToClose = count(where, 'successesToClose', o.successesToClose, 1, 1, false, 'For example 1.');
    let probeTimeoutMs = 0;
    if (o.probeTimeoutMs !== undefined) {
      const fix = 'For example 10000; leave it out for the open period before the probe.';
      probeTimeoutMs = Math.ceil(nonNegative(where, 'probeTimeoutMs', o.probeTimeoutMs, 0, false, fix));
      if (probeTimeoutMs < 1 || probeTimeoutMs > BREAKER.dayMs) {
        invalid(where, 'probeTimeoutMs', o.probeTimeoutMs, 'a number from 1 to 86400000 (a day)', fix);
      }
    }
    this.#rule = {
      failureRate,
      minCalls,
      minMembers,
      windowMs,
      maxHalfOpenProbes,
      successesToClose,
      probeTimeoutMs,
      memberFailureRate,
    };
    // The local breaker: the same rule on this member's evidence alone, one probe.
    this.#localRule = { ...this.#rule, minMembers: 1, memberFailureRate: 0, maxHalfOpenProbes: 1 };
    this.#slowCallMs = nonNegative(where, 'slowCallMs', o.slowCallMs, Infinity, true, 'For example 2000.');
    const openBackoff = o.openBackoff ?? defaultOpenBackoff;
    if (typeof openBackoff !== 'object' || openBackoff === null || typeof openBackoff.start !== 'function') {
      mistyped(where, 'openBackoff', openBackoff, 'a backoff policy', 'Build one with exponential().');
    }
    this.#openBackoff = openBackoff;
    if (o.isFailure !== undefined && typeof o.isFailure !== 'function') {
      mistyped(where, 'isFailure', o.isFailure, "a function (outcome, context) => true, false or 'throttled'");
    }
    this.#isFailure = o.isFailure;
    this.#reportMs = nonNegative(where, 'reportMs', o.reportMs, 1000, false, 'For example 1000.');
    if (this.#reportMs < 10 || this.#reportMs > 3_600_000) {
      invalid(where, 'reportMs', o.reportMs, 'a number from 10 to 3600000 (an hour)', 'For example 1000.');
    }
    // A member stays on the fleet's roster for windowMs after each report: two reports a window at least.
    if (this.#reportMs > windowMs / 2) {
      invalid(
        where,
        'reportMs',
        o.reportMs,
        `at most windowMs / 2 (${windowMs / 2})`,
        "For example windowMs / 10: a member is on the fleet's roster for windowMs after each report.",
      );
    }
    this.#maxKeys = count(where, 'maxKeys', o.maxKeys, 1000, 1, false, 'For example 1000.');
    this.#keyTtlMs = nonNegative(where, 'keyTtlMs', o.keyTtlMs, 600_000, false, 'For example 600000.');
    if (this.#keyTtlMs < windowMs || this.#keyTtlMs > BREAKER.dayMs) {
      invalid(
        where,
        'keyTtlMs',
        o.keyTtlMs,
        `a number from windowMs (${windowMs}) to 86400000 (a day)`,
        'For example 600000.',
      );
    }
    this.#onEvent = listenerOption(where, o.onEvent);
    this.#random = randomOption(where, o.random);
    this.#timer = new Rearm(this.#clock, () => {
      this.#due = Number.POSITIVE_INFINITY;
      void this.#tick();
    });
  }

  get mode(): SharedMode {
    return this.#mode;
  }

  get stats(): SharedBreakerStats {
    return { mode: this.#mode, ...this.#s, keys: this.#keys.size };
  }

  acquire(_signal?: AbortSignal, _attempt?: number): unknown {
    return this.#acquire(this.#key(''));
  }

  record(outcome: Outcome, ticket?: unknown, detail?: unknown): void {
    this.#record(outcome, ticket, detail);
  }

  release(ticket?: unknown): void {
    this.#release(ticket);
  }

  execute<V>(next: (context: AttemptContext) => Promise<V>, context: AttemptContext): Promise<V> {
    return judgedExecute(this.#judged(''), next, context);
  }

  forKey(key: string): SharedBreakerGuard {
    this.#checkKey('forKey', key);
    const judged = this.#judged(key);
    return {
      acquire: () => this.#acquire(this.#key(key)),
      record: (outcome, ticket, detail) => this.#record(outcome, ticket, detail),
      release: (ticket) => this.#release(ticket),
      execute: (next, context) => judgedExecute(judged, next, context),
    };
  }

  stateOf(key = ''): 'closed' | 'open' | 'half-open' {
    const k = this.#keys.get(key);
    if (!k) return 'closed';
    const now = this.#clock.now();
    const fs = this.#mode === 'shared' ? k.fleetState(now) : undefined;
    const s = fs !== undefined && fs !== 0 ? fs : k.localState(now);
    return s === 0 ? 'closed' : s === 1 ? 'open' : 'half-open';
  }

  async inspect(key = ''): Promise<SharedBreakerInspection> {
    this.#checkKey('inspect', key);
    const keys = this.#redisKeysOf(key);
    // One key's entries, for the longest open period: inspect() lists what this member would shorten.
    const bound: KeyReport = { ...CLOSED, longestMs: this.#longest() };
    const args = reportArgs('inspect', this.#id, newGeneration(), this.#rule, this.#keyTtlMs, 0, [bound]);
    return parseInspection(this.#where, keys[0] as string, await this.#bounded(this.#run(keys, args)));
  }

  async reset(key = ''): Promise<void> {
    this.#checkKey('reset', key);
    const args = reportArgs('reset', this.#id, newGeneration(), this.#rule, this.#keyTtlMs, 0, [CLOSED]);
    const reply = await this.#bounded(this.#run(this.#redisKeysOf(key), args));
    const r = parseReply(this.#where, reply, 1)[0] as CheckedReply;
    // This member goes on from the reset state at once (its own reset is no lost state to it).
    const k = this.#keys.get(key);
    if (!k) return;
    const now = this.#clock.now();
    k.fleetWindow.clear();
    k.mirror({ s: 0, n: 0, remainingMs: 0, om: 0 }, now);
    k.fleet = r;
    k.heardAt = now;
    k.openUntil = 0;
    k.nextClaimAt = Number.NEGATIVE_INFINITY;
    k.yieldAt = -1;
    this.#periods = undefined;
  }

  #checkKey(method: string, key: unknown): void {
    if (typeof key !== 'string' || key.length > 200 || /[{}]/.test(key)) {
      mistyped(`${this.#where}.${method}()`, 'key', key, 'a string of at most 200 characters without { or }');
    }
  }

  /** The three Redis keys of a breaker key: its state, the members' snapshots, their lapse times. */
  #redisKeysOf(name: string): string[] {
    const h = name === '' ? this.#base : `${this.#base}:${name}`;
    return [h, `${h}:members`, `${h}:lapses`];
  }

  async flush(): Promise<void> {
    if (this.#reporting) await this.#reporting;
    await this.#tick();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#timer.stop();
    if (this.#reporting) await this.#reporting;
  }

  /** The state of `name`, made on first use; the least recently used beyond `maxKeys` is forgotten. */
  #key(name: string): KeyState {
    const now = this.#clock.now();
    let k = this.#keys.get(name);
    if (k) this.#keys.delete(name);
    else k = new KeyState(name, this.#redisKeysOf(name), this.#rule.windowMs, now);
    this.#keys.set(name, k);
    if (this.#keys.size > this.#maxKeys) {
      for (const [n, old] of this.#keys) {
        if (old.fleetProbes === 0 && !old.claiming && old.pending === undefined) {
          this.#keys.delete(n);
          break;
        }
      }
    }
    k.lastUsed = now;
    return k;
  }

  /** The open periods this member proposes for openings 1, 2, …: drawn once per state change it hears. */
  #proposals(): number[] {
    this.#periods ??= this.#draw(this.#random);
    return this.#periods;
  }

  /**
   * The longest open period this member would ever propose, which bounds the fleet's open state
   * for it (breaker-law.ts `boundOpen`): its `openBackoff` run with the largest draw a `Random`
   * can give (1 − 2^-53), so that each jittered step is at the top of its range, over the
   * openings it proposes for — and never below one of its own proposals (a policy whose waits do
   * not grow with its draws). Not the longest of its proposals: those are draws, and a member of
   * the same options can draw longer; bounded by its own draws, each member would shorten the
   * others' periods in a fleet whose options agree.
   */
  #longest(): number {
    this.#envelope ??= Math.max(...this.#draw(() => LARGEST_DRAW));
    return Math.max(this.#envelope, ...this.#proposals());
  }

  /** `openBackoff`'s first waits with `random`, each within [1 ms, a day]; 5 s when it gives none. */
  #draw(random: Random | undefined): number[] {
    const run = this.#openBackoff.start(random);
    const out: number[] = [];
    for (let i = 0; i < BREAKER.maxPeriods; i++) {
      const ms: unknown = run.next();
      if (ms === -1) break;
      if (typeof ms !== 'number' || !(ms >= 0) || !Number.isFinite(ms)) {
        throw new RangeError(
          `${this.#where}: openBackoff's next() returned ${describe(ms)}; expected a finite number of milliseconds >= 0, or -1 to keep the last period.`,
        );
      }
      out.push(Math.min(BREAKER.dayMs, Math.max(1, Math.round(ms))));
    }
    if (out.length === 0) out.push(5000);
    return out;
  }

  #acquire(k: KeyState): unknown {
    this.#s.calls++;
    const now = this.#clock.now();
    k.active = true;
    this.#arm(this.#mode === 'syncing' && this.#seq === 0 ? 0 : this.#reportMs);
    if (this.#mode === 'shared') {
      const fs = k.fleetState(now);
      if (fs === 1) {
        this.#s.refusedByFleet++;
        throw new FleetRefusal('open', k.fleetRemainingMs(now), 'fleet', k.name);
      }
      if (fs === 2) return this.#fleetProbe(k, now);
    }
    return this.#localAdmit(k, now);
  }

  #localAdmit(k: KeyState, now: number): SharedTicket {
    const fleetEpoch = k.fleet?.epoch ?? -1;
    const ls = k.localState(now);
    if (ls === 0) return new SharedTicket(k, 'call', now, fleetEpoch, k.local.state.e, -1);
    this.#s.refusedByLocal++;
    if (ls === 1) {
      // The local breaker judged the service down for this member: evidence for the fleet, sent
      // as soon as failures are (and the member hears a fleet opening as soon).
      k.fleetWindow.add(true, now);
      this.#arm(this.#reportMs / 4);
      throw new FleetRefusal('open', Math.max(0, k.local.state.ou - now), 'local', k.name);
    }
    const id = k.newLeaseId();
    const r = k.stepLocal(this.#localRule, this.#proposals(), this.#longest(), now, PROBE_OPS.claim, id);
    if (r.lease === id) {
      this.#s.refusedByLocal--;
      return new SharedTicket(k, 'local-probe', now, fleetEpoch, r.epoch, id);
    }
    throw new FleetRefusal(r.state === 1 ? 'open' : 'half-open', r.remainingMs, 'local', k.name);
  }

  /** Half-open fleet-wide: the member probes if it holds the lease, else claims it (one command), else is refused. */
  #fleetProbe(k: KeyState, now: number): SharedTicket | Promise<SharedTicket> {
    if (k.holdsLease(now) && k.fleetProbes === 0) {
      k.fleetProbes++;
      return new SharedTicket(k, 'fleet-probe', now, k.fleet?.epoch ?? -1, k.local.state.e, k.fleet?.lease ?? -1);
    }
    // After its own probe failed, or when its own breaker had opened well before the fleet's, the
    // member lets the others probe first for a report period: a member cut off from a healthy
    // service would otherwise win and fail every probe.
    const halfOpenSince = k.openUntil;
    if ((k.fleet?.openings === k.yieldAt || k.suspect) && now < halfOpenSince + this.#reportMs) {
      k.nextClaimAt = halfOpenSince + this.#reportMs;
    }
    if (k.claiming || now < k.nextClaimAt) {
      this.#s.refusedByFleet++;
      throw new FleetRefusal('half-open', Math.max(0, k.nextClaimAt - now), 'fleet', k.name);
    }
    const id = k.newLeaseId();
    const claim = this.#report([k], { key: k, op: PROBE_OPS.claim, leaseId: id }).then(() => {
      k.claiming = undefined;
      const at = this.#clock.now();
      if (this.#mode !== 'shared') return this.#localAdmit(k, at);
      if (k.fleet?.lease === id && k.fleetProbes === 0) {
        k.fleetProbes++;
        return new SharedTicket(k, 'fleet-probe', at, k.fleet.epoch, k.local.state.e, id);
      }
      if (k.fleetState(at) === 0) return this.#localAdmit(k, at);
      // Another member probes: ask again when its lease lapses, or at the next report period.
      const f = k.fleet;
      const wait = f && f.state !== 0 && f.remainingMs > 0 ? f.remainingMs : f?.leaseRemainingMs || this.#reportMs / 4;
      k.nextClaimAt = at + Math.min(wait, this.#reportMs);
      this.#s.refusedByFleet++;
      throw new FleetRefusal(f?.remainingMs ? 'open' : 'half-open', k.nextClaimAt - at, 'fleet', k.name);
    });
    k.claiming = claim;
    return claim;
  }

  /** How the pipeline runs this breaker for `key`: it admits each call and judges the outcome itself. */
  #judged(key: string): Judged<SharedTicket> {
    return {
      where: this.#where,
      isFailure: this.#isFailure,
      judge,
      acquire: () => this.#acquire(this.#key(key)) as SharedTicket | Promise<SharedTicket>,
      release: (ticket) => this.#release(ticket),
      settle: (ticket, v, ok, detail) => this.#count(ticket, counted(v, ok, detail), ok),
      end: (ticket, ok, detail) => {
        // The verdict comes later: the call ended now, and counts as of now when it does.
        const at = this.#clock.now();
        return (v) => this.#count(ticket, counted(v, ok, detail), ok, at);
      },
    };
  }

  #record(outcome: Outcome, ticket: unknown, detail: unknown): void {
    if (!OUTCOMES.includes(outcome)) {
      if (ticket instanceof SharedTicket) this.#release(ticket);
      mistyped(`${this.#where}.record()`, 'outcome', outcome, "'success', 'throttled' or 'failure'");
    }
    if (!(ticket instanceof SharedTicket) || ticket.done) return;
    let v: FailureVerdict;
    try {
      v = recordedVerdict(this.#where, this.#isFailure, judge, outcome, detail, 1);
    } catch (e) {
      this.#release(ticket);
      throw e;
    }
    this.#count(ticket, counted(v, outcome === 'success', detail), outcome === 'success');
  }

  /**
   * Counts a verdict on the call of `ticket`, which ended at `at`: an error that is no failure
   * counts for nothing (the ticket goes back); a success slower than `slowCallMs` is a failure.
   */
  #count(ticket: SharedTicket, v: FailureVerdict, ok: boolean, at = this.#clock.now()): void {
    if (ticket.done) return;
    if (!ok && v === false) {
      this.#release(ticket);
      return;
    }
    const now = this.#clock.now();
    const failed = v !== false || at - ticket.start > this.#slowCallMs;
    ticket.done = true;
    const k = ticket.key;
    const op = failed ? PROBE_OPS.failure : PROBE_OPS.success;
    if (ticket.kind === 'local-probe') {
      k.stepLocal(this.#localRule, this.#proposals(), this.#longest(), now, op, ticket.leaseId);
      return;
    }
    if (ticket.kind === 'fleet-probe') {
      k.fleetProbes = Math.max(0, k.fleetProbes - 1);
      k.spentLease = ticket.leaseId;
      k.pending = { op, leaseId: ticket.leaseId };
      if (failed) k.yieldAt = (k.fleet?.openings ?? 0) + 1;
      // The member knows the outcome first: its local breaker follows it at once.
      const n = (k.fleet?.openings ?? 0) + 1;
      const om = periodFor(this.#proposals(), n, 5000);
      k.mirror(failed ? { s: 1, n, remainingMs: om, om } : { s: 0, n: 0, remainingMs: 0, om: 0 }, now);
      void this.#report([k]);
      return;
    }
    if (ticket.fleetEpoch === (k.fleet?.epoch ?? -1)) k.fleetWindow.add(failed, now);
    if (ticket.localEpoch === k.local.state.e && k.local.state.s === 0) {
      k.localWindow.add(failed, now);
      k.stepLocal(this.#localRule, this.#proposals(), this.#longest(), now, PROBE_OPS.none, 0);
    }
    if (failed) this.#arm(this.#reportMs / 4);
  }

  #release(ticket: unknown): void {
    if (!(ticket instanceof SharedTicket) || ticket.done) return;
    ticket.done = true;
    const k = ticket.key;
    if (ticket.kind === 'local-probe') {
      k.stepLocal(
        this.#localRule,
        this.#proposals(),
        this.#longest(),
        this.#clock.now(),
        PROBE_OPS.release,
        ticket.leaseId,
      );
    } else if (ticket.kind === 'fleet-probe') {
      k.fleetProbes = Math.max(0, k.fleetProbes - 1);
      k.spentLease = ticket.leaseId;
      k.pending = { op: PROBE_OPS.release, leaseId: ticket.leaseId };
      void this.#report([k]);
    }
  }

  /** Runs the timer `ms` from now, unless it runs sooner already. */
  #arm(ms: number): void {
    if (this.#closed) return;
    const at = this.#clock.now() + ms;
    if (at >= this.#due) return;
    this.#timer.cancel();
    this.#due = at;
    this.#timer.arm(ms);
  }

  /** The periodic report: the keys with calls or a pending result since the last one, up to 32 a command. */
  async #tick(): Promise<void> {
    if (this.#closed && this.#keys.size === 0) return;
    if (this.#reporting) {
      this.#arm(this.#reportMs / 4);
      return;
    }
    const wait = this.#reconnect.waitMs(this.#clock.now());
    if (wait > 0) {
      this.#arm(wait);
      return;
    }
    const due = [...this.#keys.values()].filter((k) => k.active || k.pending !== undefined);
    if (due.length === 0) return;
    const batch = due.slice(-BREAKER.maxKeysPerCall);
    for (const k of batch) k.active = false;
    const work = this.#report(batch);
    this.#reporting = work;
    await work;
    this.#reporting = undefined;
    const now = this.#clock.now();
    const failing = batch.some((k) => k.fleetWindow.sums(now)[1] > 0);
    if (due.length > batch.length || (failing && batch.some((k) => k.active))) this.#arm(this.#reportMs / 4);
  }

  #bounded(work: Promise<unknown>): Promise<unknown> {
    const stop = new AbortController();
    return Promise.race([
      work,
      this.#clock.sleep(this.#timeoutMs, stop.signal).then(() => {
        throw new Timeout(`${this.#where}: Redis did not answer within ${this.#timeoutMs} ms`);
      }),
    ]).finally(() => stop.abort());
  }

  async #run(keys: readonly string[], args: readonly string[]): Promise<unknown> {
    this.#s.commands++;
    this.#sha ??= knownSha ?? (await breakerScriptSha());
    try {
      return await this.#scripts.evalSha(this.#sha, keys, args);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      this.#s.commands++;
      return await this.#scripts.eval(BREAKER_SCRIPT, keys, args);
    }
  }

  /**
   * One command: each key's window since the fleet's epoch it last heard, its pending probe
   * result (sent until a reply comes: the lease goes with the first that arrives, so a result is
   * applied once), or a claim. A failure or a timeout switches the member to its local breakers.
   */
  async #report(keys: readonly KeyState[], claim?: { key: KeyState; op: 1; leaseId: number }): Promise<void> {
    const now = this.#clock.now();
    const periods = this.#proposals();
    const sent = keys.map((k) => (claim && claim.key === k ? claim : k.pending));
    const reports: KeyReport[] = keys.map((k, i) => {
      const [calls, failures] = k.fleetWindow.sums(now);
      const op = sent[i];
      return {
        generation: k.fleet?.generation ?? 0,
        epoch: k.fleet?.epoch ?? -1,
        calls,
        failures,
        op: op?.op ?? PROBE_OPS.none,
        leaseId: op?.leaseId ?? 0,
        seed: k.seed(now),
        periods,
        longestMs: this.#longest(),
      };
    });
    const seq = ++this.#seq;
    const args = reportArgs('', this.#id, newGeneration(), this.#rule, this.#keyTtlMs, seq, reports);
    const redisKeys = keys.flatMap((k) => k.redisKeys);
    let replies: CheckedReply[];
    try {
      replies = parseReply(this.#where, await this.#bounded(this.#run(redisKeys, args)), keys.length);
    } catch (error) {
      this.#s.errors++;
      // A later command was answered already: this failure is old news (a reply lost in a race).
      if (seq < this.#answeredSeq) return;
      this.#reconnect.failed(this.#clock.now());
      // A claim that timed out may have been granted: the lease is handed back with the next report.
      if (claim && claim.key.pending === undefined)
        claim.key.pending = { op: PROBE_OPS.release, leaseId: claim.leaseId };
      if (this.#mode !== 'local') {
        this.#mode = 'local';
        this.#s.fallbacks++;
        this.#emit({ type: 'fallback', error, atMs: this.#clock.now() });
      }
      this.#arm(Math.max(0, this.#reconnect.waitMs(this.#clock.now())));
      return;
    }
    const received = this.#clock.now();
    this.#answeredSeq = Math.max(this.#answeredSeq, seq);
    this.#reconnect.answered();
    if (this.#mode === 'local') {
      this.#s.resyncs++;
      this.#emit({ type: 'resync', error: undefined, atMs: received });
    }
    this.#mode = 'shared';
    keys.forEach((k, i) => {
      if (sent[i] !== undefined && k.pending === sent[i]) k.pending = undefined;
      this.#hear(k, replies[i] as CheckedReply, received);
    });
  }

  /** The fleet's reply about `k`: a new generation or epoch restarts its window, and the local breaker follows a change. */
  #hear(k: KeyState, r: CheckedReply, at: number): void {
    const known = k.fleet;
    if (r.fault) {
      this.#s.repairs++;
      this.#emit({ type: 'repair', error: undefined, atMs: at, ...r.fault });
    } else if (known && known.generation !== r.generation) {
      this.#s.stateLosses++;
      this.#emit({
        type: 'state-lost',
        error: undefined,
        atMs: at,
        key: k.redisKeys[0] as string,
        field: 'generation',
      });
    }
    const changed = !known || known.generation !== r.generation || known.epoch !== r.epoch;
    if (changed && r.state !== 0 && (!known || known.state === 0)) {
      // The fleet opened: a member whose own breaker opened two report periods before it was
      // failing alone, and lets the others probe first.
      k.suspect = k.aloneSince !== undefined && at - k.aloneSince >= BREAKER.aloneReports * this.#reportMs;
    }
    if (changed) {
      k.fleetWindow.clear();
      this.#periods = undefined;
      if (r.state !== 0) k.mirror({ s: 1, n: r.openings, remainingMs: r.remainingMs, om: r.openMs }, at);
      else if (known && (known.state !== 0 || r.closings > known.closings))
        k.mirror({ s: 0, n: 0, remainingMs: 0, om: 0 }, at);
    }
    // The half-open state's start stays as first heard: later replies say only "half-open now".
    if (r.state !== 0 && (changed || r.remainingMs > 0)) k.openUntil = at + r.remainingMs;
    k.fleet = r;
    k.heardAt = at;
  }

  #emit(event: SharedEvent): void {
    sendEvent(this.#onEvent, event);
  }
}

/**
 * A circuit breaker for a whole fleet of processes, kept in the caller's Redis: one answer to "is
 * that service down?" for every process that uses the same `name`, per key (a host, a route, a
 * tenant), that no single member's broken network can give.
 *
 * **The rule** (breaker-law.ts, docs/redis.md): each member reports its own calls and failures
 * over `windowMs` — a snapshot replacing its last — with one `EVALSHA` every `reportMs` while it
 * has traffic. The fleet opens when its calls reach `minCalls`, `failureRate` of them failed,
 * *and* the members that see that rate on their own are at least `minMembers` (2) and more than
 * `memberFailureRate` (0.5) of the members that reported within `windowMs`. Open, every member fails
 * fast with a `BrokenCircuitError` (`isBrokenCircuitError` recognises it) carrying `retryAfterMs`;
 * half-open, one member at a time holds the probe lease (it lapses after `probeTimeoutMs` when its
 * prober dies, and counts as a failed probe), and each failed probe opens the fleet for the next
 * step of `openBackoff`.
 *
 * **Each member keeps a local breaker** — the same rule on its evidence alone — which it follows
 * while the fleet is closed (a partitioned member stops on its own, and reports its refusals as
 * failures) and whenever Redis fails or does not answer within `commandTimeoutMs` (event `'fallback'`).
 * The local breaker follows every change the member hears from the fleet, so a fallback starts
 * from the fleet's state: never closed while the fleet was open, never open past its own probes.
 * A state Redis lost (FLUSHALL, a restart) is recreated from the first reporter's local view;
 * a corrupt one is repaired (event `'repair'`).
 *
 * @example
 * const breaker = sharedCircuitBreaker({ client: redis, name: 'payments' });
 * const api = pipeline([retrying(), breaker.forKey('api.payments.example')]);
 * await api.execute(() => callPayments());
 */
export function sharedCircuitBreaker<T = unknown>(options: SharedCircuitBreakerOptions<T>): SharedCircuitBreaker {
  const where = 'sharedCircuitBreaker()';
  const o = optionsObject(where, options) as SharedCircuitBreakerOptions;
  for (const key in RENAMED) {
    if (key in o) throw new TypeError(`${where}: \`${key}\` was renamed in 1.0: ${RENAMED[key]}`);
  }
  checkRedisKeys(where, o, [
    'client',
    'name',
    'prefix',
    'commandTimeoutMs',
    'failureRate',
    'minCalls',
    'minMembers',
    'memberFailureRate',
    'windowMs',
    'maxHalfOpenProbes',
    'successesToClose',
    'probeTimeoutMs',
    'openBackoff',
    'slowCallMs',
    'isFailure',
    'reportMs',
    'maxKeys',
    'keyTtlMs',
    'onEvent',
    'clock',
    'random',
  ]);
  return new Breaker(where, o, sharedKey(where, o, 'breaker'));
}
