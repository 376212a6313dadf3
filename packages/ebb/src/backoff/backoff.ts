import { formatMs } from '../core/format-ms.js';
import type { Random } from '../core/random.js';
import { check, checkKeys, LIMIT_MS, optionsObject, type Rule, show } from '../core/validate.js';
import { type Jitter, jitterOption } from './jitter.js';
import { fullJitter } from './jitter-full.js';
import { type Curve, drawDelay, SEGMENTS, type Segment } from './segment.js';

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

/** The options every curve accepts besides its own, and {@link withOptions} changes. All durations are milliseconds. */
export interface LimitOptions {
  /**
   * How delays are randomized: a value such as `fullJitter` (the default), `equalJitter`,
   * `noJitter` or `proportionalJitter(0.2)`. See {@link Jitter}.
   */
  readonly jitter?: Jitter;
  /**
   * Truncation: after `ceiling` failures the delay stops growing — rows after row `ceiling`
   * repeat it (802.3's backoff limit of 10; the Qiita article's N). Default: none.
   */
  readonly ceiling?: number;
  /**
   * Caps the un-randomized delay before jitter, so proportional or additive jitter can still
   * exceed it (Google's `maxIntervalMillis`, gRPC's `MAX_BACKOFF`). Default: none.
   */
  readonly maxIntervalMs?: number;
  /**
   * Hard cap: no delay is longer, with or without jitter. `Infinity` for none. Default: 20 s
   * for `exponential()` unless `maxIntervalMs` is given; none for the other curves.
   */
  readonly maxDelayMs?: number;
  /**
   * Total calls of the operation, the first included (`3` means one call and two retries).
   * Default 5, unless a finite `maxElapsedMs` stops the policy instead. `Infinity` retries
   * until success, on purpose.
   */
  readonly maxAttempts?: number;
  /**
   * Time budget of the whole operation: the executor gives up rather than sleep past it.
   * Default: none.
   */
  readonly maxElapsedMs?: number;
}

/** The limits every curve accepts besides `jitter`, with their rules. @internal */
export const LIMITS: Readonly<Record<Exclude<keyof LimitOptions, 'jitter'>, Rule>> = {
  ceiling: {
    whole: true,
    min: 1,
    infinity: true,
    fix: 'It is the failure count after which delays stop growing, such as 10.',
  },
  maxIntervalMs: LIMIT_MS,
  maxDelayMs: { infinity: true, fix: 'It caps every wait, such as 20000 for 20 s; Infinity for none.' },
  maxAttempts: {
    whole: true,
    min: 1,
    infinity: true,
    fix: '`maxAttempts` counts calls, the first included: 3 means one call and two retries.',
  },
  maxElapsedMs: LIMIT_MS,
};

/** The attempts a policy allows when neither `maxAttempts` nor a finite `maxElapsedMs` is given. @internal */
export const DEFAULT_ATTEMPTS = 5;

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
  /** @internal The stretches of the policy, in order: the internal representation (segment.ts). */
  readonly [SEGMENTS]: readonly Segment[];
  /** Total calls allowed, the first included; `Infinity` when only time or nothing stops it. */
  readonly maxAttempts: number;
  /** Time budget of a whole operation in milliseconds; `Infinity` for none. */
  readonly maxElapsedMs: number;

  /** @internal Use the curve functions; the constructor trusts its input. */
  constructor(segments: readonly Segment[], maxAttempts: number, maxElapsedMs: number) {
    this[SEGMENTS] = Object.freeze(segments.map((s) => Object.freeze({ ...s })));
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
    const parts = this[SEGMENTS].map(({ curve, jitter, ...limits }) =>
      set({ ...curve, jitter: jitter.name, ...limits }),
    );
    return {
      ...(parts.length > 1 ? { chain: parts } : parts[0]),
      maxAttempts: this.maxAttempts,
      ...set({ maxElapsedMs: this.maxElapsedMs }),
    };
  }

  /** Node's `util.inspect` (and so `console.log`): `Backoff { exponential 100 ms ×2, … }`. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `Backoff { ${this} }`;
  }
}

/** Checks the combinations a segment cannot honour, so that no option is silently ignored. @internal */
export function checkSegment(where: string, s: Segment): Segment {
  s.curve.check?.(where, s);
  s.jitter.check?.(where, s);
  return s;
}

/**
 * Builds a one-segment policy from a curve and the shared options (validated). `cap` is the
 * default `maxDelayMs`; `own` the draw of a curve that draws its own delays (slotted), which then
 * takes no `jitter` option. @internal
 */
export function fromCurve(
  where: string,
  curve: Curve,
  options: LimitOptions,
  curveKeys: readonly string[],
  cap = Infinity,
  own?: Jitter,
): Backoff {
  checkKeys(where, options, [...curveKeys, ...(own ? [] : ['jitter']), ...Object.keys(LIMITS)]);
  const limit = (name: keyof typeof LIMITS, fallback = Infinity) =>
    check(where, name, options[name], LIMITS[name], fallback);
  const maxElapsedMs = limit('maxElapsedMs');
  const segment = checkSegment(where, {
    curve,
    jitter: own ?? jitterOption(where, options.jitter, fullJitter),
    ceiling: limit('ceiling'),
    maxIntervalMs: limit('maxIntervalMs'),
    maxDelayMs: limit('maxDelayMs', cap),
    rows: Infinity,
  });
  return new Backoff(
    [segment],
    limit('maxAttempts', maxElapsedMs < Infinity ? Infinity : DEFAULT_ATTEMPTS),
    maxElapsedMs,
  );
}

/** Reads a curve's options object, rejecting non-objects. @internal */
export const curveOptions = optionsObject as <T extends object>(where: string, options: T | undefined) => Partial<T>;

class Run implements BackoffRun {
  readonly #backoff: Backoff;
  readonly #random: Random;
  #failures = 0;
  #segment = 0;
  #row = 0;
  /** The last delay, kept for decorrelated jitter only (a number field costs a box otherwise). */
  #previous = 0;

  constructor(backoff: Backoff, random: Random) {
    if (typeof random !== 'function') {
      throw new TypeError(
        `start(): expected \`random\` to be a function returning a number in [0, 1), got ${show(random)}. Leave it out for Math.random.`,
      );
    }
    this.#backoff = backoff;
    this.#random = random;
  }

  next(): number {
    const b = this.#backoff;
    if (++this.#failures >= b.maxAttempts) return -1;
    let s = b[SEGMENTS][this.#segment] as Segment;
    if (++this.#row > s.rows) {
      s = b[SEGMENTS][++this.#segment] as Segment;
      this.#row = 1;
    }
    const delay = drawDelay(s, this.#row, this.#random, this.#previous);
    if (s.jitter.chained) this.#previous = delay;
    return delay;
  }
}
