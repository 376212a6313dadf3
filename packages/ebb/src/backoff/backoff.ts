import { prop } from '../core/boundary.js';
import { DEV } from '../core/dev.js';
import { formatMs } from '../core/format-ms.js';
import type { Random } from '../core/random.js';
import { brief, check, checkKeys, optionsObject, show } from '../core/validate.js';
import { type Jitter, jitterOption } from './jitter.js';
import { fullJitter } from './jitter-full.js';
import { DEFAULT_ATTEMPTS, LIMITS, type LimitOptions } from './limits.js';
import { type Curve, drawDelay, SEGMENTS, type Segment } from './segment.js';

export type { LimitOptions } from './limits.js';
export { MAX_DELAY_MS } from './segment.js';

/** Per-operation state of a policy: each call of `next()` gives the wait after one more failed attempt. */
export interface BackoffRun {
  /**
   * The wait in milliseconds after the next failed attempt (the first call: after attempt 1),
   * or `-1` when the policy allows no further attempt. A caller may pass the operation's
   * elapsed time and the error that ended the attempt; most policies ignore both, Google's
   * reads the elapsed time for its stop rule and the AWS standard mode reads the error
   * (throttling base, server hint). See docs/fidelity.md.
   */
  next(elapsedMs?: number, error?: unknown): number;
  /**
   * True when `next()` has already applied the error's server hint (`retryAfterMs`) by its
   * source's own rule (the AWS SDK's: at most 5 s past the computed wait): the executor then
   * neither raises the wait to the hint nor gives up over `maxRetryAfterMs`. Default false.
   */
  readonly appliesHints?: boolean;
}

/** What the executor needs of a policy: an elapsed-time budget and fresh runs. */
export interface BackoffPolicy {
  /** Time budget for a whole operation in milliseconds; `Infinity` for none. */
  readonly maxElapsedMs: number;
  /** Starts a run with fresh state. */
  start(random?: Random): BackoffRun;
}

/** How a policy's description counts: `1 attempt`, `5 attempts`. */
const count = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The JSON form of a policy (`toJSON()`): the options that build it, jitter by name. */
export type BackoffJSON = Readonly<Record<string, unknown>>;

/**
 * An immutable backoff policy: which delay follows each failed attempt, and when to stop.
 *
 * One value can drive any number of concurrent operations: each operation calls `start()` and
 * gets its own run. Build values with {@link exponential}, {@link linear}, {@link constant},
 * {@link slotted}, {@link sequence} and {@link chain}, or take one from `presets`;
 * {@link withOptions} derives a value with other limits or jitter.
 *
 * A policy prints as the schedule it is: `String(exponential())` is `exponential 100 ms ×2, 20 s
 * cap, full jitter, 5 attempts` (Node's `util.inspect` and `console.log` show the same, as
 * `Backoff { … }`), and `JSON.stringify` writes the options that build it, jitter by name.
 *
 * Counting: attempt 1 is the first call; row `n` is the wait after attempt `n` failed;
 * `maxAttempts` counts calls.
 */
export class Backoff implements BackoffPolicy {
  // `declare`: the constructor sets them; no field initializers in the output.
  /** @internal The stretches of the policy, in order: the internal representation (segment.ts). */
  declare readonly [SEGMENTS]: readonly Segment[];
  /** Total calls allowed, the first included; `Infinity` when only time or nothing stops it. */
  declare readonly maxAttempts: number;
  /** Time budget of a whole operation in milliseconds; `Infinity` for none. */
  declare readonly maxElapsedMs: number;

  /** @internal Use the curve functions; the constructor trusts its input. */
  constructor(segments: readonly Segment[], maxAttempts: number, maxElapsedMs: number) {
    // Every caller hands over segments it built for this value (or frozen ones of another
    // policy): freezing them in place is enough, no copy.
    this[SEGMENTS] = Object.freeze(segments.map(Object.freeze) as Segment[]);
    this.maxAttempts = maxAttempts;
    this.maxElapsedMs = maxElapsedMs;
    Object.freeze(this);
  }

