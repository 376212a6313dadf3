import { readNow } from '../core/boundary.js';
import { type Clock, clockOption } from '../core/clock.js';
import { DEV } from '../core/dev.js';
import { formatMs } from '../core/format-ms.js';
import type { Random } from '../core/random.js';
import { check, checkKeys, invalid, optionsObject } from '../core/validate.js';
import { Backoff, type BackoffJSON, type BackoffRun, randomOf } from './backoff.js';
import { draw } from './draw.js';
import type { Jitter, RowBounds } from './jitter.js';
import { noJitter } from './jitter-none.js';
import { proportionalJitter } from './jitter-proportional.js';
import { LIMITS, type LimitOptions } from './limits.js';
import { SEGMENTS, type Segment } from './segment.js';
import { sequenceCurve } from './sequence.js';
import { DERIVE } from './with-options.js';

/*
 * Google's `ExponentialBackOff` (google-http-java-client, `com.google.api.client.util`), as the
 * class computes it — read from its source on GitHub and from the bytecode of the 1.42.0 jar that
 * Debian ships (`javap -c`), and checked digit for digit against that jar by
 * test/fidelity/google.test.ts:
 *
 * - `nextBackOffMillis()` first returns STOP when `getElapsedTimeMillis() > maxElapsedTimeMillis`
 *   (elapsed in whole milliseconds, `nanos / 1_000_000`), *before* any wait: a wait may end past
 *   the budget, and the next call stops.
 * - Otherwise it returns `getRandomValueFromInterval(factor, Math.random(), current)`:
 *   `(int) (min + random · (max − min + 1))` with `delta = factor · current`,
 *   `min = current − delta`, `max = current + delta` (doubles), so whole milliseconds in
 *   [min, max]: `ExponentialBackOffTest` expects 1, 1, 2, 2, 3, 3 for random 0, .33, .34, .66,
 *   .67, .99 at interval 2, factor 0.5.
 * - Then `incrementCurrentInterval()`: the `int` interval becomes `maxIntervalMillis` once
 *   `current >= max / multiplier` (a double division), else `current *= multiplier` (truncated
 *   to int). With multiplier 1, or 1000 ms × 1.001 (1000 · 1.001 = 1000.9999999999999), the
 *   interval stops growing and stays constant.
 * - The builder refuses (`Preconditions.checkArgument`): initial <= 0, factor outside [0, 1),
 *   multiplier < 1 (or NaN), max < initial, maxElapsedTime <= 0. Intervals and budgets are Java
 *   `int`s (at most 2^31 − 1).
 */

/** Java's `Integer.MAX_VALUE`. Google's intervals and budget are `int` milliseconds. */
export const JAVA_INT_MAX = 2_147_483_647;

/** Java's narrowing `(int)` of a double: NaN → 0, saturating at the int range, else toward zero. */
function javaInt(x: number): number {
  if (Number.isNaN(x)) return 0;
  if (x >= JAVA_INT_MAX) return JAVA_INT_MAX;
  if (x <= -JAVA_INT_MAX - 1) return -JAVA_INT_MAX - 1;
  return Math.trunc(x) + 0;
}

/**
 * Google's randomized wait for `intervalMs`: `(int) (min + random · (max − min + 1))`, whole
 * milliseconds from `interval·(1−factor)` to `interval·(1+factor)` (JS and Java doubles compute
 * the same bits). Source: `ExponentialBackOff.getRandomValueFromInterval`. @internal
 */
export function googleRandomizedInterval(factor: number, random: number, intervalMs: number): number {
  const delta = factor * intervalMs;
  const min = intervalMs - delta;
  const max = intervalMs + delta;
  return javaInt(min + random * (max - min + 1));
}

/** Google's next interval: the cap once `current >= max / multiplier`, else `(int) (current · multiplier)`. @internal */
export function googleNextInterval(currentMs: number, multiplier: number, maxIntervalMs: number): number {
  return currentMs >= maxIntervalMs / multiplier ? maxIntervalMs : javaInt(currentMs * multiplier);
}

/**
 * How many intervals `describePolicy()` tabulates. The table ends where the interval reaches the cap
 * or stops growing (it then repeats); only multipliers within about 0.1 % of 1 applied to
 * intervals of millions of ms can still be growing here. Runs compute every interval, so they
 * are exact however long they last.
 */
const TABLE_ROWS = 10_000;

function intervalTable(initialMs: number, multiplier: number, maxMs: number): number[] {
  const out = [initialMs];
  let current = initialMs;
  while (out.length < TABLE_ROWS) {
    const next = googleNextInterval(current, multiplier, maxMs);
    if (next === current) break;
    out.push(next);
    current = next;
  }
  return out;
}

