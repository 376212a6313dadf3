import { Backoff, type BackoffPolicy } from '../backoff/backoff.js';
import { defaultBackoff } from '../backoff/default.js';
import { withOptions } from '../backoff/with-options.js';
import { type Clock, systemClock, unrefSystemClock } from '../core/clock.js';
import type { Random } from '../core/random.js';
import { checkKeys, invalid, optionsObject } from '../core/validate.js';
import type {
  AttemptContext,
  FailedAttemptContext,
  GiveUpContext,
  NextStep,
  RetryContext,
  SuccessContext,
} from './contexts.js';
import type { BudgetSuccess, Outcome, RateController, RetryBudget } from './hook-points.js';

// The contexts and the hook points live in their own files; importers of this one keep finding them here.
export type {
  AttemptContext,
  BudgetSuccess,
  FailedAttemptContext,
  GiveUpContext,
  NextStep,
  Outcome,
  RateController,
  RetryBudget,
  RetryContext,
  SuccessContext,
};

/** Options of `retry()` and `poll()`. Every duration is in milliseconds. */
export interface RetryOptions {
  /** The backoff policy; default {@link defaultBackoff} (`presets.default`: its values and reasons are there). */
  readonly backoff?: BackoffPolicy;
  /**
   * Shorthand for the policy's attempt limit, counted as retries: `retries: 3` is
   * `maxAttempts: 4` (one call and up to three retries), `Infinity` retries until something else
   * stops it. It replaces the limit of a `Backoff` value (as `withOptions(backoff, { maxAttempts })`;
   * a custom policy is refused). Default: the policy's own limit.
   */
  readonly retries?: number;
  /**
   * Decides whether a failure is worth another attempt; may be async. Default
   * ({@link defaultRetryIf}): every error except aborts and the errors of a bug in the caller's
   * own code (`TypeError` but a network one, `ReferenceError`, `SyntaxError`, `RangeError`). An
   * error it calls final reaches the caller unchanged. Not asked about a `FinalError`.
   */
  readonly retryIf?: (error: unknown, context: AttemptContext) => boolean | PromiseLike<boolean>;
  /** Aborts everything: the running attempt's signal, any wait, and no attempt starts after. */
  readonly signal?: AbortSignal;
  /** Time limit of each attempt; its signal aborts with a `TimeoutError` and the attempt counts as failed. */
  readonly attemptTimeoutMs?: number;
  /**
   * The longest server hint (`retryAfterMs` on an error, from `Retry-After`) the executor will
   * honour; a longer one makes it give up at once with reason `'retry-after'`. Default 60 000.
   */
  readonly maxRetryAfterMs?: number;
  /** Called before each wait; may be async (awaited). A throw stops the retries with that error. */
  readonly onRetry?: (context: RetryContext) => void | PromiseLike<void>;
  /**
   * Called after every failed attempt, the last included, with what happens next (`'retry'`
   * after `delayMs`, `'give-up'` with `reason`, or `'final'`); before `onRetry`. May be async
   * (awaited). A throw rejects the operation with that error. Not called for an abort.
   */
  readonly onFailedAttempt?: (context: FailedAttemptContext) => void | PromiseLike<void>;
  /**
   * Called once when the operation ends in failure — given up (`RetryError`) or final — after
   * the last `onFailedAttempt`; not for an abort. May be async (awaited). A throw rejects the
   * operation with that error instead.
   */
  readonly onGiveUp?: (context: GiveUpContext) => void | PromiseLike<void>;
  /** Called once when the operation succeeds, before it resolves. May be async (awaited). A throw rejects the operation with that error. */
  readonly onSuccess?: (context: SuccessContext) => void | PromiseLike<void>;
  /** Time source; default the system clock. */
  readonly clock?: Clock;
  /** Randomness for jitter; default `Math.random`. */
  readonly random?: Random;
  /**
   * Node.js: the executor's waits (backoff, attempt timeouts) do not keep the process alive, as
   * `timer.unref()` — for background work that should not delay exit. If nothing else holds the
   * process, it exits during a wait and the operation never settles. Only with the system clock
   * (a custom `clock` decides itself how it waits). Default false.
   */
  readonly unref?: boolean;
  /** A shared rate controller (`ebb/rate`). */
  readonly rate?: RateController;
  /** A shared retry budget (`ebb/rate`). */
  readonly budget?: RetryBudget;
}

/**
 * Options after validation: only what the caller set, the executor's defaults ({@link DEFAULTS})
 * standing for the rest, so that an operation waiting in its backoff holds a small object.
 * @internal
 */
