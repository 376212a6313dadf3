import type { Random } from '../core/random.js';
import { check, checkKeys, LIMIT_MS, optionsObject, type Rule, show } from '../core/validate.js';
import { type Jitter, normalizeJitter } from './jitter.js';
import { checkSegment, drawDelay, kindOf } from './row.js';
import { type Curve, SEGMENTS, type Segment } from './segment.js';

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

/** The options every curve accepts besides its own. All durations are milliseconds. */
export interface LimitOptions {
  /**
   * How delays are randomized; default `'none'`. See {@link Jitter}.
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
  /** Hard cap: no delay is longer, with or without jitter. Default: none. */
  readonly maxDelayMs?: number;
  /**
   * Total calls of the operation, the first included (`3` means one call and two retries).
   * Default: unlimited — but `retry()` and `poll()` refuse a policy that nothing stops (no
   * `maxAttempts`, no `maxElapsedMs`) unless `maxAttempts: Infinity` is given explicitly.
   */
  readonly maxAttempts?: number;
  /**
   * Time budget of the whole operation: the executor gives up rather than sleep past it.
   * Default: unlimited.
   */
  readonly maxElapsedMs?: number;
}

/**
 * The policies whose `maxAttempts: Infinity` was said explicitly (the option, or
 * `withMaxAttempts(Infinity)`): `retry()` and `poll()` run those forever when no time budget
 * stops them, and refuse the other unbounded ones (see `assertBounded`). Kept here rather than
 * as a field so the public shape of a `Backoff` does not change.
 */
const forever = /* @__PURE__ */ new WeakSet<Backoff>();

/** Whether `maxAttempts: Infinity` was given explicitly for `b` (or for the part that governs its end). @internal */
export function saidForever(b: Backoff): boolean {
  return forever.has(b);
}

/** The limits every curve accepts besides `jitter`, with their rules; leaving one out means none. */
const LIMITS = {
  ceiling: {
    whole: true,
    min: 1,
    infinity: true,
    fix: 'It is the failure count after which delays stop growing, such as 10.',
  } as Rule,
  maxIntervalMs: LIMIT_MS,
  maxDelayMs: LIMIT_MS,
  maxAttempts: {
    whole: true,
    min: 1,
    infinity: true,
    fix: '`maxAttempts` counts calls, the first included: 3 means one call and two retries.',
  } as Rule,
  maxElapsedMs: LIMIT_MS,
};

const LIMIT_KEYS = ['jitter', ...Object.keys(LIMITS)];

/**
 * An immutable backoff policy: which delay follows each failed attempt, and when to stop.
 *
 * One value can drive any number of concurrent operations: each operation calls `start()` and
 * gets its own run. The `with…` methods return new values and never change this one.
 * Build values with {@link exponential}, {@link linear}, {@link constant}, {@link slotted},
 * {@link sequence} and {@link chain}, or take one from `presets`.
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

  /**
   * @internal Use the curve functions; the constructor trusts its input. `unbounded`: the caller
   * said `maxAttempts: Infinity` explicitly.
   */
  constructor(segments: readonly Segment[], maxAttempts: number, maxElapsedMs: number, unbounded = false) {
    this[SEGMENTS] = Object.freeze(segments.map((s) => Object.freeze({ ...s })));
    this.maxAttempts = maxAttempts;
    this.maxElapsedMs = maxElapsedMs;
    if (unbounded && maxAttempts === Infinity) forever.add(this);
    Object.freeze(this);
  }

  /** Starts a run: fresh state for one operation. `random` defaults to `Math.random`. */
  start(random: Random = Math.random): BackoffRun {
    return new Run(this, random);
  }

  /** The same policy with another jitter (on every segment). */
  withJitter(jitter: Jitter): Backoff {
    return this.#map('withJitter', { jitter: normalizeJitter('withJitter()', jitter) });
  }

  /**
   * The same policy stopping after `maxAttempts` calls in all. `Infinity` removes the limit and
   * says so explicitly: `retry()` and `poll()` then accept the policy even without a time budget.
   */
  withMaxAttempts(maxAttempts: number): Backoff {
    // Said explicitly: the constructor records it when the value is Infinity, and only then.
    return new Backoff(this[SEGMENTS], limit('withMaxAttempts', 'maxAttempts', maxAttempts), this.maxElapsedMs, true);
  }

  /** The same policy with a time budget for the whole operation (`Infinity`: none). */
  withMaxElapsed(maxElapsedMs: number): Backoff {
    const ms = limit('withMaxElapsed', 'maxElapsedMs', maxElapsedMs);
    return new Backoff(this[SEGMENTS], this.maxAttempts, ms, forever.has(this));
  }

  /** The same policy with a hard cap on every delay (`Infinity`: none). */
  withMaxDelay(maxDelayMs: number): Backoff {
    return this.#map('withMaxDelay', { maxDelayMs: limit('withMaxDelay', 'maxDelayMs', maxDelayMs) });
  }

  /** The same policy with the un-randomized delay capped before jitter (`Infinity`: none). */
  withMaxInterval(maxIntervalMs: number): Backoff {
    return this.#map('withMaxInterval', { maxIntervalMs: limit('withMaxInterval', 'maxIntervalMs', maxIntervalMs) });
  }

  /** The same policy truncated: rows after row `ceiling` repeat it. Single-segment policies only. */
  withCeiling(ceiling: number): Backoff {
    if (this[SEGMENTS].length > 1) {
      throw new TypeError('withCeiling(): a chained policy has no single ceiling; set `ceiling` on its parts.');
    }
    return this.#map('withCeiling', { ceiling: limit('withCeiling', 'ceiling', ceiling) });
  }

  #map(method: string, change: Partial<Segment>): Backoff {
    const segments = this[SEGMENTS].map((s) => checkSegment(`${method}()`, { ...s, ...change }));
    return new Backoff(segments, this.maxAttempts, this.maxElapsedMs, forever.has(this));
  }
}

/** The value of a `with…()` method, checked by its limit's rule (required there). */
function limit(method: string, name: keyof typeof LIMITS, value: unknown): number {
  return check(`${method}()`, name, value, LIMITS[name]);
}

/** Builds a one-segment policy from a curve and the shared options (validated). @internal */
export function fromCurve(where: string, curve: Curve, options: LimitOptions, curveKeys: readonly string[]): Backoff {
  checkKeys(where, options, [...curveKeys, ...(curve.own ? LIMIT_KEYS.slice(1) : LIMIT_KEYS)]);
  const limit = (name: keyof typeof LIMITS) => check(where, name, options[name], LIMITS[name], Infinity);
  const segment = checkSegment(where, {
    curve,
    jitter: normalizeJitter(where, options.jitter),
    ceiling: limit('ceiling'),
    maxIntervalMs: limit('maxIntervalMs'),
    maxDelayMs: limit('maxDelayMs'),
    rows: Infinity,
  });
  return new Backoff([segment], limit('maxAttempts'), limit('maxElapsedMs'), options.maxAttempts === Infinity);
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
    const kind = kindOf(s);
    const delay = drawDelay(s, this.#row, this.#random, this.#previous, kind);
    if (kind.chained) this.#previous = delay;
    return delay;
  }
}