/** Options of {@link googleExponentialBackoff}, named as the Java builder names them (in ms). */
export interface GoogleExponentialBackoffOptions {
  /** Default 500. A whole number of ms from 1 to 2^31 − 1. */
  readonly initialIntervalMs?: number;
  /** Default 0.5: each wait is drawn in whole ms from [interval·(1−f), interval·(1+f)]; 0 <= f < 1. */
  readonly randomizationFactor?: number;
  /** Default 1.5; >= 1 (`Infinity` jumps to the cap at once, as in Java). */
  readonly multiplier?: number;
  /** Caps the interval, not the randomized wait. Default 60 000; whole ms from `initialIntervalMs` to 2^31 − 1. */
  readonly maxIntervalMs?: number;
  /**
   * Default 900 000 (15 minutes); whole ms from 1 to 2^31 − 1, or `Infinity` (ebb's: no budget).
   * Checked before each wait: once the elapsed time (whole ms) is past it, the policy stops.
   */
  readonly maxElapsedTimeMs?: number;
  /**
   * Measures the elapsed time when a run's `next()` is not told it (Java's `setNanoClock`).
   * Default: the system clock. Pass the same virtual clock as `retry()`'s in tests.
   */
  readonly clock?: Clock;
}

interface GoogleParams {
  readonly initialIntervalMs: number;
  readonly randomizationFactor: number;
  readonly multiplier: number;
  readonly maxIntervalMs: number;
  readonly maxElapsedTimeMs: number;
  readonly clock: Clock;
}

// Backoff values are frozen, so a subclass cannot add fields: its parameters live here.
const PARAMS = new WeakMap<GoogleBackoff, GoogleParams>();

function paramsOf(b: GoogleBackoff): GoogleParams {
  return PARAMS.get(b) as GoogleParams;
}

/**
 * Google's whole-millisecond draw as a jitter value: what `describeRow()` reads for a Google
 * policy's rows (`googleRow`). Runs of a {@link GoogleBackoff} draw through `GoogleRun`, which
 * also applies the stop rule. @internal
 */
function googleJitter(factor: number): Jitter {
  return Object.freeze({
    name: factor === 0 ? 'none' : `proportional:${factor}`,
    toString: () => `±${+(factor * 100).toPrecision(3)} % (whole ms)`,
    draw: (d: number, random: Random) => googleRandomizedInterval(factor, draw(random), d),
    row: (s: Segment, k: number, attempt: number) => googleRow(s, factor, k, attempt),
  });
}

/**
 * Google's `ExponentialBackOff` as a Backoff value. Its runs reproduce the Java class exactly,
 * stop rule included: a run stops when the operation's elapsed time, in whole milliseconds, is
 * already past `maxElapsedTimeMs` when a wait is asked for — so, unlike ebb's own policies, a
 * wait may end past the budget (budget 1000 ms, 500 ms ×1.5, no jitter: 3 calls, at 0, 500 and
 * 1250 ms). For the executor its `maxElapsedMs` is `Infinity`: the budget is the run's rule,
 * and no attempt is cut short at it (the Java class has no such deadline either).
 *
 * `describePolicy()` shows the intervals and the whole-millisecond range and mean of the waits
 * exactly (for interval 1125 and factor 0.5: 562 to 1688 ms).
 *
 * `withOptions()` keeps Google's rules for `maxAttempts` and `maxElapsedMs` (the budget stays
 * Google's); any other option gives an ordinary ebb policy with these intervals, proportional
 * jitter of the same factor, and `maxElapsedTimeMs` as ebb's deadline (give up rather than sleep
 * past it).
 */
export class GoogleBackoff extends Backoff {
  /** @internal Use {@link googleExponentialBackoff}. */
  constructor(params: GoogleParams, maxAttempts: number) {
    const segment: Segment = {
      curve: sequenceCurve(
        Object.freeze(intervalTable(params.initialIntervalMs, params.multiplier, params.maxIntervalMs)),
      ),
      jitter: googleJitter(params.randomizationFactor),
      ceiling: Infinity,
      maxIntervalMs: Infinity,
      maxDelayMs: Infinity,
      rows: Infinity,
    };
    // The budget is the run's own (checked before each wait, as Java does), so the executor sees none.
    super([segment], maxAttempts, Infinity);
    PARAMS.set(this, Object.freeze({ ...params }));
  }

  /** The first interval in ms (Java `initialIntervalMillis`). */
  get initialIntervalMs(): number {
    return paramsOf(this).initialIntervalMs;
  }
  /** The randomization factor. */
  get randomizationFactor(): number {
    return paramsOf(this).randomizationFactor;
  }
  /** The interval's growth factor. */
  get multiplier(): number {
    return paramsOf(this).multiplier;
  }
  /** The interval's cap in ms. */
  get maxIntervalMs(): number {
    return paramsOf(this).maxIntervalMs;
  }
  /** Google's elapsed-time budget in ms, checked before each wait (`Infinity`: none). */
  get maxElapsedTimeMs(): number {
    return paramsOf(this).maxElapsedTimeMs;
  }