export interface Prepared {
  /** Something needs the executor from attempt 1 (a signal, rate, budget, deadline, …): no success path. */
  readonly full?: true;
  /**
   * Something configured reads the elapsed time during the run (a time budget, a hook, a custom
   * clock, a policy whose runs may read it): the clock is read before attempt 1. Otherwise its
   * first reading is taken when attempt 1 fails (see `retry()`, "Elapsed time").
   */
  readonly timed?: true;
  readonly backoff?: BackoffPolicy;
  /** The policy's `maxElapsedMs`, read once. */
  readonly maxElapsedMs?: number;
  readonly retryIf?: RetryOptions['retryIf'];
  readonly signal?: AbortSignal;
  readonly attemptTimeoutMs?: number;
  readonly maxRetryAfterMs?: number;
  readonly onRetry?: RetryOptions['onRetry'];
  readonly onFailedAttempt?: RetryOptions['onFailedAttempt'];
  readonly onGiveUp?: RetryOptions['onGiveUp'];
  readonly onSuccess?: RetryOptions['onSuccess'];
  readonly clock?: Clock;
  readonly random?: Random;
  readonly rate?: RateController;
  readonly budget?: RetryBudget;
}

/** The executor's defaults, the one place they are written. Frozen. @internal */
export const DEFAULTS = /* @__PURE__ */ Object.freeze({
  backoff: defaultBackoff as BackoffPolicy,
  maxElapsedMs: defaultBackoff.maxElapsedMs,
  attemptTimeoutMs: Infinity,
  maxRetryAfterMs: 60_000,
  clock: systemClock,
});

/** A call without options (the flags as `prepare()` sets them for the default policy). @internal */
export const NO_OPTIONS: Prepared = /* @__PURE__ */ Object.freeze(
  // Stryker disable next-line ObjectLiteral,BooleanLiteral: reached only if the default policy had a time budget, and it has none.
  DEFAULTS.maxElapsedMs === Infinity ? {} : { full: true, timed: true },
);

/** The clock of prepared options. @internal */
export const clockOf = (o: Prepared): Clock => o.clock ?? DEFAULTS.clock;

/** The time budget of prepared options: the policy's `maxElapsedMs`. @internal */
export const deadlineOf = (o: Prepared): number => o.maxElapsedMs ?? DEFAULTS.maxElapsedMs;

/** The options `retrySync()` shares with `retry()`. */
const SYNC_KEYS = [
  'backoff',
  'retries',
  'retryIf',
  'maxRetryAfterMs',
  'onRetry',
  'onFailedAttempt',
  'onGiveUp',
  'onSuccess',
  'clock',
  'random',
];
const KEYS = [...SYNC_KEYS, 'signal', 'attemptTimeoutMs', 'unref', 'rate', 'budget'];

const hasMethods = (value: unknown, names: readonly string[]): boolean =>
  typeof value === 'object' &&
  value !== null &&
  names.every((n) => typeof (value as Record<string, unknown>)[n] === 'function');

/**
 * One check of one option, as data: the option, the test its value must pass when set, and what
 * the message says it expected and how to fix it (the message itself is `invalid()`'s: the
 * option, the value, the fix). `conflict` instead makes the message a whole sentence.
 */
interface Rule {
  readonly key: string;
  readonly ok: (value: unknown, options: Record<string, unknown>, sync: boolean) => boolean;
  readonly expects?: string;
  readonly fix?: string;
  readonly conflict?: string;
}

const isFunction = (value: unknown): boolean => typeof value === 'function';
/** A number >= 0, Infinity included. */
const limit = (value: unknown): boolean => typeof value === 'number' && value >= 0;
const NO_LIMIT = 'a number >= 0 (or Infinity for no limit)';

/** Every option's checks, in the order they run. The policy's own (backoff, retries) come first, in `prepare`. */
const RULES: readonly Rule[] = [
  { key: 'retryIf', ok: isFunction, expects: 'a function (error, context) => boolean' },
  { key: 'onRetry', ok: isFunction, expects: 'a function (context) => void' },
  { key: 'onFailedAttempt', ok: isFunction, expects: 'a function (context) => void' },
  { key: 'onGiveUp', ok: isFunction, expects: 'a function (context) => void' },
  { key: 'onSuccess', ok: isFunction, expects: 'a function (context) => void' },
  {
    key: 'signal',
    ok: (v) => hasMethods(v, ['addEventListener', 'removeEventListener']) && 'aborted' in (v as object),
    expects: 'an AbortSignal',
    fix: 'Pass controller.signal.',
  },
  {
    key: 'clock',
    ok: (v, _, sync) => sync || hasMethods(v, ['now', 'sleep']),
    expects: 'a Clock { now(), sleep(ms, signal) }',
  },
  {
    key: 'clock',
    ok: (v, _, sync) => !sync || hasMethods(v, ['now', 'sleepSync']),
    expects: 'a SyncClock { now(), sleepSync(ms) }',
  },
  { key: 'random', ok: isFunction, expects: 'a function returning a number in [0, 1)' },
  { key: 'unref', ok: (v) => typeof v === 'boolean', expects: 'a boolean' },
  {
    key: 'unref',
    ok: (v, o) => !v || o.clock === undefined,
    conflict: '`unref` applies to the system clock; with a custom `clock`, the clock decides how it waits.',
  },
  {
    key: 'rate',
    ok: (v) => hasMethods(v, ['acquire', 'record']),
    expects: 'a rate controller { acquire(), record() }',
  },
  {
    key: 'budget',
    ok: (v) => hasMethods(v, ['tryAcquireRetry', 'recordSuccess']),
    expects: 'a retry budget { tryAcquireRetry(), recordSuccess() }',
  },
  { key: 'attemptTimeoutMs', ok: limit, expects: NO_LIMIT, fix: 'For example 5000 for five seconds.' },
  { key: 'attemptTimeoutMs', ok: (v) => v !== 0, expects: 'a number > 0', fix: 'Leave it out for no limit.' },
  { key: 'maxRetryAfterMs', ok: limit, expects: NO_LIMIT, fix: 'For example 60000; Infinity always waits.' },
];

