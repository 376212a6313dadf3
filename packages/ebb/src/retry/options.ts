import type { BackoffPolicy } from '../backoff/backoff.js';
import { defaultBackoff } from '../backoff/default.js';
import type { Clock } from '../core/clock.js';
import { DEV } from '../core/dev.js';
import { type HostQueue, hostQueue } from '../core/host-queues.js';
import { ELSEWHERE, MOVED, refuseNamed } from '../core/option-names.js';
import type { Random } from '../core/random.js';
import { brief, checkKeys, invalid, mistyped, optionsObject } from '../core/validate.js';
import type { Attempt } from './attempt.js';
import type {
  AttemptContext,
  FailedAttemptContext,
  GiveUpContext,
  NextStep,
  RetryContext,
  SuccessContext,
} from './contexts.js';
import type { FailureVerdict, Result } from './errors.js';
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

/**
 * Decides what counts as a failure: asked about every attempt's outcome — a thrown error
 * (`{ ok: false, error }`) or a returned value (`{ ok: true, value }`) — it answers `true` (a
 * failure: retried while the policy allows), `'throttled'` (a failure that says "slow down"),
 * or `false`. May be async. Default ({@link defaultIsFailure}): every error except aborts and the
 * errors of a bug in the caller's own code; no value. An error that is no failure reaches the
 * caller unchanged; a value that is no failure is the result.
 */
export type IsFailure<T = unknown, C = AttemptContext> = (
  outcome: Result<T>,
  context: C,
) => FailureVerdict | PromiseLike<FailureVerdict>;

/** Options of `retry()`, `retrying()` and `poll()`. Every duration is in milliseconds. */
export interface RetryOptions<T = unknown> {
  /**
   * The backoff policy: how long to wait after each failed attempt, how many attempts
   * (`maxAttempts`) and how much time (`maxElapsedMs`) in all. Default {@link defaultBackoff}.
   */
  readonly backoff?: BackoffPolicy;
  /**
   * What counts as a failure (see {@link IsFailure}). A value judged a failure is retried like
   * an error; when the retries end on it, it is the result (as `fetch` gives the last 503), not
   * a `RetryError`. Not asked about a `FinalError` (`stop(error)`), which always ends the run.
   */
  readonly isFailure?: IsFailure<T>;
  /** Aborts everything: the running attempt's signal, any wait, and no attempt starts after. */
  readonly signal?: AbortSignal;
  /**
   * The longest server hint (`retryAfterMs` on an error, from `Retry-After`) the executor will
   * honour; a longer one makes it give up at once with reason `'retry-after'`. Default 60 000.
   */
  readonly maxRetryAfterMs?: number;
  /** Called before each wait; may be async (awaited). A throw stops the retries with that error. */
  readonly onRetry?: (context: RetryContext<T>) => void | PromiseLike<void>;
  /**
   * Called after every failed attempt, the last included, with what happens next (`'retry'`
   * after `delayMs`, `'give-up'` with `reason`, or `'final'`); before `onRetry`. May be async
   * (awaited). A throw rejects the operation with that error. Not called for an abort.
   */
  readonly onFailedAttempt?: (context: FailedAttemptContext<T>) => void | PromiseLike<void>;
  /**
   * Called once when the operation ends in failure — given up or final — after the last
   * `onFailedAttempt`; not for an abort. May be async (awaited). A throw rejects the operation
   * with that error instead.
   */
  readonly onGiveUp?: (context: GiveUpContext<T>) => void | PromiseLike<void>;
  /** Called once when the operation succeeds, before it resolves. May be async (awaited). A throw rejects the operation with that error. */
  readonly onSuccess?: (context: SuccessContext<T>) => void | PromiseLike<void>;
  /**
   * Time source; default the system clock. A reading that is not a finite number fails the call;
   * one that goes back (a wall clock stepped by NTP) reads as no time passing, and the elapsed
   * time goes on from where it was.
   */
  readonly clock?: Clock;
  /** Randomness for jitter; default `Math.random`. */
  readonly random?: Random;
  /**
   * Node.js: the executor's waits do not keep the process alive, as `timer.unref()` — for
   * background work that should not delay exit. If nothing else holds the process, it exits
   * during a wait and the operation never settles. Only with the system clock (a custom `clock`
   * decides itself how it waits). Default false.
   */
  readonly unref?: boolean;
  /** A retry budget (`ebb/rate`) that may refuse a retry: the run then gives up with reason `'budget'`. */
  readonly budget?: RetryBudget;
}

/**
 * What an execution listens to for an abort: the caller's `AbortSignal`, or in a pipeline the
 * context the retry runs in (which aborts without making a signal). @internal
 */
export interface AbortSource {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: EventListenerObject): void;
  removeEventListener(type: 'abort', listener: EventListenerObject): void;
}

/** The context class of an execution's attempts: `Attempt`, or a pipeline's, which inner mechanisms can watch. @internal */
export type ContextClass = new (attempt: number, elapsedMs: number, parent?: AbortSource) => Attempt;

