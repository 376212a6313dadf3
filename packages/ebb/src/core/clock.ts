import { DEV } from './dev.js';
import { newTimeline, rebase } from './timeline.js';
import { brief, mistyped } from './validate.js';

// The timeline's step lives in its own module, so that the executor carries it without the clocks.
export { newTimeline, rebase, type Timeline } from './timeline.js';

/**
 * Time, as a parameter. Every part of ebb that waits or measures takes a `Clock`, so tests and
 * simulators run in virtual time and nothing patches globals.
 */
export interface Clock {
  /**
   * Milliseconds on a monotonic scale; only differences matter. Every part of ebb that takes a
   * `clock` reads a clock set back (a wall clock stepped by NTP) as no time passing, then going on
   * from where it was: a step back neither fails a call nor holds a wait or a breaker for its
   * length. A reading that is not a finite number fails the call that read it.
   */
  now(): number;
  /**
   * Resolves after `ms` milliseconds. When `signal` aborts first, rejects at once with
   * `signal.reason` and leaves no timer or listener behind; an already-aborted signal rejects
   * without waiting.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The longest delay one `setTimeout` accepts (2^31 - 1 ms, about 24.8 days); longer ones are chained. */
const MAX_TIMER_MS = 2_147_483_647;

// Bound once: a bound performance.now is about 20 ns cheaper a call than a lookup each time,
// and the success path of retry() reads this clock once.
const monotonicNow: () => number =
  typeof performance !== 'undefined' && typeof performance.now === 'function'
    ? performance.now.bind(performance)
    : Date.now;

/**
 * Sleeps on the host's timers. With `unref`, a pending sleep does not keep a Node.js process
 * alive (for background work); elsewhere `unref` is ignored, as timers there have no such hold.
 */
function timerSleep(ms: number, signal: AbortSignal | undefined, unref: boolean): Promise<void> {
  // setTimeout would take NaN or a negative delay as 1 ms: refuse it instead.
  if (typeof ms !== 'number' || !(ms >= 0)) return Promise.reject(badSleep(ms));
  // Stryker disable next-line BlockStatement: without this shortcut the general path below makes the same single timer, with the same unref; the shortcut only saves its closures.
  if (signal === undefined && ms <= MAX_TIMER_MS) {
    // The common case, as lean as a bare timer: a pending retry holds little more than this.
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      // Stryker disable next-line OptionalChaining: Node.js timers, where the tests run, have unref; the `?.` is for hosts whose timer handle is a number.
      if (unref) (timer as { unref?: () => void }).unref?.();
    });
  }
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    // Timer handles differ between Node.js (an object) and browsers (a number).
    let timer: ReturnType<typeof setTimeout> | undefined;
    let remaining = ms;
    const onAbort = (): void => {
      clearTimeout(timer);
      reject((signal as AbortSignal).reason);
    };
    const arm = (): void => {
      // setTimeout would treat a longer delay as 1 ms; chain timers instead.
      const step = remaining > MAX_TIMER_MS ? MAX_TIMER_MS : remaining;
      remaining -= step;
      timer = setTimeout(remaining > 0 ? arm : done, step);
      // Stryker disable next-line OptionalChaining: as above, Node.js timers have unref.
      if (unref) (timer as { unref?: () => void }).unref?.();
    };
    const done = (): void => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    };
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: `done` removes the listener, and a signal fires `abort` once.
    signal?.addEventListener('abort', onAbort, { once: true });
    arm();
  });
}

/** The error of a sleep whose length is not a number >= 0. @internal */
export function badSleep(ms: unknown): RangeError {
  return new RangeError(
    DEV
      ? `clock.sleep(): expected \`ms\` to be a number >= 0, got ${typeof ms === 'number' ? String(ms) : typeof ms}.`
      : brief('clock.sleep()', 'ms', ms),
  );
}

/** The real clock: `performance.now()` and `setTimeout`. */
export const systemClock: Clock = {
  now: monotonicNow,
  sleep: (ms, signal) => timerSleep(ms, signal, false),
};

/**
 * The real clock whose sleeps do not keep a Node.js process alive (`timer.unref()`), for
 * background work that should not delay exit. Same as `systemClock` outside Node.js.
 */
export const unrefSystemClock: Clock = {
  now: monotonicNow,
  sleep: (ms, signal) => timerSleep(ms, signal, true),
};

/**
 * Validates a `clock` option: the system clock when omitted, a TypeError naming it when not a
 * Clock. A clock of the user's is returned as a view that reads a clock set back as going on
 * from where it was ({@link rebase}): a wall clock stepped back by an hour would otherwise hold
 * a breaker open, or a paced request asleep, for that hour. Readings that are not finite numbers,
 * and throws, pass through unchanged, for the mechanism's own checks. The system clocks are
 * monotonic, and returned as they are. @internal
 */
export function clockOption(where: string, value: unknown): Clock {
  if (value === undefined) return systemClock;
  const c = value as Partial<Clock> | null;
  if (typeof c !== 'object' || c === null || typeof c.now !== 'function' || typeof c.sleep !== 'function') {
    mistyped(where, 'clock', value, DEV ? 'a Clock { now(), sleep(ms, signal) }' : '');
  }
  const clock = value as Clock;
  if (clock === systemClock || clock === unrefSystemClock) return clock;
  const time = newTimeline();
  return {
    now() {
      const t = clock.now();
      return typeof t === 'number' && t - t === 0 ? rebase(time, t) : t;
    },
    sleep: (ms, signal) => clock.sleep(ms, signal),
  };
}
