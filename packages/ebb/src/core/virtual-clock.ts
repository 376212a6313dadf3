import { badSleep, type Clock } from './clock.js';
import { DEV } from './dev.js';
import { invalid } from './validate.js';

/**
 * A `Clock` whose time moves only when told to: for tests and simulations of code that sleeps.
 * Sleeps resolve in order of their due time (ties in the order they were made); between two
 * wake-ups the clock lets every pending promise callback run, so the code under test can react
 * and schedule its next sleep before time moves on.
 *
 * @example
 * const clock = virtualClock();
 * const done = retry(op, { clock });
 * await clock.runAll();   // jumps from sleep to sleep until nothing is waiting
 * await done;
 */
export interface VirtualClock extends Clock {
  /** Sleeps not yet due (aborted ones removed). */
  readonly pending: number;
  /** Moves time forward by `ms`, waking every sleep that falls due, in order. */
  advance(ms: number): Promise<void>;
  /** Moves time to each next wake-up until no sleep is pending. Throws after `maxWakeups` (default 1e6). */
  runAll(maxWakeups?: number): Promise<void>;
}

interface Timer {
  readonly due: number;
  readonly wake: () => void;
}

const macrotask: (f: () => void) => void =
  typeof setImmediate === 'function' ? (f) => setImmediate(f) : (f) => setTimeout(f, 0);

/** Lets every queued promise callback run (one macrotask turn drains the microtask queue). */
function flush(): Promise<void> {
  return new Promise((resolve) => macrotask(resolve));
}

/** A virtual clock starting at `startMs` (default 0). */
export function virtualClock(startMs = 0): VirtualClock {
  if (typeof startMs !== 'number' || !Number.isFinite(startMs)) {
    invalid('virtualClock()', 'startMs', startMs, DEV ? 'a finite number' : '', DEV ? 'For example 0.' : '');
  }
  let now = startMs;
  const timers: Timer[] = [];

  // Ties keep the order they were made: a new sleep goes after every one due at the same time.
  const insert = (t: Timer): void => {
    let i = timers.length;
    while (i > 0 && (timers[i - 1] as Timer).due > t.due) i--;
    timers.splice(i, 0, t);
  };

  const wakeNext = (until: number): boolean => {
    const t = timers[0];
    if (!t || t.due > until) return false;
    timers.shift();
    if (t.due > now) now = t.due;
    t.wake();
    return true;
  };

  return {
    now: () => now,
    sleep(ms: number, signal?: AbortSignal): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        // A NaN due time would break the order of every other sleep on this clock.
        if (typeof ms !== 'number' || !(ms >= 0)) {
          reject(badSleep(ms));
          return;
        }
        if (signal?.aborted) {
          reject(signal.reason);
          return;
        }
        const onAbort = (): void => {
          const i = timers.indexOf(timer);
          if (i >= 0) timers.splice(i, 1);
          reject((signal as AbortSignal).reason);
        };
        const timer: Timer = {
          due: now + ms,
          wake: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        // Stryker disable next-line ObjectLiteral,BooleanLiteral: `once` changes nothing here: `wake` removes the listener, and a signal fires `abort` once.
        signal?.addEventListener('abort', onAbort, { once: true });
        insert(timer);
      });
    },
    get pending() {
      return timers.length;
    },
    async advance(ms: number): Promise<void> {
      if (typeof ms !== 'number' || !(ms >= 0)) invalid('advance()', 'ms', ms, DEV ? 'a number >= 0' : '');
      const until = now + ms;
      await flush();
      while (wakeNext(until)) await flush();
      now = until;
      await flush();
    },
    async runAll(maxWakeups = 1_000_000): Promise<void> {
      await flush();
      for (let n = 0; timers.length > 0; n++) {
        if (n >= maxWakeups)
          throw new Error(`virtualClock.runAll(): still ${timers.length} sleeps pending after ${maxWakeups} wake-ups`);
        wakeNext(Infinity);
        await flush();
      }
    },
  };
}
