import type { BackoffRun } from '../backoff/backoff.js';
import { exponential } from '../backoff/exponential.js';
import { fullJitter } from '../backoff/jitter-full.js';
import { type Clock, clockOption, unrefSystemClock } from '../core/clock.js';
import { invalid, nonNegative, show } from '../core/validate.js';
import { isNoScript, type RedisScripts, redisScripts, scriptSha } from './client.js';
import { Rearm } from './rearm.js';

/** Where a shared structure takes its numbers from now. */
export type SharedMode = 'syncing' | 'shared' | 'local';

/** What a shared structure reports when it leaves or regains Redis. Immutable. */
export interface SharedEvent {
  /** `'fallback'`: Redis failed or timed out, local state is used; `'resync'`: Redis answered again. */
  readonly type: 'fallback' | 'resync';
  /** The Redis error (or the timeout's `TimeoutError`) for `'fallback'`; undefined for `'resync'`. */
  readonly error: unknown;
  /** Milliseconds on the structure's clock. */
  readonly atMs: number;
}

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
  readonly timeoutMs?: number;
  /** How often local changes are sent (and the fleet's state read back) while there are any, in ms. Default 1000. */
  readonly syncIntervalMs?: number;
  /** Called on fallback and on resync. A throw is counted nowhere and goes no further. */
  readonly onEvent?: (event: SharedEvent) => void;
  /** Time source for timeouts and timers; default the unref'd system clock (timers do not keep a process alive). */
  readonly clock?: Clock;
}

export const SHARED_KEYS = ['client', 'name', 'prefix', 'timeoutMs', 'syncIntervalMs', 'onEvent', 'clock'];

/** How one kind of shared number is stored: its Lua script, the script's arguments, and the local rule. */
export interface SharedSpec {
  /** Key suffix (`token-budget`, `aws-retry-quota`, `ratio-budget`). */
  readonly kind: string;
  readonly script: string;
  /** ARGV after the delta. */
  readonly args: readonly string[];
  /** The value before any change (a fresh key in Redis, and the local fallback before the first sync). */
  readonly initial: number;
  /** Applies one local change to a level (clamping, as the script does). */
  apply(level: number, delta: number): number;
}

/** The error a Redis call that took longer than `timeoutMs` fails with. @internal */
export class Timeout extends Error {
  override name = 'TimeoutError';
}

/** ebb's own backoff between tries to reach Redis again: 100 ms doubling to 2 s, full jitter. @internal */
export const RECONNECT = exponential({
  initialDelayMs: 100,
  multiplier: 2,
  maxDelayMs: 2000,
  jitter: fullJitter,
  maxAttempts: Infinity,
});

/**
 * The engine under every `ebb/redis` structure: a number kept in Redis (a bucket's level, a
 * window's sum), changed by deltas. Each process keeps a local `level` it can read synchronously
 * (the executor's budget calls are synchronous and must never wait for Redis), and the change not
 * yet sent. Changes are sent in batches: at once when `urgent` (failures, retries — they matter
 * fleet-wide), else every `syncIntervalMs`; each send is one `EVALSHA` that applies the batch
 * atomically and returns the fleet's level, which replaces the local one. At most one call is in
 * flight per structure, so a slow Redis never piles up commands.
 *
 * A call that fails or takes over `timeoutMs` switches to local mode (event `'fallback'`): the
 * level goes on from its last known value with local changes only, and the next call waits for
 * ebb's own backoff (100 ms doubling to 2 s, full jitter), so a fleet does not storm a Redis that
 * comes back. The first answer after that resyncs (event `'resync'`) and sends what piled up.
 */
export class SharedState {
  readonly #where: string;
  readonly #scripts: RedisScripts;
  readonly #key: string;
  readonly #spec: SharedSpec;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #syncIntervalMs: number;
  readonly #onEvent: ((event: SharedEvent) => void) | undefined;
  #sha: string | undefined;
  #level: number;
  #pending = 0;
  #urgent = false;
  #mode: SharedMode = 'syncing';
  #inflight: Promise<void> | undefined;
  readonly #timer: Rearm;
  #reconnect: BackoffRun | undefined;
  #nextTryMs = Number.NEGATIVE_INFINITY;
  /** When Redis last answered: the fleet's part of the level is that old. */
  #answeredAt = Number.NEGATIVE_INFINITY;
  #closed = false;
  #commands = 0;
  #errors = 0;
  #fallbacks = 0;
  #resyncs = 0;
  readonly #ready: Promise<void>;
  #readyResolve!: () => void;

  constructor(where: string, o: SharedOptions, spec: SharedSpec) {
    this.#where = where;
    this.#scripts = redisScripts(o.client, where);
    const name = o.name;
    if (typeof name !== 'string' || name === '' || /[{}]/.test(name)) {
      invalid(where, 'name', name, 'a non-empty string without { or }', "For example 'payments-api'.");
    }
    // null is a bad value like any other, not "the default".
    const prefix = o.prefix === undefined ? 'ebb' : o.prefix;
    if (typeof prefix !== 'string' || /[{}]/.test(prefix)) {
      invalid(where, 'prefix', prefix, 'a string without { or }', "Leave it out for 'ebb'.");
    }
    // The hash tag {name}: Redis Cluster hashes only what is inside the braces, so all of one
    // structure's keys land in one slot (Redis Cluster specification, "Hash tags").
    this.#key = `${prefix === '' ? '' : `${prefix}:`}{${name}}:${spec.kind}`;
    this.#spec = spec;
    this.#clock = o.clock === undefined ? unrefSystemClock : clockOption(where, o.clock);
    this.#timer = new Rearm(this.#clock, () => this.#send());
    this.#timeoutMs = nonNegative(where, 'timeoutMs', o.timeoutMs, 100, false, 'For example 100.');
    if (this.#timeoutMs < 1) invalid(where, 'timeoutMs', o.timeoutMs, 'a finite number >= 1', 'For example 100.');
    this.#syncIntervalMs = nonNegative(where, 'syncIntervalMs', o.syncIntervalMs, 1000, false, 'For example 1000.');
    if (this.#syncIntervalMs < 1) {
      invalid(where, 'syncIntervalMs', o.syncIntervalMs, 'a finite number >= 1', 'For example 1000.');
    }
    if (o.onEvent !== undefined && typeof o.onEvent !== 'function') {
      invalid(where, 'onEvent', o.onEvent, 'a function (event) => void');
    }
    this.#onEvent = o.onEvent;
    this.#level = spec.initial;
    this.#ready = new Promise((resolve) => {
      this.#readyResolve = resolve;
    });
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

