import type { Clock } from '../core/clock.js';
import { count, optionsObject } from '../core/validate.js';
import { type LimitView, limiter } from './concurrency-limit.js';

/** Options of {@link bulkhead}. Durations in milliseconds. */
export interface BulkheadOptions {
  /**
   * Calls in flight at most: the compartment's size. Required, a whole number ≥ 1 (resilience4j's
   * `maxConcurrentCalls`, Polly's `PermitLimit`).
   */
  readonly maxConcurrent: number;
  /**
   * Calls that may wait for a slot; beyond them a call is refused at once with
   * `LimitExceededError`. Default 0: no queue (Polly's `QueueLimit`).
   */
  readonly maxQueue?: number;
  /** The longest a call waits in the queue before it is refused. Default 1000 (resilience4j's `maxWaitDuration`). */
  readonly maxWaitMs?: number;
  /** Time source for the queue's waits. Default the system clock. */
  readonly clock?: Clock;
}

/** The compartment {@link bulkhead} returns: a pipeline mechanism, and a guard for `withRetry()`'s `use`. */
export interface Bulkhead extends LimitView {
  /** Its size, `maxConcurrent`. */
  readonly maxConcurrent: number;
  /** Calls holding a slot now. */
  readonly inflight: number;
  /** Calls waiting now. */
  readonly queued: number;
  /**
   * A view for calls of another priority (higher is served first; default 0); when the queue is
   * full, a higher-priority call displaces the newest waiter of the lowest priority below its own.
   */
  withPriority(priority: number): LimitView;
}

/**
 * A fixed bulkhead (Nygard's bulkheads; resilience4j's `SemaphoreBulkhead`, Polly's concurrency
 * limiter): at most `maxConcurrent` calls run at once, `maxQueue` more wait (at most
 * `maxWaitMs`, in priority then arrival order), and the rest are refused at once with
 * `LimitExceededError` (`code` `'EBB_LIMIT_EXCEEDED'`). It isolates one dependency so that its
 * slowness cannot take every connection, thread or socket of the caller.
 *
 * It is `concurrencyLimit()`'s admission and queue with a fixed limit: it learns nothing, so it
 * judges nothing (no `isFailure`: every outcome just frees its slot). A refusal's `retryAfterMs`
 * is the time the bulkhead takes to serve the calls ahead at the round trip it has measured (0
 * until it has one), which an outer `retrying()` waits at least.
 *
 * **When to use:** you know how much of a resource a dependency may hold (a pool, a socket budget,
 * a worker's share) and want a hard cap; to find the cap from the service's behaviour instead, use
 * `concurrencyLimit()`. **Where:** inside the retry, around each attempt (Microsoft's standard
 * order puts its concurrency limiter innermost but the attempt timeout), so a slot is held only
 * while an attempt runs, not during backoff waits.
 *
 * @example
 * const payments = pipeline([retrying(), circuitBreaker(), bulkhead({ maxConcurrent: 10, maxQueue: 20 }), timeout(2_000)]);
 * await payments.execute(({ signal }) => fetch(url, { signal }));
 */
export function bulkhead(options: BulkheadOptions): Bulkhead {
  const where = 'bulkhead()';
  const o = optionsObject(where, options) as BulkheadOptions;
  const maxConcurrent = count(
    where,
    'maxConcurrent',
    o.maxConcurrent,
    Number.NaN,
    1,
    false,
    'For example 10: the calls this dependency may hold at once.',
  );
  const { maxConcurrent: _, ...rest } = o;
  const l = limiter(where, rest, maxConcurrent);
  return {
    maxConcurrent,
    get inflight() {
      return l.inflight;
    },
    get queued() {
      return l.queued;
    },
    acquire: l.acquire,
    record: l.record,
    release: l.release,
    execute: l.execute,
    withPriority: (priority: number) => l.withPriority(priority),
  };
}
