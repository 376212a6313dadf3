import type { Random } from '../core/random.js';
import { checkKeys, count, invalid, nonNegative, optionsObject, show } from '../core/validate.js';
import { type Jitter, normalizeJitter } from './jitter.js';

/**
 * Delays saturate here: `Number.MAX_SAFE_INTEGER` ms, about 285,000 years. Growth that would
 * overflow (`2 ** 1024 === Infinity`, and `0 * Infinity === NaN`) stops at this value instead,
 * so every delay ebb computes is a finite number, whatever the attempt number.
 */
export const MAX_DELAY_MS: number = Number.MAX_SAFE_INTEGER;

/** The un-randomized shape of a policy: the delay of row `n` before jitter and caps. */
export type Curve =
  | { readonly type: 'constant'; readonly delayMs: number }
  | { readonly type: 'linear'; readonly initialDelayMs: number; readonly incrementMs: number }
  | { readonly type: 'exponential'; readonly initialDelayMs: number; readonly multiplier: number }
  | { readonly type: 'slotted'; readonly slotMs: number; readonly cwMin: number; readonly cwMax: number }
  | { readonly type: 'sequence'; readonly delaysMs: readonly number[] };

/**
 * One stretch of a policy: a curve, its jitter and caps, serving `rows` rows (the waits after
 * that many failed attempts) before the next segment takes over. Most policies are one
 * segment; `chain()` makes more.
 */
export interface Segment {
  readonly curve: Curve;
  readonly jitter: Jitter;
  /** Rows after this one repeat it: the failure count is truncated at `ceiling`. */
  readonly ceiling: number;
  /** Caps the un-randomized delay; jitter may go above it (Google's and gRPC's rule). */
  readonly maxIntervalMs: number;
  /** Caps the un-randomized delay and clamps the final one: no wait is longer. */
  readonly maxDelayMs: number;
  /** How many rows this segment serves; `Infinity` for the last. */
  readonly rows: number;
}

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

const LIMIT_KEYS = ['jitter', 'ceiling', 'maxIntervalMs', 'maxDelayMs', 'maxAttempts', 'maxElapsedMs'] as const;

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
  /** The stretches of the policy, in order; a plain frozen description of its parameters. */
  readonly segments: readonly Segment[];
  /** Total calls allowed, the first included; `Infinity` when only time or nothing stops it. */
  readonly maxAttempts: number;
  /** Time budget of a whole operation in milliseconds; `Infinity` for none. */
  readonly maxElapsedMs: number;

  /**
   * @internal Use the curve functions; the constructor trusts its input. `unbounded`: the caller
   * said `maxAttempts: Infinity` explicitly.
   */
  constructor(segments: readonly Segment[], maxAttempts: number, maxElapsedMs: number, unbounded = false) {
    this.segments = Object.freeze(segments.map((s) => Object.freeze({ ...s })));
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
    return this.#map('withJitter', (s) => ({ ...s, jitter: normalizeJitter('withJitter()', jitter) }));
  }

  /**
   * The same policy stopping after `maxAttempts` calls in all. `Infinity` removes the limit and
   * says so explicitly: `retry()` and `poll()` then accept the policy even without a time budget.
   */
  withMaxAttempts(maxAttempts: number): Backoff {
    const n = attemptsOption('withMaxAttempts()', maxAttempts, Number.NaN);
    // Said explicitly: the constructor records it when `n` is Infinity, and only then.
    return new Backoff(this.segments, n, this.maxElapsedMs, true);
  }

  /** The same policy with a time budget for the whole operation (`Infinity`: none). */
  withMaxElapsed(maxElapsedMs: number): Backoff {
    const ms = nonNegative('withMaxElapsed()', 'maxElapsedMs', maxElapsedMs, Number.NaN, true);
    return new Backoff(this.segments, this.maxAttempts, ms, forever.has(this));
  }

  /** The same policy with a hard cap on every delay (`Infinity`: none). */
  withMaxDelay(maxDelayMs: number): Backoff {
    const ms = nonNegative('withMaxDelay()', 'maxDelayMs', maxDelayMs, Number.NaN, true);
    // Stryker disable next-line StringLiteral: checkSegment never reads maxDelayMs, and every segment here already passed it, so this label never reaches a message.
    return this.#map('withMaxDelay', (s) => ({ ...s, maxDelayMs: ms }));
  }

  /** The same policy with the un-randomized delay capped before jitter (`Infinity`: none). */
  withMaxInterval(maxIntervalMs: number): Backoff {
    const ms = nonNegative('withMaxInterval()', 'maxIntervalMs', maxIntervalMs, Number.NaN, true);
    return this.#map('withMaxInterval', (s) => ({ ...s, maxIntervalMs: ms }));
  }

  /** The same policy truncated: rows after row `ceiling` repeat it. Single-segment policies only. */
  withCeiling(ceiling: number): Backoff {
    if (this.segments.length > 1) {
      throw new TypeError('withCeiling(): a chained policy has no single ceiling; set `ceiling` on its parts.');
    }
    const c = count('withCeiling()', 'ceiling', ceiling, Number.NaN, 1, true, CEILING_FIX);
    return this.#map('withCeiling', (s) => ({ ...s, ceiling: c }));
  }

  #map(where: string, change: (s: Segment) => Segment): Backoff {
    const segments = this.segments.map((s) => checkSegment(`${where}()`, change(s)));
    return new Backoff(segments, this.maxAttempts, this.maxElapsedMs, forever.has(this));
  }
}

