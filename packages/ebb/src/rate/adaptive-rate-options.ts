/**
 * What `adaptiveRate` takes: its options with their documentation (the law's options among them:
 * their checks and defaults are in law-options.ts), the checks of the others, and the check of the
 * seed drawn from `random`. Its own module because the options are read apart from the pacer: a
 * user reads what each option means here, and the controller takes them checked and complete.
 */
import { describe } from '../core/boundary.js';
import { type Clock, clockOption } from '../core/clock.js';
import { type Random, randomOption } from '../core/random.js';
import { checkKeys, mistyped, nonNegative, optionsObject, show } from '../core/validate.js';
import type { IsFailure } from '../retry/options.js';
import { isFailureOption } from './controller.js';
import { LAW_KEYS, type LawOptions, lawOptions } from './law-options.js';

/** Options of {@link adaptiveRate}. Rates are requests per second; durations milliseconds. */
export interface AdaptiveRateOptions<T = unknown> {
  /**
   * The rate to start at. Default `maxRatePerSecond`, itself `Infinity` by default: no limit
   * until the first throttle, which then starts from the rate measured over the last second.
   */
  readonly initialRatePerSecond?: number;
  /** The rate is multiplied by this on a throttle, in (0, 1). Default 0.5. */
  readonly decreaseFactor?: number;
  /**
   * The quiet time — no throttle, some successes, and requests kept waiting by the limit — after
   * which the rate rises one step. It doubles after each relapse (a throttle that follows a
   * rise), up to `maxCoolOffMs`, and halves after each rise that holds at or above the rate
   * last throttled (a rise that holds below it leaves it backed off) — until the relapse's 429s
   * are paid for by 2 % of the requests sent since: then the backoff is released, and no rise
   * above the level a relapse fell back to comes before. Default 1000.
   */
  readonly coolOffMs?: number;
  /**
   * The longest cool-off, however many relapses. Default 8000 (three doublings of 1 s). Probes
   * above a limit that has not moved are spaced by what they cost (2 % of the requests in 429s),
   * not by this: the backoff is released once the last failed probe is paid for.
   */
  readonly maxCoolOffMs?: number;
  /**
   * How far below the limit it has learned the controller settles, as a fraction: after a
   * throttle it paces at `(1 − margin)` × the rate the service actually accepted. Room for timer
   * jitter and for a limiter without burst. In [0, 0.5). Default 0.05.
   */
  readonly margin?: number;
  /**
   * The first rise after a fall, as a fraction of the rate: 0.1 adds 10 % — near the rate last
   * throttled, of the rate up to 5 r/s only: above that, every controller probes by the same
   * `increase` × 5 r/s (0.5 r/s by default), so that independent processes sharing a limit
   * drift toward equal shares (for tens of seconds; over minutes their shares wander, and a fleet
   * that must share evenly uses `sharedRate`). Each rise that holds doubles the next step, up to
   * `1 / decreaseFactor − 1`, but a doubled step never passes the rate last throttled; once a
   * probe has held past it (any amount past a probe's rate that failed, a whole step past the
   * rate of any other cut), steps of the rate double again up to `2 × increase`, or up to
   * `(1 − margin) / 0.75 − 1` if larger (26.7 % by default: the largest step whose undoing cuts
   * less than a quarter). Must rise less than a decrease falls:
   * `(1 + increase) · decreaseFactor < 1`. Default 0.1.
   */
  readonly increase?: number;
  /** The rate never falls below this. Default 1. */
  readonly minRatePerSecond?: number;
  /** The rate never rises above this. Default `Infinity`. */
  readonly maxRatePerSecond?: number;
  /**
   * Names of the priority classes, most important first. A request of a class goes before any
   * waiting request of a later class; within a class, first come, first served. Default
   * `['high', 'normal', 'low']`.
   */
  readonly priorities?: readonly string[];
  /** The class of requests made through the controller itself (not a `priority()` view). Default `'normal'`. */
  readonly defaultPriority?: string;
  /**
   * The longest the server's word holds the controller, in ms: a `Retry-After` (or an exhausted
   * `RateLimit` policy) pauses every request of the controller for at most this long, and a
   * `RateLimit` pace lasts at most this long after the response that gave it. Default 60000.
   * 0 ignores what servers say. (The executor's option of the same name gives up past it; the
   * controller cuts the pause to it.)
   */
  readonly maxRetryAfterMs?: number;
  /**
   * The same as `maxRetryAfterMs`, by its former name (`ebb/redis`'s `sharedRate` passes it on):
   * give one of the two.
   * @deprecated Use `maxRetryAfterMs`.
   */
  readonly maxServerWaitMs?: number;
  /**
   * Which outcomes of the calls it runs in a pipeline are throttles — the same predicate as
   * `retry()`'s, asked about each outcome (`{ ok: false, error }` or `{ ok: true, value }`):
   * `'throttled'` cuts the rate; `false` on a value is a success; anything else a failure (which
   * moves nothing but is read for a `Retry-After`). Default `defaultIsFailure`: an error with
   * `throttled: true` (`ebb/http` sets it on a 429) is a throttle. Say what your client returns:
   * `isFailure: (o) => (o.ok && o.value.status === 429 ? 'throttled' : defaultIsFailure(o))`.
   * `record()` (`withRetry()`'s `use`) takes the outcome it is given.
   */
  readonly isFailure?: IsFailure<T>;
  /** Time source; default the system clock. */
  readonly clock?: Clock;
  /**
   * Randomness, in [0, 1), drawn once: the seed that spreads this controller's waits for a rise
   * over one more cool-off, so that independent processes sharing a limit, all cut by the same
   * overshoot, do not all probe it again at the same moment (rate/law.ts, LAW.probeSpread).
   * Default `Math.random`; `seeded(n)` from ebb makes the rises reproducible, and a `random` that
   * returns 0 draws no spread (each rise exactly one cool-off after the change before it).
   */
  readonly random?: Random;
}

