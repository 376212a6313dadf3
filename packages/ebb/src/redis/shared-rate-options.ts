/**
 * What `sharedRate` takes and gives: its options with their documentation, its counters, the
 * controller's interface, and the checks of every option in the order a caller meets them (the
 * law's by `adaptiveRate`'s own checks, then the key, the client, the clock and the timings). Its
 * own module because these are read apart from the protocol: the class in shared-rate.ts takes the
 * options checked and complete.
 */
import { type Clock, clockOption, unrefSystemClock } from '../core/clock.js';
import { invalid, nonNegative, optionsObject } from '../core/validate.js';
import { type AdaptiveRateOptions, adaptiveRate } from '../rate/adaptive-rate.js';
import type { AdaptiveRateController } from '../rate/controller.js';
import { LAW_KEYS, type LawOptions, lawOptions } from '../rate/law-options.js';
import type { Mechanism } from '../retry/mechanism.js';
import { type RedisScripts, redisScripts } from './client.js';
import {
  listenerOption,
  msOption,
  type SharedEvent,
  type SharedListener,
  type SharedMode,
  sharedKey,
} from './protocol.js';
import type { SharedRateInspection } from './rate-lease.js';
import { repairedClock } from './repaired-clock.js';
import { checkRedisKeys, pick, validateAs } from './validate-as.js';

/** Options of {@link sharedRate}. */
export interface SharedRateOptions extends Pick<AdaptiveRateOptions, (typeof LAW_KEYS)[number] | 'maxServerWaitMs'> {
  /** The caller's client: node-redis, ioredis or a {@link RedisScripts}. Required. */
  readonly client: unknown;
  /** The limit's name; its keys are `<prefix>:{<name>}:rate…`, one Cluster slot. Required. */
  readonly name: string;
  /** Key prefix, default `'ebb'`. */
  readonly prefix?: string;
  /** Longest wait for one Redis call in ms, after which the process falls back to a local controller. Default 100. */
  readonly commandTimeoutMs?: number;
  /**
   * How long a lease of rate share lasts, in ms: each process renews its share this often while
   * it has traffic (one `EVALSHA`), and learns the fleet's changes at the latest then. A lease not
   * renewed for 3 × `leaseMs` (a process that died) returns its share to the fleet. Default 500.
   */
  readonly leaseMs?: number;
  /** Called on fallback, resync, state lost and repair (see `SharedEvent`). A throw goes no further. */
  readonly onEvent?: (event: SharedEvent) => void;
  /**
   * Time source for pacing, timeouts and timers; default the system clock, whose waits for a
   * caller's request keep a Node.js process alive while the lease's renewals and reconnections
   * (unref'd) do not. The rate's own timers read a broken clock repaired (a reading that throws
   * or is not a finite number stands for the last good one, a clock set back goes on from where
   * it was, a failed sleep waits on a host timer); a call waiting for its turn fails with the
   * clock's error instead.
   */
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
  /** Times this process found a bad stored value and rewrote the fleet's state (events `'repair'`). */
  readonly repairs: number;
  /** Times this process found the fleet's state it knew gone (events `'state-lost'`). */
  readonly stateLosses: number;
  /** Throttles of requests sent before the fleet's last change, not reported: old news (each process reports one per epoch). */
  readonly staleThrottles: number;
}