  /**
   * Starts a run. `clock` measures the elapsed time from this call when the caller of `next()`
   * does not pass the operation's elapsed time itself (Java's `NanoClock`; default the policy's
   * `clock` option, itself the system clock by default).
   */
  override start(random: Random = Math.random, clock?: Clock): BackoffRun {
    const p = paramsOf(this);
    return new GoogleRun(
      p,
      this.maxAttempts,
      randomOf(random),
      clock === undefined ? p.clock : clockOption('start()', clock),
    );
  }

  /** `Google ExponentialBackOff 500 ms ×1.5, ±50 % (whole ms), 1 min interval cap, within 15 min`. */
  override toString(): string {
    const p = paramsOf(this);
    return [
      `Google ExponentialBackOff ${formatMs(p.initialIntervalMs)} ×${p.multiplier}`,
      p.randomizationFactor && this[SEGMENTS][0]?.jitter,
      `${formatMs(p.maxIntervalMs)} interval cap`,
      this.maxAttempts < Infinity && `${this.maxAttempts} attempts`,
      p.maxElapsedTimeMs < Infinity ? `within ${formatMs(p.maxElapsedTimeMs)}` : 'no time budget',
    ]
      .filter(Boolean)
      .join(', ');
  }

  /** The builder's options (`type: 'google'`), and `maxAttempts`. */
  override toJSON(): BackoffJSON {
    const { clock: _, ...p } = paramsOf(this);
    return { type: 'google', ...p, maxAttempts: this.maxAttempts };
  }

  /** `withOptions()`: Google's rules for `maxAttempts` and `maxElapsedMs`, ebb's for the rest. @internal */
  [DERIVE](o: LimitOptions, apply: (b: Backoff) => Backoff): Backoff {
    const p = paramsOf(this);
    if (Object.keys(o).every((k) => k === 'maxAttempts' || k === 'maxElapsedMs')) {
      return new GoogleBackoff(
        {
          ...p,
          maxElapsedTimeMs:
            o.maxElapsedMs === undefined
              ? p.maxElapsedTimeMs
              : budget('withOptions()', 'maxElapsedMs', o.maxElapsedMs, Number.NaN),
        },
        o.maxAttempts === undefined
          ? this.maxAttempts
          : check('withOptions()', 'maxAttempts', o.maxAttempts, LIMITS.maxAttempts),
      );
    }
    // These intervals under ebb's rules: continuous jitter, and the budget as the executor's deadline.
    const s = this[SEGMENTS][0] as Segment;
    const f = p.randomizationFactor;
    return apply(
      new Backoff([{ ...s, jitter: f === 0 ? noJitter : proportionalJitter(f) }], this.maxAttempts, p.maxElapsedTimeMs),
    );
  }
}

/** ∫_0^x floor(t) dt, for x >= 0. */
function floorIntegral(x: number): number {
  const f = Math.floor(x);
  return (f * (f - 1)) / 2 + f * (x - f);
}

/**
 * The exact range and mean of a Google run's wait at row `n` (describePolicy()'s row): whole ms, from
 * the draw at random 0 to the draw at random 1 − 2^−53, mean `E[floor(min + r·(max − min + 1))]`.
 * @internal
 */
export function googleRow(s: Segment, f: number, n: number, attempt = n): RowBounds {
  const c = s.curve as unknown as { readonly delaysMs: readonly number[] };
  const interval = c.delaysMs[Math.min(n, c.delaysMs.length) - 1] as number;
  const low = googleRandomizedInterval(f, 0, interval);
  const high = googleRandomizedInterval(f, 1 - 2 ** -53, interval);
  const delta = f * interval;
  const a = interval - delta;
  const width = interval + delta - a + 1;
  // `(int)` saturates: every draw at or past 2^31 − 1 is 2^31 − 1, so that part of the range
  // counts at the cap, not at its floor.
  const end = a + width;
  const saturated = end > JAVA_INT_MAX ? end - JAVA_INT_MAX : 0;
  const mean = (floorIntegral(end - saturated) - floorIntegral(a) + saturated * JAVA_INT_MAX) / width;
  return { attempt, delayMs: interval, minDelayMs: low, maxDelayMs: high, meanDelayMs: mean };
}

class GoogleRun implements BackoffRun {
  readonly #p: GoogleParams;
  readonly #maxAttempts: number;
  readonly #random: Random;
  readonly #clock: Clock;
  readonly #started: number;
  #interval: number;
  #failures = 0;

  constructor(p: GoogleParams, maxAttempts: number, random: Random, clock: Clock) {
    this.#p = p;
    this.#maxAttempts = maxAttempts;
    this.#random = random;
    this.#clock = clock;
    this.#started = readNow(clock);
    this.#interval = p.initialIntervalMs;
  }

