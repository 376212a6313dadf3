import type { BackoffPolicy } from '../backoff/backoff.js';
import { defaultBackoff } from '../backoff/default.js';
import { type Clock, clockOption, systemClock, unrefSystemClock } from '../core/clock.js';
import type { Random } from '../core/random.js';
import { checkKeys, invalid, nonNegative, optionsObject } from '../core/validate.js';

/** The view of one attempt an operation receives. Immutable. */
export interface AttemptContext {
  /** 1 for the first call, 2 for the first retry, … */
  readonly attempt: number;
  /**
   * Aborted when the caller's signal aborts, when `attemptTimeoutMs` runs out (reason: a
   * `TimeoutError`), or when the policy's time budget ends during the attempt. Pass it on to
   * `fetch` and anything else that can be cancelled. Created on first access.
   */
  readonly signal: AbortSignal;
  /** Milliseconds since the operation started, at the start of this attempt. */
  readonly elapsedMs: number;
}

/** What `onRetry` is told before each wait. Immutable. */
export interface RetryContext {
  /** The attempt that just failed. */
  readonly attempt: number;
  /** Its error, unchanged. */
  readonly error: unknown;
  /** The wait about to begin, server hint included. */
  readonly delayMs: number;
  /** Milliseconds since the operation started. */
  readonly elapsedMs: number;
}

/** An attempt's outcome, as rate controllers see it. */
export type Outcome = 'success' | 'throttled' | 'failure';

/**
 * A rate controller shared by many operations (`ebb/rate`): the executor waits for `acquire()`
 * before every attempt and reports each outcome. An error counts as `'throttled'` when it has
 * `throttled: true` (the HTTP layer sets it for 429 and throttling codes).
 */
export interface RateController {
  /**
   * Resolves (or returns, when there is no wait) when a request may go; rejects with
   * `signal.reason` if aborted while waiting. What it resolves with is the attempt's *ticket*,
   * handed back to `record`: a controller can tell by it when the attempt was let through.
   */
  acquire(signal?: AbortSignal): unknown;
  /** Reports the outcome of one attempt, with the ticket its `acquire` gave (undefined if none). */
  record(outcome: Outcome, ticket?: unknown): void;
}

/** What a retry budget is told when an operation succeeds. Immutable. */
export interface BudgetSuccess {
  /** The attempt that succeeded: 1 when no retry was needed. */
  readonly attempt: number;
  /** The error of the attempt before it — the one whose retry succeeded; undefined when `attempt` is 1. */
  readonly lastError: unknown;
}

/**
 * A retry budget shared by many operations (`ebb/rate`): it may refuse a retry, and the
 * executor then gives up with `RetryError` reason `'budget'`.
 */
export interface RetryBudget {
  /** Called once when an operation starts. */
  recordRequest?(): void;
  /**
   * Called for every failure the classifier (`retryIf`) calls retryable, before the executor
   * decides whether a retry follows — so also for the last attempt, and whatever the budget
   * says next (gRPC counts every such failure).
   */
  recordFailure?(error: unknown): void;
  /** Asked before every retry, with the error that would be retried. */
  tryAcquireRetry(error: unknown): boolean;
  /** Called when an operation succeeds. */
  recordSuccess(context: BudgetSuccess): void;
}

/** Options of `retry()` and `poll()`. Every duration is in milliseconds. */
export interface RetryOptions {
  /** The backoff policy; default `presets.default` (100 ms ×2, full jitter, 20 s cap, 5 attempts). */
  readonly backoff?: BackoffPolicy;
  /**
   * Decides whether a failure is worth another attempt; may be async. Default: every error
   * except aborts (`name === 'AbortError'`). An error it rejects reaches the caller unchanged.
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
  /** Time source; default the system clock. */
  readonly clock?: Clock;
  /** Randomness for jitter; default `Math.random`. */
  readonly random?: Random;
  /** Node.js: waits do not keep the process alive (for background work). Default false. */
  readonly unref?: boolean;
  /** A shared rate controller (`ebb/rate`). */
  readonly rate?: RateController;
  /** A shared retry budget (`ebb/rate`). */
  readonly budget?: RetryBudget;
}

/** Options after validation, with defaults filled in. @internal */
export interface Prepared {
  /** Nothing needs the executor before the first failure: the success path applies. */
  readonly plain: boolean;
  readonly backoff: BackoffPolicy;
  readonly retryIf: RetryOptions['retryIf'];
  readonly signal: AbortSignal | undefined;
  readonly attemptTimeoutMs: number;
  readonly maxRetryAfterMs: number;
  readonly onRetry: RetryOptions['onRetry'];
  readonly clock: Clock;
  readonly random: Random | undefined;
  readonly rate: RateController | undefined;
  readonly budget: RetryBudget | undefined;
}

