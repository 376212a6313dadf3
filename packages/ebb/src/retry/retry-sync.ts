import type { BackoffPolicy, BackoffRun } from '../backoff/backoff.js';
import { handled, isThenable, readNow, verdict } from '../core/boundary.js';
import { DEV } from '../core/dev.js';
import type { Random } from '../core/random.js';
import { rebase, type Timeline } from '../core/timeline.js';
import { mistyped } from '../core/validate.js';
import { decide, startRun } from './decide.js';
import {
  defaultIsFailure,
  type FailureVerdict,
  type GiveUpReason,
  isFinal,
  type Result,
  unwrapFinal,
} from './errors.js';
import type {
  FailedAttemptContext,
  GiveUpContext,
  NextStep,
  Prepared,
  RetryContext,
  SuccessContext,
} from './options.js';
import { KEYS, prepare, SPEC, type Spec } from './options.js';

/** The view of one attempt a synchronous operation receives. */
export interface SyncAttemptContext {
  /** 1 for the first call, 2 for the first retry, … */
  readonly attempt: number;
  /** Milliseconds since the operation started, at the start of this attempt. */
  readonly elapsedMs: number;
}

/** Time for `retrySync()`: a clock that blocks. */
export interface SyncClock {
  /**
   * Milliseconds; only differences matter. A reading that goes back (a wall clock stepped by
   * NTP) reads as no time passing, and time goes on from where it was.
   */
  now(): number;
  /** Blocks the thread for `ms` milliseconds. */
  sleepSync(ms: number): void;
}

/** Options of {@link retrySync}. */
export interface RetrySyncOptions<T = unknown> {
  /** The backoff policy; default `defaultBackoff`. */
  readonly backoff?: BackoffPolicy;
  /**
   * What counts as a failure, as in `retry()` but answered synchronously: a thrown error or a
   * returned value (`{ ok, error }` / `{ ok, value }`). Default `defaultIsFailure`.
   */
  readonly isFailure?: (outcome: Result<T>, context: SyncAttemptContext) => FailureVerdict;
  /**
   * Called before each wait. A throw stops the retries with that error. Every hook here runs
   * synchronously: one that returns a promise (an `async` function) fails the run with a
   * `TypeError` — use `retry()` for async hooks.
   */
  readonly onRetry?: (context: RetryContext<T>) => void;
  /** Called after every failed attempt, the last included, with what happens next. A throw ends the run with that error. */
  readonly onFailedAttempt?: (context: FailedAttemptContext<T>) => void;
  /** Called once when the run ends in failure (given up, or final). A throw replaces the error. */
  readonly onGiveUp?: (context: GiveUpContext<T>) => void;
  /** Called once on success, before the value is returned. A throw replaces the value with that error. */
  readonly onSuccess?: (context: SuccessContext<T>) => void;
  /** The longest server hint (`retryAfterMs` on an error) honoured; default 60 000. */
  readonly maxRetryAfterMs?: number;
  /** Randomness for jitter; default `Math.random`. */
  readonly random?: Random;
  /** Time source that blocks; default `performance.now()` and `Atomics.wait`. */
  readonly clock?: SyncClock;
}

let blockingAllowed: boolean | undefined;

/** `Atomics.wait` on a shared buffer: the one portable way to block a thread without spinning. */
const atomicsClock: SyncClock = {
  // Stryker disable next-line StringLiteral: `typeof` never yields "", so the test stays true wherever performance exists (every runtime this targets).
  now: () => (typeof performance !== 'undefined' ? performance.now() : Date.now()),
  sleepSync(ms: number): void {
    // Stryker disable next-line EqualityOperator: Atomics.wait with a timeout of 0 returns at once, as skipping it does.
    if (ms > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  },
};

function canBlock(): boolean {
  if (blockingAllowed === undefined) {
    try {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 0);
      blockingAllowed = true;
    } catch {
      // A browser's main thread (Atomics.wait throws) or no SharedArrayBuffer (not cross-origin isolated).
      blockingAllowed = false;
    }
  }
  return blockingAllowed;
}

/** The option names `retrySync()` knows: the first nine of `retry()`'s (no signal, unref or budget). */
const SYNC_KEYS = /* @__PURE__ */ KEYS.slice(0, 9);

/** `retry()`'s checks, but a `retrySync()` clock blocks: `sleepSync()` instead of `sleep()`. */
const SYNC_SPEC: Spec = { ...SPEC, clock: [['now', 'sleepSync'], 2] };