  /**
   * The next wait in whole ms, or -1 (Java's STOP). `elapsedMs` is the operation's elapsed
   * time; without it the run reads its clock, from `start()`. An elapsed time or a clock reading
   * that is not a number (NaN among them) is refused: compared with the budget it would never
   * stop the run.
   */
  next(elapsedMs?: number): number {
    if (++this.#failures >= this.#maxAttempts) return -1;
    const p = this.#p;
    const elapsed = elapsedMs === undefined ? readNow(this.#clock) - this.#started : elapsedMs;
    if (typeof elapsed !== 'number' || Number.isNaN(elapsed)) {
      invalid(
        'next()',
        'elapsedMs',
        elapsed,
        DEV ? 'a number of milliseconds' : '',
        DEV ? 'Leave it out for the run to read its clock.' : '',
      );
    }
    // Java: (nanoTime() - start) / 1_000_000 > maxElapsedTimeMillis, a long division.
    if (Math.trunc(elapsed) > p.maxElapsedTimeMs) return -1;
    const wait = googleRandomizedInterval(p.randomizationFactor, draw(this.#random), this.#interval);
    this.#interval = googleNextInterval(this.#interval, p.multiplier, p.maxIntervalMs);
    return wait;
  }
}

function javaIntOption(
  where: string,
  name: string,
  value: unknown,
  fallback: number,
  min: number,
  fix: string,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > JAVA_INT_MAX) {
    invalid(where, name, value, `a whole number from ${min} to ${JAVA_INT_MAX} (a Java int)`, fix);
  }
  return value;
}

function budget(where: string, name: string, value: unknown, fallback: number): number {
  if (value === Infinity) return Infinity;
  if (value === undefined && Number.isNaN(fallback)) {
    invalid(
      where,
      name,
      value,
      DEV ? 'a whole number of ms from 1 to 2147483647, or Infinity' : '',
      DEV ? 'For example 900000.' : '',
    );
  }
  return javaIntOption(
    where,
    name,
    value,
    fallback,
    1,
    'Google requires a budget > 0 (900000 is 15 minutes); pass Infinity for none.',
  );
}

/**
 * Google's `ExponentialBackOff` (google-http-java-client, `com.google.api.client.util`) with its
 * builder's parameters; `presets.googleHttpClient` is this with the defaults. Runs reproduce the
 * Java class digit for digit, including its stop rule (see {@link GoogleBackoff}); the builder's
 * checks are enforced with the same bounds. Its jitter is the class's own (±`randomizationFactor`,
 * whole milliseconds), and it stops by its time budget only, as Java's does.
 *
 * @example
 * googleExponentialBackoff({ initialIntervalMs: 100, maxElapsedTimeMs: 30_000 })
 */
export function googleExponentialBackoff(options?: GoogleExponentialBackoffOptions): GoogleBackoff {
  const where = 'googleExponentialBackoff()';
  const o = optionsObject(where, options) as GoogleExponentialBackoffOptions;
  checkKeys(where, o, [
    'initialIntervalMs',
    'randomizationFactor',
    'multiplier',
    'maxIntervalMs',
    'maxElapsedTimeMs',
    'clock',
  ]);
  const initial = javaIntOption(
    where,
    'initialIntervalMs',
    o.initialIntervalMs,
    500,
    1,
    'The Java client counts whole milliseconds, such as 500.',
  );
  const factor = o.randomizationFactor === undefined ? 0.5 : o.randomizationFactor;
  if (typeof factor !== 'number' || !(factor >= 0 && factor < 1)) {
    invalid(
      where,
      'randomizationFactor',
      o.randomizationFactor,
      DEV ? 'a number >= 0 and < 1' : '',
      DEV ? 'Google uses 0.5.' : '',
    );
  }
  const multiplier = o.multiplier === undefined ? 1.5 : o.multiplier;
  if (typeof multiplier !== 'number' || !(multiplier >= 1)) {
    invalid(where, 'multiplier', o.multiplier, DEV ? 'a number >= 1' : '', DEV ? 'Google uses 1.5.' : '');
  }
  const max = javaIntOption(
    where,
    'maxIntervalMs',
    o.maxIntervalMs,
    60_000,
    initial,
    `It must be a whole number >= initialIntervalMs (${initial}).`,
  );
  const elapsed = budget(where, 'maxElapsedTimeMs', o.maxElapsedTimeMs, 900_000);
  return new GoogleBackoff(
    {
      initialIntervalMs: initial,
      randomizationFactor: factor,
      multiplier,
      maxIntervalMs: max,
      maxElapsedTimeMs: elapsed,
      clock: clockOption(where, o.clock),
    },
    Infinity,
  );
}