  /** Starts a run: fresh state for one operation. `random` defaults to `Math.random`. */
  start(random: Random = Math.random): BackoffRun {
    return new Run(this, random);
  }

  /**
   * The policy in one line, in units a person reads: each stretch's curve, caps and jitter, then
   * what stops it — `exponential 100 ms ×2, 20 s cap, full jitter, 5 attempts`; `constant 1 s, no
   * jitter, 1 wait, then exponential 1.6 s ×1.6, 2 min interval cap, ±20 % jitter, forever`.
   */
  toString(): string {
    const { maxAttempts: n, maxElapsedMs: ms } = this;
    const stretches = this[SEGMENTS].map((s) =>
      [
        s.curve,
        s.ceiling < Infinity && `ceiling ${s.ceiling}`,
        s.maxIntervalMs < Infinity && `${formatMs(s.maxIntervalMs)} interval cap`,
        s.maxDelayMs < Infinity && `${formatMs(s.maxDelayMs)} cap`,
        s.jitter,
        s.rows < Infinity && count(s.rows, 'wait'),
      ]
        .filter(Boolean)
        .join(', '),
    );
    const stop = [n < Infinity && count(n, 'attempt'), ms < Infinity && `within ${formatMs(ms)}`].filter(Boolean);
    return `${stretches.join(', then ')}, ${stop.join(' ') || 'forever'}`;
  }

  /**
   * The options that build this policy, as plain data: the curve's `type` and parameters, the
   * jitter by name (`'full'`, `'proportional:0.2'`), the limits that are set, and `maxAttempts`
   * (`Infinity` — `null` once in JSON — when it retries until success or its time budget). A
   * chained policy lists its parts under `chain`, each with the `rows` it serves.
   */
  toJSON(): BackoffJSON {
    const set = (o: object) =>
      Object.fromEntries(Object.entries(o).filter(([, v]) => v !== Infinity && v !== undefined));
    // The curve's fields, then the segment's in their order, with the jitter by name.
    const parts = this[SEGMENTS].map((s) => set({ ...s.curve, ...s, curve: undefined, jitter: s.jitter.name }));
    return {
      ...(parts[1] ? { chain: parts } : parts[0]),
      maxAttempts: this.maxAttempts,
      ...set({ maxElapsedMs: this.maxElapsedMs }),
    };
  }