  get stats(): SharedStats {
    return {
      mode: this.#mode,
      commands: this.#commands,
      errors: this.#errors,
      fallbacks: this.#fallbacks,
      resyncs: this.#resyncs,
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
      this.#pending === 0 &&
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

  /** Sends what is pending now (bounded by `timeoutMs`, or skipped while backing off); never rejects. */
  async flush(refresh = false): Promise<void> {
    // A call's end may start the next one (changes made meanwhile): wait for those too. Bounded:
    // each turn sends or awaits one call, and a failed call stops it (the backoff's wait).
    // `refresh` sends once even with nothing pending, to read the fleet's value back.
    let force = refresh;
    for (let turn = 0; turn < 100; turn++) {
      if (this.#inflight) {
        await this.#inflight;
        continue;
      }
      if ((this.#pending === 0 && !force) || this.#closed || this.#clock.now() < this.#nextTryMs) return;
      force = false;
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

  #send(): void {
    if (this.#inflight || this.#closed) return;
    const wait = this.#nextTryMs - this.#clock.now();
    if (wait > 0) {
      this.#timer.arm(wait);
      return;
    }
    // This send carries everything pending: a timer armed for it is no longer needed.
    this.#timer.cancel();
    const delta = this.#pending;
    this.#pending = 0;
    this.#urgent = false;
    this.#inflight = this.#call(delta);
  }

  async #call(delta: number): Promise<void> {
    const stop = new AbortController();
    try {
      const reply = await Promise.race([
        this.#run(delta),
        this.#clock.sleep(this.#timeoutMs, stop.signal).then(() => {
          throw new Timeout(`${this.#where}: Redis did not answer within ${this.#timeoutMs} ms`);
        }),
      ]);
      const value = typeof reply === 'number' ? reply : typeof reply === 'string' ? Number(reply) : Number.NaN;
      // One bad reply must not poison the local level: treat it as a failed call.
      if (!Number.isFinite(value)) {
        throw new TypeError(`${this.#where}: Redis answered ${show(reply)}; expected a number`);
      }
      this.#level = this.#spec.apply(value, this.#pending);
      this.#answeredAt = this.#clock.now();
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
      this.#pending += delta;
      this.#reconnect ??= RECONNECT.start();
      this.#nextTryMs = this.#clock.now() + this.#reconnect.next();
      if (this.#mode !== 'local') {
        this.#mode = 'local';
        this.#fallbacks++;
        this.#emit({ type: 'fallback', error, atMs: this.#clock.now() });
      }
    } finally {
      stop.abort();
      // Cleared before anyone awaiting ready() or flush() runs, so their next change is sent.
      this.#inflight = undefined;
      if (this.#pending !== 0) {
        if (this.#mode === 'local') this.#timer.arm(Math.max(0, this.#nextTryMs - this.#clock.now()));
        else if (this.#urgent) this.#send();
        else this.#timer.arm(this.#syncIntervalMs);
      }
      this.#readyResolve();
    }
  }

  async #run(delta: number): Promise<unknown> {
    const args = [String(delta), ...this.#spec.args];
    const keys = [this.#key];
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
    try {
      this.#onEvent?.(Object.freeze(event));
    } catch {
      // A listener's throw must not break the budget every request of the process shares.
    }
  }
}
/** What every shared budget adds to its local interface. */
export interface SharedControls {
  /** `'syncing'` until the first Redis answer (or failure), then `'shared'`, or `'local'` while Redis fails. */
  readonly mode: SharedMode;
  /** Counters: commands sent, errors, fallbacks, resyncs. */
  readonly stats: SharedStats;
  /** The Redis key. */
  readonly key: string;
  /** Resolves once the first sync answered or failed; never rejects. */
  ready(): Promise<void>;
  /** Sends local changes now (bounded by `timeoutMs`); never rejects. */
  flush(): Promise<void>;
  /** Flushes, then stops its timers. Call before a short-lived process exits. */
  close(): Promise<void>;
}

/**
 * Adds {@link SharedControls} to a shared budget: live getters (`mode`, `stats`, `key` read the
 * state at each access) and the three methods, defined on `budget` itself.
 */
export function withControls<T extends object>(state: SharedState, budget: T): T & SharedControls {
  return Object.defineProperties(budget, {
    mode: { get: () => state.mode, enumerable: true },
    stats: { get: () => state.stats, enumerable: true },
    key: { get: () => state.key, enumerable: true },
    ready: { value: () => state.ready(), enumerable: true },
    flush: { value: () => state.flush(), enumerable: true },
    close: { value: () => state.close(), enumerable: true },
  }) as T & SharedControls;
}