/**
 * Options after validation: only what the caller set, the executor's defaults (see
 * {@link deadlineOf}) standing for the rest, so that an operation waiting in its backoff holds a
 * small object.
 * @internal
 */
export interface Prepared {
  /** Something needs the executor from attempt 1 (a signal, a budget, a deadline, isFailure, …): no success path. */
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
  // biome-ignore lint/suspicious/noExplicitAny: one prepared object serves operations of every value type
  readonly isFailure?: IsFailure<any, any>;
  readonly signal?: AbortSignal;
  readonly maxRetryAfterMs?: number;
  readonly onRetry?: RetryOptions['onRetry'];
  readonly onFailedAttempt?: RetryOptions['onFailedAttempt'];
  readonly onGiveUp?: RetryOptions['onGiveUp'];
  readonly onSuccess?: RetryOptions['onSuccess'];
  /** A custom clock; without one, the executor waits in the host's queue ({@link hostQueue}). */
  readonly clock?: Clock;
  /** The host queue whose timer does not hold a Node.js process open. */
  readonly unref?: true;
  readonly random?: Random;
  readonly budget?: RetryBudget;
  /** The class of the attempts' contexts; default `Attempt` (a pipeline's retry: its `Scope`). */
  readonly Context?: ContextClass;
}

/** A call without options. @internal */
export const NO_OPTIONS: Prepared = {};

/** What prepared options read the time from: the custom clock, or the host queue. @internal */
export const timeOf = (o: Prepared): Clock | HostQueue => o.clock ?? hostQueue(o.unref);

/*
 * The executor's defaults are written where they are read, rather than in an object of
 * defaults whose property names a minifier keeps: the policy, {@link defaultBackoff}, in
 * retry/decide.ts (`startRun`), as is `maxRetryAfterMs`' 60 000; no time budget here.
 */

/**
 * The time budget of prepared options: the policy's `maxElapsedMs`; none without a policy (the
 * default policy has none: backoff/default.test.ts holds it). @internal
 */
export const deadlineOf = (o: Prepared): number => o.maxElapsedMs ?? Infinity;

/** Options' checks and flags, by name: {@link SPEC}'s type. @internal */
export type Spec = Readonly<Record<string, readonly [kind: readonly string[] | string, flags?: number]>>;

/**
 * Every option, what its value must be and what it needs, as data: the kind — a list of methods
 * (an object that has them), a `typeof` (`'function'`, `'boolean'`), `'ms'` a number of milliseconds
 * >= 0 (Infinity for no limit) — and its flags, written as numbers (a named constant survives
 * minification as a variable): 1 (FULL) it needs the executor from attempt 1, no success path;
 * 2 (TIMED) it reads the elapsed time during the run, so the clock is read before attempt 1;
 * 3 both. One formatter (`invalid()`, `mistyped()` for the kinds that are not numbers) writes every message from it: the option, the value,
 * what it must be, and for some a fix ({@link FIXES}). The first nine are `retrySync()`'s too,
 * its clock's kind aside (retry/retry-sync.ts). @internal
 */
export const SPEC: Spec = {
  backoff: [['start']],
  isFailure: ['function', 1],
  maxRetryAfterMs: ['ms'],
  onRetry: ['function', 2],
  onFailedAttempt: ['function', 2],
  onGiveUp: ['function', 2],
  onSuccess: ['function', 3],
  clock: [['now', 'sleep'], 2],
  random: ['function'],
  signal: [['addEventListener', 'removeEventListener'], 3],
  unref: ['boolean'],
  budget: [['tryAcquireRetry', 'recordSuccess'], 3],
};
/** The executor's option names, in {@link SPEC}'s order: the names `retry()` knows. @internal */
export const KEYS = Object.keys(SPEC);

/** The fix a refusal suggests, where the option's kind does not make it plain. */
const FIXES: Record<string, string> = DEV
  ? {
      backoff: 'Build one with exponential() or take one from presets.',
      signal: 'Pass controller.signal.',
      maxRetryAfterMs: 'For example 60000; Infinity always waits.',
    }
  : {};

/**
 * Options of 0.x that moved, with where they went: an unknown option is usually one of these,
 * and the message says where it belongs now.
 */
const MOVED_OPTIONS: Record<string, string> = DEV
  ? {
      retryIf: 'use `isFailure`.',
      retries: 'use `backoff: exponential({ maxAttempts })` (attempts count calls: retries + 1).',
      maxAttempts:
        "use `backoff: exponential({ maxAttempts })` (it counts calls, the first included: cockatiel's `maxAttempts: 3` is 4 here).",
      maxElapsedMs: 'use `backoff: exponential({ maxElapsedMs })`.',
      attemptTimeoutMs: 'use `timeout(ms)` inside a pipeline.',
      rate: 'use a pipeline: `pipeline([retrying(options), rate])`.',
    }
  : {};

