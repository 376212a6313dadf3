import type { Clock } from '../core/clock.js';
import { show } from '../core/validate.js';
import { isNoScript, type RedisScripts, redisScripts, scriptSha } from './client.js';
import {
  APPLIED_RECORD,
  faultOf,
  generationOf,
  listenerOption,
  msOption,
  newGeneration,
  processId,
  quote,
  Reconnect,
  type SharedEvent,
  type SharedInspection,
  type SharedListener,
  type SharedMode,
  type SharedProblem,
  sendEvent,
  sharedKey,
  Timeout,
} from './protocol.js';
import { Rearm } from './rearm.js';
import { sharedClockOption } from './repaired-clock.js';

export type { SharedEvent, SharedInspection, SharedMode, SharedProblem } from './protocol.js';

/** Counters of a shared structure, for dashboards and tests. A fresh object on each read. */
export interface SharedStats {
  readonly mode: SharedMode;
  /** Commands sent to Redis: one `EVALSHA` per call, plus an `EVAL` when the server lacked the script. */
  readonly commands: number;
  /** Calls that failed or timed out. */
  readonly errors: number;
  /** Times the structure went from shared (or syncing) to local. */
  readonly fallbacks: number;
  /** Times it went from local back to shared. */
  readonly resyncs: number;
  /** Times this process found a bad stored value and rewrote the state (events `'repair'`). */
  readonly repairs: number;
  /** Times this process found the state it knew gone (events `'state-lost'`). */
  readonly stateLosses: number;
}

/** Options every `ebb/redis` structure shares. */
export interface SharedOptions {
  /** The caller's client: node-redis, ioredis or a {@link RedisScripts}. Required. */
  readonly client: unknown;
  /** The structure's name; its keys are `<prefix>:{<name>}:<kind>`, so they share one Cluster slot. Required. */
  readonly name: string;
  /** Key prefix, default `'ebb'`. */
  readonly prefix?: string;
  /** Longest wait for one Redis call in ms, after which the structure falls back to local state. Default 100. */
  readonly commandTimeoutMs?: number;
  /** How often local changes are sent (and the fleet's state read back) while there are any, in ms. Default 1000. */
  readonly syncIntervalMs?: number;
  /** Called on fallback, resync, state lost and repair ({@link SharedEvent}). A throw is counted nowhere and goes no further. */
  readonly onEvent?: (event: SharedEvent) => void;
  /**
   * Time source for timeouts and timers; default the unref'd system clock (timers do not keep a
   * process alive). A reading that throws or is not a finite number stands for the last good
   * one, a clock set back goes on from where it was, and a sleep that fails waits on a host
   * timer: nothing a broken clock does reaches Redis or the host.
   */
  readonly clock?: Clock;
}

export const SHARED_KEYS = ['client', 'name', 'prefix', 'commandTimeoutMs', 'syncIntervalMs', 'onEvent', 'clock'];

/** How one kind of shared number is stored: its Lua script, the script's arguments, and the local rule. */
export interface SharedSpec {
  /** Key suffix (`token-budget`, `aws-retry-quota`, `ratio-budget`). */
  readonly kind: string;
  /** LEVEL_SCRIPT or WINDOW_SCRIPT. */
  readonly script: string;
  /** ARGV after the common eight (mode, cum, unacked, seq, seed, generation, the record's expiry, a distrusted record seq). */
  readonly args: readonly string[];
  /** The value before any change (a fresh key in Redis, and the local fallback before the first sync). */
  readonly initial: number;
  /** The values a reply may hold: a level within the budget's bounds, a window's sum within ±2^53 × its slices. */
  readonly min: number;
  readonly max: number;
  /** A window's length in ms: a seed taken from an old answer shrinks with its age. Undefined for a level. */
  readonly windowMs?: number;
  /** Applies one local change to a level (clamping, as the script does). */
  apply(level: number, delta: number): number;
}

/**
 * States read together (the SRE throttle's two windows, whose ratio is its decision): a send of one
 * sends every other member that is free in the same turn, and calls sent in one turn share a
 * number, so {@link SharedState.answeredWith} can tell whether two levels are the fleet's at one moment.
 */
export class SendGroup {
  readonly members: SharedState[] = [];
  #turn = 0;
  #open = false;

  /** The number of a call sent now: one for every call of this synchronous turn. */
  take(): number {
    if (!this.#open) {
      this.#open = true;
      this.#turn++;
      queueMicrotask(() => {
        this.#open = false;
      });
    }
    return this.#turn;
  }
}

