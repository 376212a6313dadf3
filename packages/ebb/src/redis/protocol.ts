/**
 * What every `ebb/redis` structure shares on the wire: the events and problems it reports, the
 * inspection it returns, the ids and generations it draws, how it reads a script's reply (a
 * generation, a fault), the key it names, its timeout and its reconnect backoff.
 */
import type { BackoffRun } from '../backoff/backoff.js';
import { exponential } from '../backoff/exponential.js';
import { fullJitter } from '../backoff/jitter-full.js';
import { ignored } from '../core/boundary.js';
import { invalid, mistyped, show } from '../core/validate.js';

/** Where a shared structure takes its numbers from now. */
export type SharedMode = 'syncing' | 'shared' | 'local';

/**
 * What a shared structure reports about its Redis state. Immutable.
 *
 * - `'fallback'`: Redis failed or timed out; local state is used, starting from `seed` (the last
 *   value Redis returned — `seedFrom: 'fleet'` — or the configured initial state: `'initial'`).
 * - `'resync'`: Redis answered again.
 * - `'state-lost'`: the fleet's state this process knew is gone — lost (FLUSHALL, a restart
 *   without persistence, a failover to a replica that lacked it or lagged, eviction), or rewritten
 *   by another process's repair or an admin's `reset()`. `field` says how it was seen:
 *   `'generation'` (another generation answered) or `'epoch'` (the shared rate's epoch went back).
 *   The structure goes on from the new state, which the first process to call after the loss
 *   seeded with its own last view.
 * - `'repair'`: this process found a stored value outside its own bounds (or a key of another
 *   type or layout, or a field missing) and rewrote the state from its last good view, else its
 *   initial state: `key`, `field` and `value` name the first bad one (`field` `'(type)'`,
 *   `'(layout)'`, … for a whole key). The fleet circuit breaker also names a field of an open
 *   state that held this process longer than its longest open period, which it shortened in place
 *   (`'ou'`, `'om'`, `'l'`: same generation, evidence kept).
 */
export interface SharedEvent {
  readonly type: 'fallback' | 'resync' | 'state-lost' | 'repair';
  /** The Redis error (or the timeout's `TimeoutError`, or the check a reply failed) for `'fallback'`; undefined otherwise. */
  readonly error: unknown;
  /** Milliseconds on the structure's clock. */
  readonly atMs: number;
  /** The Redis key concerned (`'state-lost'`, `'repair'`). */
  readonly key?: string;
  /** `'repair'`: the bad field; `'state-lost'`: `'generation'` or `'epoch'`. */
  readonly field?: string;
  /** `'repair'`: the bad value as it was stored (at most 64 characters; `'(missing)'` for a field that was not there). */
  readonly value?: string;
  /** `'fallback'`: where the local state starts — `'fleet'` (the last value Redis returned) or `'initial'` (the options). */
  readonly seedFrom?: 'fleet' | 'initial';
  /** `'fallback'`: the value the local state starts at (a level, a window's sum, or a rate in requests per second). */
  readonly seed?: number;
}

/** The listener a shared structure hands its events to (its `onEvent` option). */
export type SharedListener = ((event: SharedEvent) => void) | undefined;

/** Checks a shared structure's `onEvent` option: a function, or undefined for none. @internal */
export function listenerOption(where: string, onEvent: unknown): SharedListener {
  if (onEvent !== undefined && typeof onEvent !== 'function') {
    mistyped(where, 'onEvent', onEvent, 'a function (event) => void');
  }
  return onEvent as SharedListener;
}

/**
 * A time option of at least one millisecond (`commandTimeoutMs`, `syncIntervalMs`): `fallback` when
 * left out, else a finite number >= 1 — one message for every value refused. @internal
 */
export function msOption(where: string, name: string, value: unknown, fallback: number, fix: string): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && value >= 1 && value < Number.POSITIVE_INFINITY) return value;
  return invalid(where, name, value, 'a finite number >= 1', fix);
}

/**
 * Hands `event`, frozen, to `listener`. A listener's throw (or its promise's rejection) goes no further: the structure is
 * shared by every request of the process, and one caller's faulty listener must not fail them. @internal
 */
export function sendEvent(listener: SharedListener, event: SharedEvent): void {
  try {
    ignored(listener?.(Object.freeze(event)));
  } catch {
    // Contained: the listener is one caller's, the structure every request's.
  }
}

/** A stored value a shared structure's checks refuse (see {@link SharedEvent} `'repair'`). */
export interface SharedProblem {
  readonly key: string;
  readonly field: string;
  readonly value: string;
}

/**
 * A read-only look at a shared structure's state in Redis (`inspect()`): nothing is written, no
 * lease is taken. `problems` lists every value the structure's next call would repair.
 */
export interface SharedInspection {
  /** The state's key. */
  readonly key: string;
  /** Whether the key holds a state (of any layout). */
  readonly exists: boolean;
  /** The state's generation, when it is sound. */
  readonly generation: number | undefined;
  /** The fleet's value in the structure's own units (tokens, quota, a balance in retries, a count), when sound. */
  readonly value: number | undefined;
  /** The stored fields as Redis holds them (for a hash: name → value). */
  readonly fields: Readonly<Record<string, string>>;
  readonly problems: readonly SharedProblem[];
}

