import { DEV } from '../core/dev.js';
import { formatMs } from '../core/format-ms.js';
import type { Random } from '../core/random.js';
import { check, checkKeys, mistyped, optionsObject } from '../core/validate.js';
import { Backoff, type BackoffJSON, type BackoffRun, randomOf } from './backoff.js';
import { draw } from './draw.js';
import { exponentialCurve } from './exponential.js';
import { fullJitter } from './jitter-full.js';
import { LIMITS, type LimitOptions } from './limits.js';
import { SEGMENTS, type Segment } from './segment.js';
import { DERIVE } from './with-options.js';

/*
 * The AWS SDKs' standard retry mode as the published JavaScript SDK computes it: the
 * `StandardRetryStrategy` and `DefaultRetryBackoffStrategy` of `@smithy/core` (`dist-cjs/
 * submodules/retry/index.js`, re-exported by `@smithy/util-retry` 4.6.2), read from the installed
 * packages and checked by test/fidelity/aws.test.ts, which drives the SDK's retry middleware
 * side by side with ebb.
 *
 * - Retry i (from 0) waits `floor(random · min(base · 2^i, 20 000))` ms, base by the error's type:
 *   throttling or not (`setDelayBase(errorType === "THROTTLING" ? throttlingDelay : baseDelay)`).
 * - A server hint (`x-amz-retry-after` in ms, or `Retry-After`) raises the wait, at most 5 s past
 *   the computed one: `max(delay, min(hint, delay + 5000))`.
 * - 3 attempts (`DEFAULT_MAX_ATTEMPTS`).
 *
 * Two behaviours. `@smithy/core` up to 3.39.0 switched on "the 2026 retry behaviour" only with
 * `SMITHY_NEW_RETRIES_2026=true`; from 3.40.0 (10 November 2026; 3.41.0 is current) it is
 * hard-coded on (`static v2026 = true`):
 *
 * | | base | throttling base | retry cost (throttling / other) |
 * |---|---|---|---|
 * | `'2026'` (the current default) | 50 ms | 1000 ms | 5 / 14 |
 * | `'pre-2026'` (3.39.0 and earlier, by default) | 100 ms | 500 ms | 10 for transient, 5 for throttling |
 *
 * (The costs are `awsRetryQuota()`'s, in ebb/rate.)
 */

/** The SDK behaviours {@link awsStandardBackoff} reproduces. */
export type AwsRetryBehaviour = '2026' | 'pre-2026';

/** The delay bases of each behaviour, in ms. @internal */
export const AWS_DELAY_BASES: Readonly<
  Record<AwsRetryBehaviour, { readonly base: number; readonly throttling: number }>
> = Object.freeze({
  '2026': Object.freeze({ base: 50, throttling: 1_000 }),
  'pre-2026': Object.freeze({ base: 100, throttling: 500 }),
});

/** `MAXIMUM_RETRY_DELAY`: the cap on the un-randomized delay, in ms. */
const MAX_RETRY_DELAY_MS = 20_000;
/** How far past the computed wait a server hint may push it (`delayFromErrorType + 5_000`). */
const HINT_HEADROOM_MS = 5_000;

/** Options of {@link awsStandardBackoff}. */
export interface AwsStandardBackoffOptions {
  /** Which SDK behaviour: `'2026'` (default: what the published SDK does today) or `'pre-2026'`. */
  readonly behaviour?: AwsRetryBehaviour;
  /** Calls in all, the first included. Default 3 (`DEFAULT_MAX_ATTEMPTS`). */
  readonly maxAttempts?: number;
}

const BEHAVIOUR = new WeakMap<AwsStandardBackoff, AwsRetryBehaviour>();

/** Whether the SDK would call `error` THROTTLING: ebb marks such errors `throttled: true` (429, throttling codes). */
function isThrottled(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { throttled?: unknown }).throttled === true;
}

function hintOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const ms = (error as { retryAfterMs?: unknown }).retryAfterMs;
  return typeof ms === 'number' && Number.isFinite(ms) ? ms : undefined;
}

/**
 * The AWS SDKs' standard retry mode as a Backoff value. `describePolicy()` shows the transient-error
 * schedule (full jitter on base · 2^i, 20 s cap). A run whose `next()` is given the error
 * (`next(elapsedMs, error)`) also does what the SDK does with it: the throttling base after an
 * error marked `throttled: true`, and a server hint (`retryAfterMs`) bounded to 5 s past the
 * computed wait. `withOptions()` keeps these rules for `maxAttempts`; any other option gives an
 * ordinary ebb policy over the transient-error schedule.
 */
export class AwsStandardBackoff extends Backoff {
  /** @internal Use {@link awsStandardBackoff}. */
  constructor(behaviour: AwsRetryBehaviour, maxAttempts: number) {
    const segment: Segment = {
      curve: exponentialCurve(AWS_DELAY_BASES[behaviour].base, 2),
      jitter: fullJitter,
      ceiling: Infinity,
      maxIntervalMs: MAX_RETRY_DELAY_MS,
      maxDelayMs: Infinity,
      rows: Infinity,
    };
    super([segment], maxAttempts, Infinity);
    BEHAVIOUR.set(this, behaviour);
  }