const CEILING_FIX = 'It is the failure count after which delays stop growing, such as 10.';

function attemptsOption(where: string, value: unknown, fallback: number): number {
  return count(
    where,
    'maxAttempts',
    value,
    fallback,
    1,
    true,
    '`maxAttempts` counts calls, the first included: 3 means one call and two retries.',
  );
}

/** Checks the combinations a segment cannot honour, so that no option is silently ignored. */
function checkSegment(where: string, s: Segment): Segment {
  if (s.curve.type === 'slotted' && s.jitter !== 'none') {
    throw new TypeError(`${where}: a slotted policy draws its own random slot count; \`jitter\` cannot apply to it.`);
  }
  if (s.jitter === 'decorrelated') {
    if (s.curve.type !== 'exponential') {
      throw new TypeError(
        `${where}: decorrelated jitter grows from \`initialDelayMs\` by \`multiplier\`, so it needs an exponential curve, not ${s.curve.type}.`,
      );
    }
    if (s.curve.initialDelayMs === 0) {
      invalid(
        where,
        'initialDelayMs',
        0,
        'a number > 0 with decorrelated jitter',
        'Decorrelated jitter never grows from 0.',
      );
    }
    if (s.ceiling !== Infinity || s.maxIntervalMs !== Infinity) {
      throw new TypeError(
        `${where}: decorrelated jitter has no un-randomized curve for \`${s.ceiling !== Infinity ? 'ceiling' : 'maxIntervalMs'}\` to act on; cap it with \`maxDelayMs\`.`,
      );
    }
  }
  return s;
}

/** Builds a one-segment policy from a curve and the shared options (validated). @internal */
export function fromCurve(where: string, curve: Curve, options: LimitOptions, curveKeys: readonly string[]): Backoff {
  checkKeys(where, options, [...curveKeys, ...(curve.type === 'slotted' ? LIMIT_KEYS.slice(1) : LIMIT_KEYS)]);
  const segment = checkSegment(where, {
    curve,
    jitter: normalizeJitter(where, options.jitter),
    ceiling: count(where, 'ceiling', options.ceiling, Infinity, 1, true, CEILING_FIX),
    maxIntervalMs: nonNegative(where, 'maxIntervalMs', options.maxIntervalMs, Infinity, true),
    maxDelayMs: nonNegative(where, 'maxDelayMs', options.maxDelayMs, Infinity, true),
    rows: Infinity,
  });
  return new Backoff(
    [segment],
    attemptsOption(where, options.maxAttempts, Infinity),
    nonNegative(where, 'maxElapsedMs', options.maxElapsedMs, Infinity, true),
    options.maxAttempts === Infinity,
  );
}