  /** Node's `util.inspect` (and so `console.log`): `Backoff { exponential 100 ms ×2, … }`. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `Backoff { ${this} }`;
  }
}

/**
 * Builds a one-segment policy from a curve's options, validated: refuses a non-object and
 * unknown keys (the curve's own `keys`, `jitter` among them unless the curve draws its own
 * delays, and the limits), reads the curve's own options with `curveOf`, then the limits. `cap`
 * is the default `maxDelayMs` when `maxIntervalMs` is not given; `own` the draw of a curve that
 * draws its own delays (slotted). @internal
 */
export function fromCurve<T extends LimitOptions>(
  where: string,
  given: T | undefined,
  keys: readonly string[],
  curveOf: (o: Partial<T>) => Curve,
  cap = Infinity,
  own?: Jitter,
): Backoff {
  const options = optionsObject(where, given, keys[0]) as Partial<T>;
  // p-retry's and async-retry's name, the one a port passes first (development build).
  if (DEV && 'retries' in options) {
    throw new TypeError(
      `${where}: unknown option \`retries\`; use \`maxAttempts\`, which counts calls, the first included: retries + 1.`,
    );
  }
  checkKeys(where, options, [...keys, ...Object.keys(LIMITS)]);
  const curve = curveOf(options);
  const limit = (name: keyof typeof LIMITS, fallback = Infinity) =>
    check(where, name, options[name], LIMITS[name], fallback);
  const maxElapsedMs = limit('maxElapsedMs');
  const segment: Segment = {
    curve,
    jitter: own ?? jitterOption(where, options.jitter, fullJitter),
    ceiling: limit('ceiling'),
    maxIntervalMs: limit('maxIntervalMs'),
    maxDelayMs: limit('maxDelayMs', options.maxIntervalMs === undefined ? cap : Infinity),
    rows: Infinity,
  };
  // A cap below the first un-randomized wait makes every wait the cap: a swap, most likely
  // (Google's ExponentialBackOff.Builder refuses maxIntervalMillis < initialIntervalMillis).
  // Only caps given are compared: the default 20 s bounds a longer first wait on purpose.
  // (The caps are checked numbers by now; one not given is undefined, never below.)
  const first = own ? 0 : curve.at(1, Infinity);
  for (const name of ['maxIntervalMs', 'maxDelayMs'] as const) {
    const cap = options[name] as number;
    if (cap < first) {
      throw new RangeError(
        DEV
          ? `${where}: \`${name}\` (${formatMs(cap)}) is below the first wait (${formatMs(first)}), so every wait would be ${formatMs(cap)}. Raise it, or lower the first wait; constant({ delayMs: 0 }) retries without waiting.`
          : brief(where, name, cap),
      );
    }
  }
  // Only a jitter kind can refuse a fresh segment (decorrelated: other curves, caps before
  // jitter); a slotted curve refuses other jitter, and its options take none.
  segment.jitter.check?.(where, segment);
  return new Backoff(
    [segment],
    limit('maxAttempts', maxElapsedMs < Infinity ? Infinity : DEFAULT_ATTEMPTS),
    maxElapsedMs,
  );
}

/**
 * `start()`'s `random`, refused unless it is a function: every policy's runs (Google's and AWS's
 * too) check it when they start, rather than fail at their first draw. @internal
 */
export function randomOf(random: unknown): Random {
  if (typeof random !== 'function') {
    throw new TypeError(
      DEV
        ? `start(): expected \`random\` to be a function returning a number in [0, 1), got ${show(random)}. Leave it out for Math.random.`
        : brief('start()', 'random', random),
    );
  }
  return random as Random;
}

/**
 * The run of a one-segment policy: the wait after failure `n` is the segment's row `n`. A chained
 * policy has a run of its own (chain.ts) that moves from part to part.
 */
class Run implements BackoffRun {
  readonly #backoff: Backoff;
  readonly #random: Random;
  #failures = 0;
  /** The last delay, kept for decorrelated jitter only (a number field costs a box otherwise). */
  #previous = 0;

  constructor(backoff: Backoff, random: Random) {
    this.#backoff = backoff;
    this.#random = randomOf(random);
  }

  next(): number {
    const b = this.#backoff;
    if (++this.#failures >= b.maxAttempts) return -1;
    const s = b[SEGMENTS][0] as Segment;
    const delay = drawDelay(s, this.#failures, this.#random, this.#previous);
    if (s.jitter.chained) this.#previous = delay;
    return delay;
  }
}

/**
 * Refuses what is not this copy's {@link Backoff} (describePolicy, withOptions, chain), naming
 * another copy's as such: "build one with exponential()" is what its caller did. @internal
 */
export function notABackoff(where: string, name: string, value: unknown): never {
  const other = typeof prop(value, 'start') === 'function' && prop(prop(value, 'constructor'), 'name') === 'Backoff';
  const [expected, fix] = other
    ? [
        "this copy of ebb's Backoff, not another copy's",
        'It comes from another copy of ebb (its CommonJS build beside the ESM one, or another version): import both from one.',
      ]
    : ['a Backoff value', 'Build one with exponential() or take a preset.'];
  // A TypeError whatever the value: a number where a policy goes is of the wrong kind.
  throw new TypeError(
    DEV ? `${where}: expected \`${name}\` to be ${expected}, got ${show(value)}. ${fix}` : brief(where, name, value),
  );
}