const KEYS = [
  'backoff',
  'retryIf',
  'signal',
  'attemptTimeoutMs',
  'maxRetryAfterMs',
  'onRetry',
  'clock',
  'random',
  'unref',
  'rate',
  'budget',
];

/**
 * The defaults, shared by every call without options, and the prototype of every prepared
 * options object (not frozen: a frozen prototype's properties could not be shadowed). @internal
 */
export const DEFAULTS: Prepared = {
  plain: true,
  backoff: defaultBackoff,
  retryIf: undefined,
  signal: undefined,
  attemptTimeoutMs: Infinity,
  maxRetryAfterMs: 60_000,
  onRetry: undefined,
  clock: systemClock,
  random: undefined,
  rate: undefined,
  budget: undefined,
};

const hasMethods = (value: unknown, names: readonly string[]): boolean =>
  typeof value === 'object' &&
  value !== null &&
  names.every((n) => typeof (value as Record<string, unknown>)[n] === 'function');

/**
 * Validates executor options at the call, naming the option, the value and the fix. The result
 * holds only what differs from {@link DEFAULTS} (the rest comes from its prototype), so that an
 * operation waiting in its backoff keeps a small object. @internal
 */
export function prepare(where: string, options: RetryOptions | undefined, extraKeys: readonly string[] = []): Prepared {
  if (options === undefined) return DEFAULTS;
  const o = optionsObject(where, options) as RetryOptions;
  checkKeys(where, o, extraKeys.length ? [...KEYS, ...extraKeys] : KEYS);
  const { backoff, retryIf, signal, onRetry, clock, random, unref, rate, budget } = o;
  if (backoff !== undefined && (!hasMethods(backoff, ['start']) || typeof backoff.maxElapsedMs !== 'number')) {
    invalid(where, 'backoff', backoff, 'a backoff policy', 'Build one with exponential() or take one from presets.');
  }
  if (retryIf !== undefined && typeof retryIf !== 'function') {
    invalid(where, 'retryIf', retryIf, 'a function (error, context) => boolean');
  }
  if (onRetry !== undefined && typeof onRetry !== 'function') {
    invalid(where, 'onRetry', onRetry, 'a function (context) => void');
  }
  if (
    signal !== undefined &&
    !(hasMethods(signal, ['addEventListener', 'removeEventListener']) && 'aborted' in signal)
  ) {
    invalid(where, 'signal', signal, 'an AbortSignal', 'Pass controller.signal.');
  }
  if (clock !== undefined) clockOption(where, clock);
  if (random !== undefined && typeof random !== 'function') {
    invalid(where, 'random', random, 'a function returning a number in [0, 1)');
  }
  if (unref !== undefined && typeof unref !== 'boolean') invalid(where, 'unref', unref, 'a boolean');
  if (unref && clock !== undefined) {
    throw new TypeError(
      `${where}: \`unref\` applies to the system clock; with a custom \`clock\`, the clock decides how it waits.`,
    );
  }
  if (rate !== undefined && !hasMethods(rate, ['acquire', 'record'])) {
    invalid(where, 'rate', rate, 'a rate controller { acquire(), record() }');
  }
  if (budget !== undefined && !hasMethods(budget, ['tryAcquireRetry', 'recordSuccess'])) {
    invalid(where, 'budget', budget, 'a retry budget { tryAcquireRetry(), recordSuccess() }');
  }
  const attemptTimeoutMs = nonNegative(
    where,
    'attemptTimeoutMs',
    o.attemptTimeoutMs,
    Infinity,
    true,
    'For example 5000 for five seconds.',
  );
  if (attemptTimeoutMs === 0) invalid(where, 'attemptTimeoutMs', 0, 'a number > 0', 'Leave it out for no limit.');
  const maxRetryAfterMs = nonNegative(
    where,
    'maxRetryAfterMs',
    o.maxRetryAfterMs,
    60_000,
    true,
    'For example 60000; Infinity always waits.',
  );
  const p = Object.create(DEFAULTS) as { -readonly [K in keyof Prepared]: Prepared[K] };
  if (backoff !== undefined) p.backoff = backoff;
  if (retryIf !== undefined) p.retryIf = retryIf;
  if (signal !== undefined) p.signal = signal;
  if (attemptTimeoutMs !== Infinity) p.attemptTimeoutMs = attemptTimeoutMs;
  if (maxRetryAfterMs !== 60_000) p.maxRetryAfterMs = maxRetryAfterMs;
  if (onRetry !== undefined) p.onRetry = onRetry;
  if (clock !== undefined) p.clock = clock;
  else if (unref) p.clock = unrefSystemClock;
  if (random !== undefined) p.random = random;
  if (rate !== undefined) p.rate = rate;
  if (budget !== undefined) p.budget = budget;
  const plain =
    signal === undefined && !rate && !budget && attemptTimeoutMs === Infinity && p.backoff.maxElapsedMs === Infinity;
  if (!plain) p.plain = false;
  return p;
}
