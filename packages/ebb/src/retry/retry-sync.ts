import type { BackoffPolicy } from '../backoff/backoff.js';
import { defaultBackoff } from '../backoff/default.js';
import type { Random } from '../core/random.js';
import { checkKeys, invalid, nonNegative, optionsObject } from '../core/validate.js';
import { isAbortError, RetryError, retryAfterOf } from './errors.js';
import type { RetryContext } from './options.js';

/** The view of one attempt a synchronous operation receives. */
export interface SyncAttemptContext {
  /** 1 for the first call, 2 for the first retry, … */
  readonly attempt: number;
  /** Milliseconds since the operation started, at the start of this attempt. */
  readonly elapsedMs: number;
}

/** Time for `retrySync()`: a clock that blocks. */
export interface SyncClock {
  /** Milliseconds on a monotonic scale. */
  now(): number;
  /** Blocks the thread for `ms` milliseconds. */
  sleepSync(ms: number): void;
}

/** Options of {@link retrySync}. */
export interface RetrySyncOptions {
  /** The backoff policy; default `presets.default`. */
  readonly backoff?: BackoffPolicy;
  /** Decides whether an error is worth another attempt (synchronous). Default: every error but an abort. */
  readonly retryIf?: (error: unknown, context: SyncAttemptContext) => boolean;
  /** Called before each wait. A throw stops the retries with that error. */
  readonly onRetry?: (context: RetryContext) => void;
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
  now: () => (typeof performance !== 'undefined' ? performance.now() : Date.now()),
  sleepSync(ms: number): void {
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

/**
 * `retry()` for synchronous work — renaming a file another process holds, a CLI script's
 * lookup — blocking the thread between attempts with `Atomics.wait` (no busy loop). Where a
 * thread may not block (a browser's main thread, or without `SharedArrayBuffer`), it throws a
 * `TypeError` at the call instead of spinning.
 *
 * Same outcomes as `retry()`: the value; the operation's own error when `retryIf` says final;
 * `RetryError` when attempts, the time budget (no wait ends past it) or a server hint rule end
 * the run. A synchronous attempt cannot be interrupted, so there is no `signal` or timeout.
 *
 * @example
 * retrySync(() => renameSync(tmp, target), { retryIf: (e) => (e as NodeJS.ErrnoException).code === 'EBUSY' });
 */
export function retrySync<T>(operation: (context: SyncAttemptContext) => T, options?: RetrySyncOptions): T {
  const where = 'retrySync()';
  if (typeof operation !== 'function') invalid(where, 'operation', operation, 'a function');
  const o = optionsObject(where, options) as RetrySyncOptions;
  checkKeys(where, o, ['backoff', 'retryIf', 'onRetry', 'maxRetryAfterMs', 'random', 'clock']);
  const backoff = o.backoff ?? defaultBackoff;
  if (typeof backoff !== 'object' || typeof backoff.start !== 'function')
    invalid(where, 'backoff', backoff, 'a backoff policy');
  if (o.retryIf !== undefined && typeof o.retryIf !== 'function') invalid(where, 'retryIf', o.retryIf, 'a function');
  if (o.onRetry !== undefined && typeof o.onRetry !== 'function') invalid(where, 'onRetry', o.onRetry, 'a function');
  if (o.random !== undefined && typeof o.random !== 'function') invalid(where, 'random', o.random, 'a function');
  const clock = o.clock ?? atomicsClock;
  if (typeof clock?.now !== 'function' || typeof clock.sleepSync !== 'function') {
    invalid(where, 'clock', clock, 'a SyncClock { now(), sleepSync(ms) }');
  }
  const maxRetryAfterMs = nonNegative(where, 'maxRetryAfterMs', o.maxRetryAfterMs, 60_000, true);
  if (clock === atomicsClock && !canBlock()) {
    throw new TypeError(
      `${where}: this thread may not block (a browser's main thread, or no SharedArrayBuffer without cross-origin isolation); use retry() instead.`,
    );
  }
  const start = clock.now();
  let run: ReturnType<BackoffPolicy['start']> | undefined;
  for (let attempt = 1; ; attempt++) {
    const context = Object.freeze({ attempt, elapsedMs: attempt === 1 ? 0 : clock.now() - start });
    let error: unknown;
    let failed = false;
    let value: T | undefined;
    try {
      value = operation(context);
    } catch (e) {
      failed = true;
      error = e;
    }
    if (!failed) {
      if (typeof (value as { then?: unknown } | null | undefined)?.then === 'function') {
        throw new TypeError(`${where}: the operation returned a promise; use retry() for asynchronous work.`);
      }
      return value as T;
    }
    const retryable = o.retryIf ? o.retryIf(error, context) : !isAbortError(error);
    if (!retryable) throw error;
    run ??= backoff.start(o.random);
    let delay = run.next();
    const elapsed = clock.now() - start;
    if (delay < 0) throw new RetryError('attempts', attempt, elapsed, error, `maxAttempts (${attempt}) reached`);
    const hint = retryAfterOf(error);
    if (hint !== undefined) {
      if (hint > maxRetryAfterMs) {
        throw new RetryError(
          'retry-after',
          attempt,
          elapsed,
          error,
          `the server asked to wait ${hint} ms, more than maxRetryAfterMs (${maxRetryAfterMs} ms)`,
        );
      }
      if (hint > delay) delay = hint;
    }
    if (elapsed + delay > backoff.maxElapsedMs) {
      throw new RetryError(
        'elapsed',
        attempt,
        elapsed,
        error,
        `the next wait (${Math.round(delay)} ms) would end past maxElapsedMs (${backoff.maxElapsedMs} ms)`,
      );
    }
    o.onRetry?.(Object.freeze({ attempt, error, delayMs: delay, elapsedMs: elapsed }));
    clock.sleepSync(delay);
  }
}