/** The controller {@link sharedRate} returns: an `adaptiveRate` for a whole fleet. */
export interface SharedRate extends AdaptiveRateController, Mechanism {
  /** This process's share of the fleet's rate while shared; the local controller's rate while on fallback. */
  readonly ratePerSecond: number;
  /** The fleet's rate as last heard from Redis (`Infinity`: no limit learned yet). */
  readonly fleetRatePerSecond: number;
  /** The fleet's congestion epoch as last heard: it grows by one for each throttle event the fleet handled. */
  readonly epoch: number;
  /** The fleet state's generation as last heard (0: none yet); another one means the state was lost, repaired or reset. */
  readonly generation: number;
  /** Processes holding a lease, as last heard. */
  readonly members: number;
  readonly mode: SharedMode;
  readonly stats: SharedRateStats;
  /** The Redis key of the fleet's state. */
  readonly key: string;
  /** Requests waiting for their turn. */
  readonly waiting: number;
  /** Resolves once the first lease was granted or failed (bounded by `commandTimeoutMs`); never rejects. */
  ready(): Promise<void>;
  /**
   * Gives the share back to the fleet at once and stops the timers. Call before a process exits.
   * Afterwards the member paces alone, as every ebb/redis structure's changes after `close()` stay
   * local: requests still waiting and new ones go to its local fallback controller (an
   * `adaptiveRate` within `maxRatePerSecond`), which starts at the rate the member last had (its
   * share, or the fallback's rate); `mode` is `'local'` and no lease is asked for again.
   */
  close(): Promise<void>;
  /** Reads the fleet's state without changing it and without taking a lease; rejects if Redis fails or times out. */
  inspect(): Promise<SharedRateInspection>;
  /**
   * Sets the fleet's rate and control state back to `initialRatePerSecond` with a new generation,
   * while processes run: their leases stay, each hears the new generation at its next renewal and
   * goes on from it. Rejects if Redis fails or times out.
   */
  reset(): Promise<void>;
}

/** Every option of {@link sharedRate}, checked, with its default filled in: what the controller is built from. */
export interface SharedRateConfig {
  readonly where: string;
  /** The fleet state's key (its hash tag names the Cluster slot). */
  readonly key: string;
  readonly law: LawOptions;
  readonly scripts: RedisScripts;
  /**
   * The clock as given, else the (ref'd) system clock: the gate and the fallback's controller wait
   * on it for a caller's request; the gate reads it, checked, so a broken clock fails a waiting call.
   */
  readonly clock: Clock;
  /**
   * The same clock repaired ({@link repairedClock}) for the rate's own reads — the lease's
   * renewal, the meter, the reconnection — which run in timers where no caller could be told of a
   * fault, and reach Redis.
   */
  readonly ownClock: Clock;
  readonly commandTimeoutMs: number;
  readonly leaseMs: number;
  readonly onEvent: SharedListener;
  /** What the local controller of a fallback is built from: the law's options as given. */
  readonly localOptions: AdaptiveRateOptions;
}

/** Checks `sharedRate`'s options and fills in their defaults; a bad one is a `TypeError`/`RangeError` naming it. */
export function sharedRateOptions(options: SharedRateOptions): SharedRateConfig {
  const where = 'sharedRate()';
  const o = optionsObject(where, options) as SharedRateOptions;
  checkRedisKeys(where, o, [
    ...LAW_KEYS,
    'maxServerWaitMs',
    'client',
    'name',
    'prefix',
    'commandTimeoutMs',
    'leaseMs',
    'onEvent',
    'clock',
  ]);
  // The local twin checks the law's options (and is what a fallback runs).
  validateAs(where, 'adaptiveRate()', () => adaptiveRate(pick(o as never, [...LAW_KEYS, 'maxServerWaitMs'])));
  const law = lawOptions(where, o);
  // The hash tag {name}: the state, the leases, their expiry and the join order share one Cluster slot.
  const key = sharedKey(where, o, 'rate');
  const scripts = redisScripts(o.client, where);
  // A wait that holds a caller's request keeps Node.js alive, as adaptiveRate's does; the rate's own timers do not.
  const clock = clockOption(where, o.clock);
  const commandTimeoutMs = msOption(where, 'commandTimeoutMs', o.commandTimeoutMs, 100, 'For example 100.');
  const leaseMs = nonNegative(where, 'leaseMs', o.leaseMs, 500, false, 'For example 500.');
  // A lease expires three leases after its renewal; the scripts take an expiry more than a day ahead for a broken one.
  if (!(leaseMs >= 10 && leaseMs <= 3_600_000)) {
    invalid(where, 'leaseMs', o.leaseMs, 'a finite number from 10 to 3600000 (an hour)', 'For example 500.');
  }
  return {
    where,
    key,
    law,
    scripts,
    clock,
    ownClock: repairedClock(o.clock === undefined ? unrefSystemClock : clock),
    commandTimeoutMs,
    leaseMs,
    onEvent: listenerOption(where, o.onEvent),
    localOptions: pick(o as never, [...LAW_KEYS, 'maxServerWaitMs']) as AdaptiveRateOptions,
  };
}