/**
 * The exactly-once record's constants (scripts.ts, "Exactly once"): the scripts read them from here
 * (put into their text when the module loads), the process sends the expiry with each call. @internal
 */
export const APPLIED_RECORD = {
  /** How long a process's record lives after its last call, in s: the window of the exactly-once guarantee. */
  ttlS: 600,
  /**
   * How far a record may be ahead of a call's own sequence number and still be read as written by
   * its process (a call that timed out and runs late finds the record of the calls sent after it);
   * one further ahead is a fault.
   */
  maxAhead: 1_000_000,
} as const;

/** A new generation: a random whole number in [1, 2^48), drawn by the caller (Redis's own Lua random is not random before 7.0). @internal */
export function newGeneration(): string {
  const w = new Uint32Array(2);
  crypto.getRandomValues(w);
  return String(((w[0] as number) % 65536) * 4294967296 + (w[1] as number) || 1);
}

/** A process's id in the fleet: 24 random hex digits. @internal */
export function processId(): string {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** `x` as stored or sent, at most 64 characters: what a repair event or an error quotes. @internal */
export function quote(x: unknown): string {
  const text = typeof x === 'string' ? x : show(x);
  return text.length > 64 ? `${text.slice(0, 61)}...` : text;
}

/** A whole number in [1, 2^53] from a reply's string: a generation. @internal */
export function generationOf(where: string, x: unknown): number {
  const g = typeof x === 'string' ? Number(x) : Number.NaN;
  if (!(Number.isSafeInteger(g) && g >= 1)) {
    throw new TypeError(`${where}: Redis answered generation = ${quote(x)}; expected a whole number >= 1`);
  }
  return g;
}

/** The first fault a script reported (key, field, value), or undefined for none. @internal */
export function faultOf(reply: readonly unknown[], at: number): SharedProblem | undefined {
  const [key, field, value] = reply.slice(at, at + 3);
  if (typeof key !== 'string' || typeof field !== 'string' || key === '') return undefined;
  return { key, field, value: quote(typeof value === 'string' ? value : show(value)) };
}

/** The error a Redis call that took longer than `commandTimeoutMs` fails with. @internal */
export class Timeout extends Error {
  override name = 'TimeoutError';
}

/**
 * Answers in a row that found the fleet's state gone after which a member paces on its local
 * controller, as if Redis had failed: a state lost at every renewal (Redis evicting it under
 * memory pressure) keeps no rate, no cut and no cool-off, so the fleet would pace blind. One or
 * two losses (a restart, a flush, a failover) are relearned in place. @internal
 */
export const LOSSES_TO_FALL_BACK = 3;

/** The error a `'fallback'` event carries when the state was gone at `losses` answers in a row. @internal */
export function stateNotKept(where: string, losses: number): Error {
  return new Error(
    `${where}: the fleet's state was gone at ${losses} answers in a row (is Redis evicting it? Give ebb's keys ` +
      'memory: maxmemory-policy noeviction); pacing on the local controller until it stays',
  );
}

/** ebb's own backoff between tries to reach Redis again: 100 ms doubling to 2 s, full jitter. @internal */
export const RECONNECT = exponential({
  initialDelayMs: 100,
  multiplier: 2,
  maxDelayMs: 2000,
  jitter: fullJitter,
  maxAttempts: Infinity,
});

/** When a shared structure may try Redis again: at once, or one {@link RECONNECT} wait after a failed call. @internal */
export class Reconnect {
  #run: BackoffRun | undefined;
  #at = Number.NEGATIVE_INFINITY;

  /** A call failed (or its answer is no use) at `now`: the next try waits the backoff's next wait. */
  failed(now: number): void {
    this.#run ??= RECONNECT.start();
    this.#at = now + this.#run.next();
  }

  /** A call answered: the backoff starts over. */
  answered(): void {
    this.#run = undefined;
    this.#at = Number.NEGATIVE_INFINITY;
  }

  /** The next try may go now, its backoff kept for the one after (a flush's one try past it). */
  skip(): void {
    this.#at = Number.NEGATIVE_INFINITY;
  }

  /** Milliseconds until the next try may go (≤ 0: now). */
  waitMs(now: number): number {
    return this.#at - now;
  }
}

/**
 * The key of a shared structure: `<prefix>:{<name>}:<kind>`, after checking `name` and `prefix`.
 * The hash tag {name}: Redis Cluster hashes only what is inside the braces, so all of one
 * structure's keys land in one slot (Redis Cluster specification, "Hash tags"). @internal
 */
export function sharedKey(where: string, o: { name?: unknown; prefix?: unknown }, kind: string): string {
  const name = o.name;
  if (typeof name !== 'string' || name === '' || /[{}]/.test(name)) {
    mistyped(where, 'name', name, 'a non-empty string without { or }', "For example 'payments-api'.");
  }
  // null is a bad value like any other, not "the default".
  const prefix = o.prefix === undefined ? 'ebb' : o.prefix;
  if (typeof prefix !== 'string' || /[{}]/.test(prefix)) {
    mistyped(where, 'prefix', prefix, 'a string without { or }', "Leave it out for 'ebb'.");
  }
  return `${prefix === '' ? '' : `${prefix}:`}{${name}}:${kind}`;
}