/**
 * The engine under every `ebb/redis` structure: a number kept in Redis (a bucket's level, a
 * window's sum), changed by deltas. Each process keeps a local `level` it can read synchronously
 * (the executor's budget calls are synchronous and must never wait for Redis), and the change not
 * yet sent. Changes are sent in batches: at once when `urgent` (failures, retries — they matter
 * fleet-wide), else every `syncIntervalMs`; each send is one `EVALSHA` that applies the batch
 * atomically and returns the fleet's level, which replaces the local one. At most one call is in
 * flight per structure, so a slow Redis never piles up commands.
 *
 * Every call carries the running sum of the process's changes and a sequence number, so a call
 * that timed out and still ran, and the next call that carries its changes again, apply them once
 * (scripts.ts, "Exactly once"). Every reply is checked: a level outside the structure's bounds or a
 * generation that is not a whole number fails the call (never adopted). A reply with another
 * generation than the one last heard means the fleet's state was lost or replaced (event
 * `'state-lost'`); a reply that names a fault means this call repaired a bad stored value (event
 * `'repair'`).
 *
 * A call that fails or takes over `commandTimeoutMs` switches to local mode (event `'fallback'`): the
 * level goes on from its last known value with local changes only, and the next call waits for
 * ebb's own backoff (100 ms doubling to 2 s, full jitter), so a fleet does not storm a Redis that
 * comes back. The first answer after that resyncs (event `'resync'`) and sends what piled up.
 */
export class SharedState {
  readonly #where: string;
  readonly #scripts: RedisScripts;
  readonly #key: string;
  readonly #appliedKey: string;
  readonly #spec: SharedSpec;
  readonly #clock: Clock;
  readonly #commandTimeoutMs: number;
  readonly #syncIntervalMs: number;
  readonly #onEvent: SharedListener;
  #sha: string | undefined;
  #level: number;
  #pending = 0;
  /** The running sum of every change sent, and its value at the last answered call. */
  #cum = 0;
  #ackedCum = 0;
  /** The highest sequence number sent. */
  #seq = 0;
  /** A record seq this process never sent that its record was found holding, sent back until a call is answered ('' for none). */
  #distrust = '';
  /** The last level Redis returned (checked), and the generation it came with (0: none heard yet). */
  #answered: number | undefined;
  /** The send group's number of the call that answer came to (0: no group, or none yet). */
  #answeredTurn = 0;
  readonly #group: SendGroup | undefined;
  #generation = 0;
  #urgent = false;
  #mode: SharedMode = 'syncing';
  #inflight: Promise<void> | undefined;
  readonly #timer: Rearm;
  readonly #reconnect = new Reconnect();
  /** When Redis last answered: the fleet's part of the level is that old. */
  #answeredAt = Number.NEGATIVE_INFINITY;
  #closed = false;
  #commands = 0;
  #errors = 0;
  #fallbacks = 0;
  #resyncs = 0;
  #repairs = 0;
  #stateLosses = 0;
  readonly #ready: Promise<void>;
  #readyResolve!: () => void;