/** The options that keep the success path (see {@link Prepared.full}) and the lazy start. */
const FULL = ['signal', 'rate', 'budget', 'onSuccess', 'attemptTimeoutMs'];
const TIMED = ['onRetry', 'onFailedAttempt', 'onGiveUp', 'clock'];

/**
 * Validates executor options at the call, naming the option, the value and the fix (the checks
 * are {@link RULES}). The result holds only what the caller set, and the two flags. @internal
 */
export function prepare(
  where: string,
  options: RetryOptions | undefined,
  extraKeys: readonly string[] = [],
  sync = false,
): Prepared {
  if (options === undefined) return NO_OPTIONS;
  const o = optionsObject(where, options) as Record<string, unknown>;
  checkKeys(where, o, sync ? SYNC_KEYS : extraKeys.length ? [...KEYS, ...extraKeys] : KEYS);
  let backoff = o.backoff as BackoffPolicy | undefined;
  if (backoff !== undefined && !hasMethods(backoff, ['start'])) {
    invalid(where, 'backoff', backoff, 'a backoff policy', 'Build one with exponential() or take one from presets.');
  }
  const retries = o.retries;
  if (retries !== undefined) {
    if (typeof retries !== 'number' || !(retries >= 0) || (retries !== Infinity && !Number.isSafeInteger(retries))) {
      invalid(
        where,
        'retries',
        retries,
        'a whole number >= 0 (or Infinity)',
        'For example 3: one call and up to three retries.',
      );
    }
    const policy = backoff ?? DEFAULTS.backoff;
    if (!(policy instanceof Backoff)) {
      throw new TypeError(
        `${where}: \`retries\` sets the attempt limit of a Backoff value (withOptions()); this custom policy has none. Stop in its next() (return -1) instead.`,
      );
    }
    backoff = withOptions(policy, { maxAttempts: retries + 1 });
  }
  const p: { -readonly [K in keyof Prepared]: Prepared[K] } = {};
  if (backoff !== undefined) {
    // Read once: a getter cannot move the deadline during a run.
    const maxElapsedMs = (backoff as { maxElapsedMs?: unknown }).maxElapsedMs;
    if (!limit(maxElapsedMs)) {
      invalid(
        where,
        'backoff.maxElapsedMs',
        maxElapsedMs,
        NO_LIMIT,
        'A policy without a time budget has maxElapsedMs: Infinity.',
      );
    }
    p.backoff = backoff;
    p.maxElapsedMs = maxElapsedMs as number;
  }
  for (const rule of RULES) {
    const value = o[rule.key];
    if (value === undefined || rule.ok(value, o, sync)) continue;
    if (rule.conflict !== undefined) throw new TypeError(`${where}: ${rule.conflict}`);
    invalid(where, rule.key, value, rule.expects as string, rule.fix);
  }
  for (const key of KEYS) {
    const value = o[key];
    // Undefined (and no attempt timeout) stand for the defaults; backoff and retries are set above.
    if (value === undefined || (key === 'attemptTimeoutMs' && value === Infinity)) continue;
    if (key !== 'backoff' && key !== 'retries' && key !== 'unref') {
      (p as Record<string, unknown>)[key] = value;
    }
  }
  if (o.unref === true && !sync) p.clock = unrefSystemClock;
  // A time budget, or any option of FULL, needs the executor from attempt 1.
  const deadline = deadlineOf(p) !== Infinity;
  if (deadline || FULL.some((key) => p[key as keyof Prepared] !== undefined)) p.full = true;
  // A run of the default policy's kind (a curve with limits: Backoff.start) ignores the elapsed
  // time its next() is told; Google's and AWS's policies, and custom ones, may read it.
  if (
    p.full ||
    TIMED.some((key) => o[key] !== undefined) ||
    (backoff !== undefined && backoff.start !== DEFAULTS.backoff.start)
  ) {
    p.timed = true;
  }
  return p;
}