/** Every option of {@link adaptiveRate}, checked, with its default filled in: what the controller is built from. */
export type AdaptiveRateConfig = LawOptions & {
  readonly priorities: readonly string[];
  readonly defaultPriority: string;
  readonly maxRetryAfterMs: number;
  readonly isFailure: IsFailure | undefined;
  readonly clock: Clock;
  readonly random: Random;
};

/**
 * Checks `adaptiveRate`'s options and fills in their defaults. A bad one is a
 * `TypeError`/`RangeError` naming the option, the value and the fix.
 */
export function adaptiveRateOptions<T = unknown>(options?: AdaptiveRateOptions<T>): AdaptiveRateConfig {
  const where = 'adaptiveRate()';
  const o = optionsObject(where, options) as AdaptiveRateOptions;
  // The former name is accepted, and not offered in the message about an unknown option.
  const { maxServerWaitMs: _, ...known } = o;
  checkKeys(where, known, [
    ...LAW_KEYS,
    'priorities',
    'defaultPriority',
    'maxRetryAfterMs',
    'isFailure',
    'clock',
    'random',
  ]);
  const law = lawOptions(where, o);
  const priorities = o.priorities === undefined ? ['high', 'normal', 'low'] : o.priorities;
  if (
    !Array.isArray(priorities) ||
    priorities.length === 0 ||
    priorities.some((p) => typeof p !== 'string' || p === '') ||
    new Set(priorities).size !== priorities.length
  ) {
    mistyped(where, 'priorities', priorities, 'a non-empty array of distinct names', "For example ['high', 'low'].");
  }
  const defaultPriority = o.defaultPriority === undefined ? 'normal' : o.defaultPriority;
  if (typeof defaultPriority !== 'string' || !priorities.includes(defaultPriority)) {
    mistyped(
      where,
      'defaultPriority',
      defaultPriority,
      `one of the priorities (${priorities.map(show).join(', ')})`,
      o.defaultPriority === undefined ? 'Name the class of requests made through the controller itself.' : undefined,
    );
  }
  if (o.maxRetryAfterMs !== undefined && o.maxServerWaitMs !== undefined) {
    throw new TypeError(`${where}: give \`maxRetryAfterMs\` only (\`maxServerWaitMs\` is its former name).`);
  }
  const maxRetryAfterMs =
    o.maxServerWaitMs === undefined
      ? nonNegative(where, 'maxRetryAfterMs', o.maxRetryAfterMs, 60_000)
      : nonNegative(where, 'maxServerWaitMs', o.maxServerWaitMs, 60_000);
  const isFailure = isFailureOption(where, o.isFailure);
  const clock = clockOption(where, o.clock);
  const random = randomOption(where, o.random) ?? Math.random;
  return {
    ...law,
    priorities,
    defaultPriority,
    maxRetryAfterMs,
    isFailure,
    clock,
    random,
  };
}

/** The law's seed (a whole number in [0, 2³¹ − 1)) from one draw of `random`, checked where it enters. */
export function drawSeed(random: Random): number {
  const u = random();
  if (typeof u !== 'number' || !(u >= 0 && u < 1)) {
    throw new RangeError(`adaptiveRate(): \`random\` returned ${describe(u)}; it must return a number in [0, 1).`);
  }
  return Math.floor(u * (2 ** 31 - 1));
}