/** Reads a curve's options object, rejecting non-objects. @internal */
export function curveOptions<T extends object>(where: string, options: T | undefined): Partial<T> {
  return optionsObject(where, options) as Partial<T>;
}

/**
 * Chains two policies: `first`'s rows until it runs out of attempts, then `second`'s rows from
 * its row 1. `first` must stop by attempts and have no time budget of its own; the result stops
 * when `second` does, and takes `second`'s time budget (and its explicit `maxAttempts: Infinity`,
 * if it has one).
 *
 * @example
 * // one immediate retry, then exponential backoff
 * chain(constant({ delayMs: 0, maxAttempts: 2 }), exponential({ initialDelayMs: 100, jitter: 'full' }))
 */
export function chain(first: Backoff, second: Backoff): Backoff {
  for (const [name, value] of [
    ['first', first],
    ['second', second],
  ] as const) {
    if (!(value instanceof Backoff))
      invalid('chain()', name, value, 'a Backoff value', 'Build one with exponential() or take a preset.');
  }
  if (first.maxAttempts === Infinity) {
    throw new TypeError(
      'chain(): `first` never runs out of attempts, so `second` would never start; give it `maxAttempts`.',
    );
  }
  if (first.maxElapsedMs !== Infinity) {
    throw new TypeError(
      'chain(): `first` has a time budget (`maxElapsedMs`); put the budget on `second`, which governs the whole run.',
    );
  }
  let remaining = first.maxAttempts - 1;
  const head = first.segments.map((s) => {
    const rows = Math.min(s.rows, remaining);
    remaining -= rows;
    return { ...s, rows };
  });
  return new Backoff(
    [...head.filter((s) => s.rows > 0), ...second.segments],
    first.maxAttempts - 1 + second.maxAttempts,
    second.maxElapsedMs,
    forever.has(second),
  );
}

/** The contention window (in slots) of a slotted curve after `k` failures: min((cwMin+1)·2^k, cwMax+1). @internal */
export function slotWindow(curve: { readonly cwMin: number; readonly cwMax: number }, k: number): number {
  return Math.min((curve.cwMin + 1) * 2 ** k, curve.cwMax + 1);
}

/** The effective cap of a segment's un-randomized delay. @internal */
export function capOf(s: Segment): number {
  return Math.min(s.maxIntervalMs, s.maxDelayMs, MAX_DELAY_MS);
}

/** Slot window after `k` failures, narrowed so the longest wait stays under the cap. @internal */
export function cappedWindow(s: Segment & { curve: { type: 'slotted' } }, k: number): number {
  return Math.min(slotWindow(s.curve, k), Math.floor(capOf(s) / s.curve.slotMs) + 1);
}

/** The un-randomized delay of row `k` of a segment (ceiling applied, before caps). @internal */
export function nominal(s: Segment, k: number): number {
  const c = s.curve;
  const n = Math.min(k, s.ceiling);
  switch (c.type) {
    case 'exponential':
      // 0 * Infinity would be NaN: an initial delay of 0 stays 0 however large n gets.
      return c.initialDelayMs === 0 ? 0 : c.initialDelayMs * c.multiplier ** (n - 1);
    case 'constant':
      return c.delayMs;
    case 'linear':
      return c.initialDelayMs + c.incrementMs * (n - 1);
    case 'sequence':
      return c.delaysMs[(n < c.delaysMs.length ? n : c.delaysMs.length) - 1] as number;
    case 'slotted':
      return (cappedWindow(s as Segment & { curve: typeof c }, n) - 1) * c.slotMs;
  }
}

/** The un-randomized delay of row `k`, capped. Never NaN, never Infinity. @internal */
export function capped(s: Segment, k: number): number {
  const d = nominal(s, k);
  const cap = capOf(s);
  return d < cap ? d : cap;
}