  constructor(where: string, o: SharedOptions, spec: SharedSpec, group?: SendGroup) {
    this.#where = where;
    this.#group = group;
    this.#scripts = redisScripts(o.client, where);
    this.#key = sharedKey(where, o, spec.kind);
    this.#appliedKey = `${this.#key}:applied:${processId()}`;
    this.#spec = spec;
    this.#clock = sharedClockOption(where, o.clock);
    this.#timer = new Rearm(this.#clock, () => this.#send());
    this.#commandTimeoutMs = msOption(where, 'commandTimeoutMs', o.commandTimeoutMs, 100, 'For example 100.');
    this.#syncIntervalMs = msOption(where, 'syncIntervalMs', o.syncIntervalMs, 1000, 'For example 1000.');
    this.#onEvent = listenerOption(where, o.onEvent);
    this.#level = spec.initial;
    this.#ready = new Promise((resolve) => {
      this.#readyResolve = resolve;
    });
    group?.members.push(this);
    this.#send();
  }

  /** The Redis key. */
  get key(): string {
    return this.#key;
  }

  /** The local view of the fleet's level (last Redis answer plus local changes since). */
  get level(): number {
    return this.#level;
  }

  get mode(): SharedMode {
    return this.#mode;
  }

  /** Whether this state and `twin` (of one {@link SendGroup}) are shared, and their last answers are of calls sent together. */
  answeredWith(twin: SharedState): boolean {
    return (
      this.#mode === 'shared' &&
      twin.#mode === 'shared' &&
      this.#answeredTurn !== 0 &&
      this.#answeredTurn === twin.#answeredTurn
    );
  }

  get stats(): SharedStats {
    return {
      mode: this.#mode,
      commands: this.#commands,
      errors: this.#errors,
      fallbacks: this.#fallbacks,
      resyncs: this.#resyncs,
      repairs: this.#repairs,
      stateLosses: this.#stateLosses,
    };
  }

  /** Resolves once the first sync answered or failed (never rejects). */
  ready(): Promise<void> {
    return this.#ready;
  }

  /**
   * Records a local change: applied to the local level at once, sent now if `urgent` or if it is
   * the first change after an idle spell (nothing pending, the last answer older than
   * `syncIntervalMs`: the view is that old, so the fleet's level is read back at once), else
   * within `syncIntervalMs`.
   */
  change(delta: number, urgent: boolean): void {
    // Idle: nothing pending or on its way, no send planned, and the last answer old. (A busy
    // process always has a send planned; sending one window early would read it at another moment
    // than its twin's — the throttle's two counts must be of one moment.)
    const idle =
      !this.#owed() &&
      !this.#timer.armed &&
      !this.#inflight &&
      this.#clock.now() - this.#answeredAt > this.#syncIntervalMs;
    this.#level = this.#spec.apply(this.#level, delta);
    this.#pending += delta;
    if (this.#closed) return;
    if (urgent) {
      this.#urgent = true;
      this.#send();
    } else if (idle && this.#mode === 'shared') this.#send();
    else this.#timer.arm(this.#syncIntervalMs);
  }

  /**
   * Sends what is pending now, bounded by `commandTimeoutMs`; never rejects. While backing off
   * after a failure it still tries once — a caller who flushes (or closes, before a short-lived
   * process exits) wants the changes sent, and one call is no storm — and stops at the next failure.
   */
  async flush(refresh = false): Promise<void> {
    // A call's end may start the next one (changes made meanwhile): wait for those too. Bounded:
    // each turn sends or awaits one call, and a failed call stops it (the backoff's wait).
    // `refresh` sends once even with nothing pending, to read the fleet's value back.
    let force = refresh;
    let tried = false;
    for (let turn = 0; turn < 100; turn++) {
      if (this.#inflight) {
        await this.#inflight;
        continue;
      }
      if ((!this.#owed() && !force) || this.#closed) return;
      if (this.#reconnect.waitMs(this.#clock.now()) > 0) {
        if (tried) return;
        // The one try past the backoff.
        this.#reconnect.skip();
      }
      force = false;
      tried = true;
      this.#send();
    }
  }

  /** Stops the timers after one last flush. Changes after `close()` stay local. */
  async close(): Promise<void> {
    this.#timer.cancel();
    await this.flush();
    this.#closed = true;
    // flush() may have armed the timer again.
    this.#timer.stop();
  }

  /** Reads the state without changing it (mode `'inspect'`), bounded by `commandTimeoutMs`; rejects on failure. */
  async inspect(view: (level: number) => number): Promise<SharedInspection> {
    // With the highest number sent: a record above it is not this process's (a problem).
    const reply = await this.#bounded(this.#run(this.#args('inspect', 0, this.#seq, 0)));
    if (!Array.isArray(reply) || reply.length !== 4) {
      throw new TypeError(`${this.#where}: Redis answered ${show(reply)}; expected the inspection's four parts`);
    }
    const [level, generation, stored, faults] = reply as [unknown, unknown, unknown, unknown];
    const fields: Record<string, string> = {};
    const flat = Array.isArray(stored) ? stored.map(String) : [];
    for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i] as string] = flat[i + 1] as string;
    const problems: SharedProblem[] = [];
    const list = Array.isArray(faults) ? faults : [];
    for (let i = 0; i < list.length; i += 3) {
      const p = faultOf(list, i);
      if (p) problems.push(p);
    }
    const value = typeof level === 'string' && level !== '' ? Number(level) : Number.NaN;
    const g = typeof generation === 'string' && generation !== '' ? Number(generation) : Number.NaN;
    const sound = Number.isFinite(value) && value >= this.#spec.min && value <= this.#spec.max;
    return {
      key: this.#key,
      exists: flat.length > 0,
      generation: Number.isSafeInteger(g) && g >= 1 ? g : undefined,
      value: sound ? view(value) : undefined,
      fields,
      problems,
    };
  }

  /**
   * Sets the fleet's state back to the structure's initial value with a new generation (mode
   * `'reset'`), bounded by `commandTimeoutMs`; rejects on failure. Live processes hear a new generation at
   * their next call (event `'state-lost'`) and go on from the reset state; this process's own
   * changes not yet sent are dropped.
   */
  async reset(): Promise<void> {
    const reply = await this.#bounded(this.#run(this.#args('reset', 0, 0, this.#spec.initial)));
    const [level, generation] = Array.isArray(reply) ? reply : [];
    const value = typeof level === 'string' ? Number(level) : Number.NaN;
    if (!(value === this.#spec.initial)) {
      throw new TypeError(`${this.#where}: Redis answered ${show(reply)} to a reset; expected the initial value`);
    }
    this.#generation = generationOf(this.#where, generation);
    this.#pending = 0;
    this.#ackedCum = this.#cum;
    this.#answered = value;
    this.#level = value;
  }

  /** Changes owed to Redis: not sent yet, or sent and not answered. */
  #owed(): boolean {
    return this.#pending !== 0 || this.#cum !== this.#ackedCum;
  }

  /** The level to start a missing or broken state with: the last answer (a window's shrunk by its age), else the initial. */
  #seed(): number {
    if (this.#answered === undefined) return this.#spec.initial;
    const w = this.#spec.windowMs;
    if (w === undefined) return this.#answered;
    const age = Math.max(0, this.#clock.now() - this.#answeredAt);
    return this.#answered * Math.max(0, 1 - age / w);
  }

  #args(mode: string, unacked: number, seq: number, seed: number): string[] {
    return [
      mode,
      String(this.#cum),
      String(unacked),
      String(seq),
      String(seed),
      newGeneration(),
      String(APPLIED_RECORD.ttlS),
      this.#distrust,
      ...this.#spec.args,
    ];
  }

  #send(): void {
    if (this.#inflight || this.#closed) return;
    const wait = this.#reconnect.waitMs(this.#clock.now());
    if (wait > 0) {
      this.#timer.arm(wait);
      return;
    }
    // This send carries everything pending: a timer armed for it is no longer needed.
    this.#timer.cancel();
    this.#cum += this.#pending;
    this.#pending = 0;
    this.#urgent = false;
    const group = this.#group;
    this.#inflight = this.#call(group ? group.take() : 0);
    // The group's other members go with it (each sends if free: not in flight, closed or backing off).
    if (group) for (const member of group.members) member.#send();
  }

  #bounded(work: Promise<unknown>): Promise<unknown> {
    const stop = new AbortController();
    return Promise.race([
      work,
      this.#clock.sleep(this.#commandTimeoutMs, stop.signal).then(() => {
        throw new Timeout(`${this.#where}: Redis did not answer within ${this.#commandTimeoutMs} ms`);
      }),
    ]).finally(() => stop.abort());
  }

  async #call(turn: number): Promise<void> {
    const cum = this.#cum;
    const args = this.#args('', cum - this.#ackedCum, ++this.#seq, this.#seed());
    try {
      const reply = await this.#bounded(this.#run(args));
      const { value, generation, fault, resent } = this.#parse(reply, this.#seq);
      // A resend that found a record above every number this process sent: the record is not its
      // own, and this call's changes were not applied. They stay owed (the next call goes at once),
      // that call names the record as distrusted (the script repairs it), and numbers from above it
      // so that no record of this process ever holds it (scripts.ts, "Exactly once").
      const foreign = resent > this.#seq;
      if (foreign) this.#seq = resent;
      else this.#ackedCum = cum;
      this.#distrust = foreign ? String(resent) : '';
      this.#answered = value;
      this.#answeredTurn = turn;
      this.#level = this.#spec.apply(value, cum - this.#ackedCum + this.#pending);
      this.#answeredAt = this.#clock.now();
      this.#reconnect.answered();
      const was = this.#mode;
      this.#mode = 'shared';
      if (was === 'local') {
        this.#resyncs++;
        this.#emit({ type: 'resync', error: undefined, atMs: this.#clock.now() });
      }
      if (fault) {
        this.#repairs++;
        this.#emit({ type: 'repair', error: undefined, atMs: this.#clock.now(), ...fault });
      } else if (this.#generation !== 0 && generation !== this.#generation) {
        this.#stateLosses++;
        this.#emit({
          type: 'state-lost',
          error: undefined,
          atMs: this.#clock.now(),
          key: this.#key,
          field: 'generation',
        });
      }
      this.#generation = generation;
    } catch (error) {
      this.#errors++;
      this.#reconnect.failed(this.#clock.now());
      if (this.#mode !== 'local') {
        this.#mode = 'local';
        this.#fallbacks++;
        const seedFrom = this.#answered === undefined ? 'initial' : 'fleet';
        this.#emit({ type: 'fallback', error, atMs: this.#clock.now(), seedFrom, seed: this.#level });
      }
    } finally {
      // Cleared before anyone awaiting ready() or flush() runs, so their next change is sent.
      this.#inflight = undefined;
      if (this.#owed()) {
        if (this.#mode === 'local') this.#timer.arm(Math.max(0, this.#reconnect.waitMs(this.#clock.now())));
        else if (this.#urgent || this.#cum !== this.#ackedCum) this.#send();
        else this.#timer.arm(this.#syncIntervalMs);
      }
      this.#readyResolve();
    }
  }

  /**
   * The script's reply to call `sent`: level, generation, the first fault it repaired, and the
   * record's seq when the call counted as a resend (-1: it did not; at most `maxAhead` above the
   * call's); anything else fails the call.
   */
  #parse(
    reply: unknown,
    sent: number,
  ): { value: number; generation: number; fault: SharedProblem | undefined; resent: number } {
    if (!Array.isArray(reply) || reply.length !== 6) {
      throw new TypeError(
        `${this.#where}: Redis answered ${quote(reply)}; expected the script's level, generation, repair and resend`,
      );
    }
    const level = reply[0];
    const value = typeof level === 'string' || typeof level === 'number' ? Number(level) : Number.NaN;
    // One bad reply must not poison the local level: the call failed.
    if (!(value >= this.#spec.min && value <= this.#spec.max)) {
      throw new TypeError(
        `${this.#where}: Redis answered level = ${quote(level)}; expected a number from ${this.#spec.min} to ${this.#spec.max}`,
      );
    }
    const r = reply[5];
    const seq = typeof r === 'string' && r !== '' ? Number(r) : Number.NaN;
    const most = sent + APPLIED_RECORD.maxAhead;
    if (!(r === '' || (Number.isSafeInteger(seq) && seq >= 0 && seq <= most))) {
      throw new TypeError(
        `${this.#where}: Redis answered resent = ${quote(r)}; expected '' or a record's whole sequence number up to ${most}`,
      );
    }
    return {
      value,
      generation: generationOf(this.#where, reply[1]),
      fault: faultOf(reply, 2),
      resent: r === '' ? -1 : seq,
    };
  }

  async #run(args: readonly string[]): Promise<unknown> {
    const keys = [this.#key, this.#appliedKey];
    this.#commands++;
    this.#sha ??= await scriptSha(this.#spec.script);
    try {
      return await this.#scripts.evalSha(this.#sha, keys, args);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      // The node that owns the key does not have the script yet (first use, a restart, SCRIPT
      // FLUSH): EVAL runs it and caches it there, so the next EVALSHA finds it.
      this.#commands++;
      return await this.#scripts.eval(this.#spec.script, keys, args);
    }
  }

  #emit(event: SharedEvent): void {
    sendEvent(this.#onEvent, event);
  }
}

/** What every shared budget adds to its local interface. */
export interface SharedControls {
  /** `'syncing'` until the first Redis answer (or failure), then `'shared'`, or `'local'` while Redis fails. */
  readonly mode: SharedMode;
  /** Counters: commands sent, errors, fallbacks, resyncs, repairs, state losses. */
  readonly stats: SharedStats;
  /** The Redis key. */
  readonly key: string;
  /** Resolves once the first sync answered or failed; never rejects. */
  ready(): Promise<void>;
  /** Sends local changes now (bounded by `commandTimeoutMs`); never rejects. */
  flush(): Promise<void>;
  /** Flushes, then stops its timers. Call before a short-lived process exits. */
  close(): Promise<void>;
  /** Reads the fleet's state in Redis without changing it (see {@link SharedInspection}); rejects if Redis fails or times out. */
  inspect(): Promise<SharedInspection>;
  /**
   * Sets the fleet's state back to its initial value, for every process at once, while they run:
   * each hears a new generation at its next call and goes on from there. Rejects if Redis fails
   * or times out.
   */
  reset(): Promise<void>;
}

/**
 * Adds {@link SharedControls} to a shared budget: live getters (`mode`, `stats`, `key` read the
 * state at each access) and the three methods, defined on `budget` itself.
 */
export function withControls<T extends object>(
  state: SharedState,
  budget: T,
  view: (level: number) => number,
): T & SharedControls {
  return Object.defineProperties(budget, {
    inspect: { value: () => state.inspect(view), enumerable: true },
    reset: { value: () => state.reset(), enumerable: true },
    mode: { get: () => state.mode, enumerable: true },
    stats: { get: () => state.stats, enumerable: true },
    key: { get: () => state.key, enumerable: true },
    ready: { value: () => state.ready(), enumerable: true },
    flush: { value: () => state.flush(), enumerable: true },
    close: { value: () => state.close(), enumerable: true },
  }) as T & SharedControls;
}