/**
 * `retry()` for synchronous work — renaming a file another process holds, a CLI script's
 * lookup — blocking the thread between attempts with `Atomics.wait` (no busy loop). Where a
 * thread may not block (a browser's main thread, or without `SharedArrayBuffer`), it throws a
 * `TypeError` at the call instead of spinning.
 *
 * Same options (those that make sense without a promise), outcomes and decisions as `retry()`
 * — both run the same decision logic after a failure: the value; the operation's own error when
 * `isFailure` says it is no failure or it threw a `FinalError`; `RetryError` when attempts, the
 * time budget (no wait ends past it) or a server hint rule end the run (the last value, when a
 * value judged a failure ended it); a named `TypeError`/`RangeError` for a bad value from a
 * policy or clock. Hooks are called synchronously (a returned promise is not awaited). A
 * synchronous attempt cannot be interrupted, so there is no `signal` or timeout.
 *
 * @example
 * retrySync(() => renameSync(tmp, target), {
 *   isFailure: (o) => !o.ok && (o.error as NodeJS.ErrnoException).code === 'EBUSY',
 * });
 */
export function retrySync<T>(operation: (context: SyncAttemptContext) => T, options?: RetrySyncOptions<T>): T {
  const where = 'retrySync()';
  if (typeof operation !== 'function') mistyped(where, 'operation', operation, DEV ? 'a function' : '');
  const o = prepare(where, options, SYNC_KEYS, SYNC_SPEC);
  const clock = options?.clock ?? atomicsClock;
  if (clock === atomicsClock && !canBlock()) {
    throw new TypeError(
      `${where}: this thread may not block (a browser's main thread, or no SharedArrayBuffer without cross-origin isolation); use retry() instead.`,
    );
  }
  // The elapsed time's timeline: a clock set back reads as no time passing, then goes on.
  const time: Timeline = { last: 0, offset: -readNow(clock) };
  const elapsedNow = (): number => rebase(time, readNow(clock));
  const isFailure = (o.isFailure ?? defaultIsFailure) as (outcome: Result, context: SyncAttemptContext) => unknown;
  let run: BackoffRun | undefined;
  for (let attempt = 1; ; attempt++) {
    const context = Object.freeze({ attempt, elapsedMs: attempt === 1 ? 0 : elapsedNow() });
    let ok = true;
    let outcome: unknown;
    try {
      outcome = operation(context);
    } catch (error) {
      ok = false;
      outcome = error;
    }
    if (ok && isThenable(outcome)) {
      throw new TypeError(`${where}: the operation returned a promise; use retry() for asynchronous work.`);
    }
    // A FinalError returned instead of thrown (`return stop(error)`) ends the run as a thrown one does.
    if (ok && outcome instanceof Error && isFinal(outcome)) ok = false;
    const answer =
      ok && !o.isFailure
        ? false
        : !ok && isFinal(outcome)
          ? false
          : isFailure(ok ? { ok, value: outcome } : { ok, error: outcome }, context);
    synchronous('isFailure', answer);
    const failed = verdict(where, 'isFailure', answer);
    if (ok && !failed) {
      synchronous('onSuccess', o.onSuccess?.(Object.freeze({ attempt, elapsedMs: elapsedNow(), value: outcome })));
      return outcome as T;
    }
    const elapsed = elapsedNow();
    const error = ok ? undefined : outcome;
    const value = ok ? outcome : undefined;
    if (!failed) {
      const own = unwrapFinal(outcome);
      failedHook(o, attempt, own, undefined, elapsed, 'final', undefined, undefined);
      giveUpHook(o, attempt, own, undefined, elapsed, 'final');
      throw own;
    }
    run ??= startRun(o);
    const step = decide(o, run, attempt, outcome, elapsed);
    if (typeof step !== 'number') {
      failedHook(o, attempt, error, value, elapsed, 'give-up', undefined, step.reason);
      giveUpHook(o, attempt, error, value, elapsed, step.reason);
      if (ok) return outcome as T;
      throw step;
    }
    failedHook(o, attempt, error, value, elapsed, 'retry', step, undefined);
    synchronous('onRetry', o.onRetry?.(Object.freeze({ attempt, error, value, delayMs: step, elapsedMs: elapsed })));
    clock.sleepSync(step);
  }
}

/**
 * An answer of `isFailure` or a hook, which this executor cannot wait for: a promise is refused
 * with a TypeError naming the function, and its rejection (if any) handled here, since nobody will
 * await it; anything else passes (a hook's value is ignored, `isFailure`'s is checked next).
 */
function synchronous(name: string, answer: unknown): void {
  if (!isThenable(answer)) return;
  handled(answer);
  throw new TypeError(
    `retrySync(): \`${name}\` returned a promise; it must answer synchronously (use retry() for an async ${name}).`,
  );
}

function failedHook(
  o: Prepared,
  attempt: number,
  error: unknown,
  value: unknown,
  elapsedMs: number,
  next: NextStep,
  delayMs: number | undefined,
  reason: GiveUpReason | undefined,
): void {
  synchronous(
    'onFailedAttempt',
    o.onFailedAttempt?.(Object.freeze({ attempt, error, value, elapsedMs, next, delayMs, reason })),
  );
}

function giveUpHook(
  o: Prepared,
  attempts: number,
  error: unknown,
  value: unknown,
  elapsedMs: number,
  reason: GiveUpReason | 'final',
): void {
  synchronous('onGiveUp', o.onGiveUp?.(Object.freeze({ attempts, error, value, elapsedMs, reason })));
}