/** Where global row `n` falls: the segment and the row within it. @internal */
export function locate(b: Backoff, n: number): [segment: Segment, row: number] {
  let k = n;
  for (const s of b.segments) {
    if (k <= s.rows) return [s, k];
    k -= s.rows;
  }
  // Unreachable through the public API: the last segment serves Infinity rows.
  throw new RangeError(`row ${n} is past the end of the policy`);
}

/**
 * One draw of `random`, checked: a `Random` is user code, and a value outside [0, 1) would turn
 * into a silent wait of 2^53 ms (NaN), a negative delay that reads as "stop", or a wait past the
 * cap (1 or more). Such a draw throws, so the operation that drew it rejects with a named error
 * while every other operation goes on. −0 becomes 0. @internal
 */
export function draw(random: Random): number {
  const r = random();
  if (typeof r === 'number' && r >= 0 && r < 1) return r + 0;
  const message = `random() returned ${show(r)}; expected a number in [0, 1). A Random works like Math.random; seeded(42) gives a reproducible one.`;
  throw typeof r === 'number' ? new RangeError(message) : new TypeError(message);
}

/**
 * Draws the wait of row `k` of segment `s`. `previous` is the last delay of this segment (for
 * decorrelated jitter; ignored by the others and on row 1). Finite and non-negative for every
 * `k` up to `Number.MAX_SAFE_INTEGER` and every `random` in [0, 1). @internal
 */
export function drawDelay(s: Segment, k: number, random: Random, previous: number): number {
  const c = s.curve;
  if (c.type === 'slotted') {
    const w = cappedWindow(s as Segment & { curve: typeof c }, Math.min(k, s.ceiling));
    // floor(r·w) < w for every r in [0, 1) and every w >= 1: r·w <= (1 − 2^−53)·w, and that
    // product rounds to a double below w (w·2^−53 is more than half the spacing below w).
    const d = Math.floor(draw(random) * w) * c.slotMs;
    // The window keeps (w−1)·slotMs under the cap, but the product can land one ulp above it
    // (17 × 0.1 = 1.7000000000000002 with a 1.7 ms cap): clamp the residue.
    return Math.min(d, capOf(s));
  }
  const jitter = s.jitter;
  const clamp = Math.min(s.maxDelayMs, MAX_DELAY_MS);
  if (jitter === 'decorrelated') {
    const { initialDelayMs: base, multiplier } = c as { initialDelayMs: number; multiplier: number };
    // min(cap, U[base, previous·m]) — the clamp after the draw, as the AWS formula has it, so
    // the cap carries a point mass. previous·m is kept under the envelope base·m^k that
    // describe() reports (repeated products and a power can differ in the last bit). Should
    // previous·m overflow, high is Infinity: every draw above 0 is then the cap, and a draw of
    // 0 is `base`, the row's minimum (0 × Infinity would be NaN). No NaN reaches the minima:
    // base > 0 and the multiplier are finite, and `previous` is a finite earlier draw.
    const high = Math.min((k === 1 ? base : previous) * multiplier, base * multiplier ** k);
    const r = draw(random);
    return Math.min(r > 0 ? base + r * (high - base) : base, clamp);
  }
  const d = capped(s, k);
  let delay: number;
  if (jitter === 'none') delay = d;
  else if (jitter === 'full') delay = draw(random) * d;
  else if (jitter === 'equal') {
    // In subnormals d / 2 rounds up (1.5e-323 / 2 is 1e-323), and the sum could pass d.
    delay = Math.min(d / 2 + (draw(random) * d) / 2, d);
  } else if (jitter.kind === 'proportional') delay = d * (1 - jitter.factor + 2 * jitter.factor * draw(random));
  else delay = d + draw(random) * jitter.maxMs;
  return delay < clamp ? delay : clamp;
}

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
    let s = b.segments[this.#segment] as Segment;
    if (++this.#row > s.rows) {
      s = b.segments[++this.#segment] as Segment;
      this.#row = 1;
    }
    const delay = drawDelay(s, this.#row, this.#random, this.#previous);
    if (s.jitter === 'decorrelated') this.#previous = delay;
    return delay;
  }
}
