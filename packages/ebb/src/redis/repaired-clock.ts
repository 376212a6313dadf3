import { isThenable } from '../core/boundary.js';
import { type Clock, clockOption, systemClock, unrefSystemClock } from '../core/clock.js';

/**
 * A shared structure's `clock` option: the unref'd system clock when omitted, else the user's
 * clock as every mechanism takes it ({@link clockOption}: checked, and a clock set back read as
 * going on from where it was), {@link repairedClock repaired}. @internal
 */
export function sharedClockOption(where: string, value: unknown): Clock {
  return value === undefined ? unrefSystemClock : repairedClock(clockOption(where, value));
}

/**
 * A shared structure's clock, as {@link clockOption} gave it, repaired for the structure's own
 * reads. These run in timers of its own — lease renewal, batching, reconnection — where no
 * caller could be told of a fault, and what they compute goes to Redis, where every process of
 * the fleet reads it. So a reading that throws or is not a finite number is replaced by the last
 * good one (0 before any): time stands still while the clock is broken, and resumes with it. A
 * `sleep()` that throws, returns no promise or fails other than by its signal's abort waits on a
 * host timer instead (one that does not hold the process open). Nothing the clock does reaches
 * the host or the store. The system clocks are returned as they are. @internal
 */
export function repairedClock(clock: Clock): Clock {
  if (clock === systemClock || clock === unrefSystemClock) return clock;
  let last = 0;
  return {
    now() {
      let t: unknown;
      try {
        t = clock.now();
      } catch {
        // Repaired below, as any other bad reading.
      }
      if (typeof t === 'number' && t - t === 0) last = t;
      return last;
    },
    sleep(ms, signal) {
      const host = () => unrefSystemClock.sleep(ms, signal);
      let slept: unknown;
      try {
        slept = clock.sleep(ms, signal);
      } catch {
        return host();
      }
      if (!isThenable<void>(slept)) return host();
      return Promise.resolve(slept).then(undefined, (error: unknown) =>
        signal?.aborted ? Promise.reject(error) : host(),
      );
    },
  };
}