  /** The SDK behaviour reproduced. */
  get behaviour(): AwsRetryBehaviour {
    return BEHAVIOUR.get(this) as AwsRetryBehaviour;
  }

  override start(random: Random = Math.random): BackoffRun {
    return new AwsRun(AWS_DELAY_BASES[this.behaviour], this.maxAttempts, randomOf(random));
  }

  /** `AWS standard retry (2026) full jitter on 50 ms ×2 (1 s after throttling), 20 s cap, 3 attempts`. */
  override toString(): string {
    const b = AWS_DELAY_BASES[this.behaviour];
    return `AWS standard retry (${this.behaviour}) full jitter on ${formatMs(b.base)} ×2 (${formatMs(b.throttling)} after throttling), ${formatMs(MAX_RETRY_DELAY_MS)} cap, ${this.maxAttempts < Infinity ? `${this.maxAttempts} attempts` : 'forever'}`;
  }

  /** `{ type: 'aws-standard', behaviour, maxAttempts }`. */
  override toJSON(): BackoffJSON {
    return { type: 'aws-standard', behaviour: this.behaviour, maxAttempts: this.maxAttempts };
  }

  /** `withOptions()`: the SDK's rules for `maxAttempts`, ebb's for the rest. @internal */
  [DERIVE](o: LimitOptions, apply: (b: Backoff) => Backoff): Backoff {
    const keys = Object.keys(o);
    return keys.length === 1 && keys[0] === 'maxAttempts'
      ? new AwsStandardBackoff(this.behaviour, check('withOptions()', 'maxAttempts', o.maxAttempts, LIMITS.maxAttempts))
      : apply(new Backoff(this[SEGMENTS], this.maxAttempts, Infinity));
  }
}

class AwsRun implements BackoffRun {
  readonly #bases: { readonly base: number; readonly throttling: number };
  readonly #maxAttempts: number;
  readonly #random: Random;
  #retries = 0;
  /** `next()` bounds the server hint as the SDK does; the executor must not apply it again. */
  readonly appliesHints = true;

  constructor(bases: { readonly base: number; readonly throttling: number }, maxAttempts: number, random: Random) {
    this.#bases = bases;
    this.#maxAttempts = maxAttempts;
    this.#random = random;
  }

  next(_elapsedMs?: number, error?: unknown): number {
    if (this.#retries + 1 >= this.#maxAttempts) return -1;
    const base = isThrottled(error) ? this.#bases.throttling : this.#bases.base;
    const i = this.#retries++;
    const delay = awsBackoffDelay(base, i, draw(this.#random));
    const hint = hintOf(error);
    return hint === undefined ? delay : awsBoundedHint(delay, hint);
  }
}

/** `DefaultRetryBackoffStrategy.computeNextBackoffDelay(i)`: `floor(random · min(base · 2^i, 20 000))`. @internal */
export function awsBackoffDelay(baseMs: number, retryIndex: number, random: number): number {
  const ceiling = baseMs * 2 ** retryIndex;
  return Math.floor(random * (ceiling < MAX_RETRY_DELAY_MS ? ceiling : MAX_RETRY_DELAY_MS));
}

/** The SDK's use of a server hint: `max(delay, min(hint, delay + 5000))`. @internal */
export function awsBoundedHint(delayMs: number, hintMs: number): number {
  const bounded = hintMs < delayMs + HINT_HEADROOM_MS ? hintMs : delayMs + HINT_HEADROOM_MS;
  return bounded > delayMs ? bounded : delayMs;
}

/**
 * The AWS SDKs' standard retry mode, as `@smithy/core`'s `StandardRetryStrategy` computes it
 * (its jitter is the SDK's: full jitter in whole milliseconds):
 * `behaviour: '2026'` (default) is what the published SDK does today, `'pre-2026'` what it did
 * by default up to `@smithy/core` 3.39.0. Pair with `aws` from `ebb/http` (which marks throttling
 * errors) and `awsRetryQuota()` from `ebb/rate` (the SDK's retry quota).
 *
 * @example
 * awsStandardBackoff({ behaviour: 'pre-2026', maxAttempts: 5 })
 */
export function awsStandardBackoff(options?: AwsStandardBackoffOptions): AwsStandardBackoff {
  const where = 'awsStandardBackoff()';
  const o = optionsObject(where, options) as AwsStandardBackoffOptions;
  checkKeys(where, o, ['behaviour', 'maxAttempts']);
  const behaviour = o.behaviour === undefined ? '2026' : o.behaviour;
  if (behaviour !== '2026' && behaviour !== 'pre-2026') {
    mistyped(
      where,
      'behaviour',
      o.behaviour,
      DEV ? "'2026' or 'pre-2026'" : '',
      DEV ? "'2026' is what the SDK does today." : '',
    );
  }
  const maxAttempts = check(
    where,
    'maxAttempts',
    o.maxAttempts,
    {
      whole: true,
      min: 1,
      infinity: true,
      fix: '`maxAttempts` counts calls, the first included: the SDK default is 3.',
    },
    3,
  );
  return new AwsStandardBackoff(behaviour, maxAttempts);
}