/** The advice for another library's name of a curve's option: `backoff: exponential({ name })`. */
const curve = (name: string): string => `use \`backoff: exponential({ ${name} })\`.`;

/**
 * Other retry libraries' option names — p-retry's and async-retry's (node-retry's),
 * exponential-backoff's, ky's and got's `retry` — with the option of the policy that says the
 * same ('' for `isFailure`, or the whole fix in backquotes):
 * a program being ported passes them first, and the first four letters would guess wrong
 * (`maxRetryTime` is no `maxRetryAfterMs`).
 */
const PEERS: Record<string, string> = DEV
  ? {
      maxRetryTime: curve('maxElapsedMs'),
      minTimeout: curve('initialDelayMs'),
      startingDelay: curve('initialDelayMs'),
      maxTimeout: curve('maxDelayMs'),
      maxDelay: curve('maxDelayMs'),
      factor: curve('multiplier'),
      timeMultiple: curve('multiplier'),
      numOfAttempts: curve('maxAttempts'),
      forever: curve('maxAttempts: Infinity'),
      randomize: curve('jitter'),
      jitter: curve('jitter'),
      shouldRetry: 'use `isFailure`, which judges errors and results.',
      // A count (ky, got: retries after the first call) or a callback (exponential-backoff, undici).
      retry: 'use `backoff: exponential({ maxAttempts: n + 1 })` for a count n, `isFailure` for a callback.',
    }
  : {};

/** Checks `value`, the option `name`, against `kind` of {@link SPEC}, naming what it expected. */
function checkKind(where: string, name: string, value: unknown, kind: readonly string[] | string, fix?: string): void {
  if (
    kind === 'ms'
      ? !(typeof value === 'number' && value >= 0)
      : typeof kind === 'string'
        ? typeof value !== kind
        : typeof value !== 'object' ||
          value === null ||
          !kind.every((m) => typeof (value as Record<string, unknown>)[m] === 'function')
  ) {
    (kind === 'ms' ? invalid : mistyped)(
      where,
      name,
      value,
      DEV
        ? kind === 'ms'
          ? 'a number >= 0 (or Infinity for no limit)'
          : typeof kind === 'string'
            ? `a ${kind}`
            : `an object with ${kind.join('() and ')}()`
        : '',
      fix,
    );
  }
}

/**
 * Validates executor options at the call, naming the option, the value and the fix (the checks
 * are {@link SPEC}; an option of 0.x that moved is named with where it went). The result holds
 * only what the caller set, and the two flags. `known`: every option name the caller accepts
 * (default {@link KEYS}), a list made once by each caller, not on every call. `spec`: the checks
 * (default {@link SPEC}; `retrySync()` passes its own, whose clock blocks).
 * @internal
 */
export function prepare(
  where: string,
  options: object | undefined,
  known: readonly string[] = KEYS,
  spec: Spec = SPEC,
): Prepared {
  if (options === undefined) return NO_OPTIONS;
  const o = optionsObject(where, options) as Record<string, unknown>;
  if (DEV) {
    // A policy passed as the options (retry(op, exponential())) would be read by its own keys.
    if (typeof o.start === 'function') {
      throw new TypeError(`${where}: got a backoff policy where the options go. Pass { backoff: policy }.`);
    }
    refuseNamed(where, o, MOVED_OPTIONS, MOVED);
    refuseNamed(where, o, PEERS, ELSEWHERE);
  }
  checkKeys(where, o, known);
  const p: Record<string, unknown> = {};
  let flags = 0;
  for (const key of KEYS) {
    const value = o[key];
    if (value === undefined) continue;
    const [kind, flag = 0] = spec[key] as Spec[string];
    checkKind(where, key, value, kind, DEV ? FIXES[key] : '');
    // `unref: false` is the default: nothing to keep.
    if (value !== false) {
      p[key] = value;
      flags |= flag;
    }
  }
  const backoff = o.backoff as BackoffPolicy | undefined;
  if (backoff) {
    // Read once: a getter cannot move the deadline during a run.
    const maxElapsedMs = backoff.maxElapsedMs;
    checkKind(
      where,
      'backoff.maxElapsedMs',
      maxElapsedMs,
      'ms',
      DEV ? 'A policy without a time budget has maxElapsedMs: Infinity.' : '',
    );
    // A time budget needs the executor from attempt 1, and reads the elapsed time.
    if (maxElapsedMs !== Infinity) flags |= 3;
    // A run of the default policy's kind (a curve with limits) ignores the elapsed time its next()
    // is told; Google's and AWS's policies, and custom ones, may read it.
    if (backoff.start !== defaultBackoff.start) flags |= 2;
    p.maxElapsedMs = maxElapsedMs;
  }
  if (o.unref && o.clock) {
    throw new TypeError(
      DEV
        ? `${where}: \`unref\` is for the system clock; a custom \`clock\` decides how it waits.`
        : brief(where, 'unref', true),
    );
  }
  if (flags & 1) p.full = true;
  if (flags & 2) p.timed = true;
  return p as Prepared;
}
