import { type Clock, clockOption, systemClock } from '../core/clock.js';
import { checkKeys, count, invalid, nonNegative, optionsObject } from '../core/validate.js';
import { prop } from '../retry/errors.js';
import type { Outcome, RateController } from '../retry/options.js';
import { gradient2 } from './gradient2.js';
import type { LimitAlgorithm } from './limit-algorithm.js';

/**
 * What a concurrency limit throws when a request cannot wait: the queue is full, the wait ran
 * past `maxWaitMs`, or a higher-priority request took its place.
 */
export class LimitExceededError extends Error {
  override readonly name = 'LimitExceededError';
  readonly code = 'EBB_LIMIT_EXCEEDED';
  /** Why: `'queue-full'`, `'wait'` (maxWaitMs ran out) or `'displaced'` (by a higher priority). */
  readonly reason: 'queue-full' | 'wait' | 'displaced';
  /** The limit when the request was refused. */
  readonly limit: number;
  constructor(reason: 'queue-full' | 'wait' | 'displaced', limit: number, detail: string) {
    super(`The concurrency limit (${limit} in flight) refused a request: ${detail}.`);
    this.reason = reason;
    this.limit = limit;
  }
}

/** Options of {@link concurrencyLimit}. Durations in milliseconds. */
export interface ConcurrencyLimitOptions {
  /** The algorithm: `aimd()`, `vegas()`, `gradient2()` or `bdp()` (a fresh one per limiter). Default `gradient2()`. */
  readonly algorithm?: LimitAlgorithm;
  /** Requests that may wait for a slot; beyond it, `acquire` throws at once. Default 0 (no queue). */
  readonly maxQueue?: number;
  /** The longest wait in the queue. Default 1000. */
  readonly maxWaitMs?: number;
  /**
   * Which failures are load signals (drops) for the algorithm; the others are ignored (no
   * sample). Default: errors with `throttled: true`, `TimeoutError`s, and HTTP 503.
   */
  readonly isDrop?: (error: unknown) => boolean;
  /** Time source. Default the system clock. */
  readonly clock?: Clock;
}

/** A slot held by one request. */
class Slot {
  done = false;
  constructor(
    readonly start: number,
    readonly inflight: number,
    /** The limiter's count of successes when this request was admitted. */
    readonly delivered: number,
  ) {}
}

interface Waiter {
  readonly priority: number;
  readonly resolve: (slot: Slot) => void;
  readonly reject: (error: unknown) => void;
  readonly cleanup: () => void;
}

/**
 * A limit on requests in flight that adapts to latency and drops. It is a guard: a mechanism of a
 * pipeline (`pipeline([retrying(), limiter])`, or `limiter.withPriority(p)`) and `withRetry()`'s `rate`.
 */
export interface ConcurrencyLimit extends Required<RateController> {
  /** The algorithm's current limit. */
  readonly limit: number;
  /** Requests holding a slot now. */
  readonly inflight: number;
  /** Requests waiting now. */
  readonly queued: number;
  /** Admits a request (priority 0): a slot at once, or a promise of one; throws {@link LimitExceededError}. */
  acquire(signal?: AbortSignal): unknown;
  record(outcome: Outcome, ticket?: unknown, error?: unknown): void;
  release(ticket?: unknown): void;
  /**
   * A view of this limiter for requests of another priority (higher is served first; default 0).
   * When the queue is full, a higher-priority request displaces the newest waiter of the lowest
   * priority below its own, so a high class keeps its share under overload.
   */
  withPriority(priority: number): Required<RateController>;
}

const defaultIsDrop = (error: unknown): boolean =>
  prop(error, 'throttled') === true || prop(error, 'name') === 'TimeoutError' || prop(error, 'status') === 503;

/**
 * An adaptive concurrency limit (after Netflix concurrency-limits' `SimpleLimiter` and
 * `AbstractPartitionedLimiter`): a request takes a slot while fewer than `algorithm.limit` are in
 * flight, else waits in a bounded queue (`maxQueue`, `maxWaitMs`) ordered by priority, then FIFO.
 * Each outcome feeds the algorithm one sample: its round trip, the requests in flight when it was
 * admitted, whether it was dropped (see `isDrop`), and the successes completed while it was in
 * flight (for `bdp()`). No timer runs while nobody waits.
 *
 * @example
 * const limiter = concurrencyLimit({ algorithm: vegas(), maxQueue: 100, maxWaitMs: 500 });
 * await pipeline([retrying(), limiter]).execute(({ signal }) => fetch(url, { signal }));
 */
export function concurrencyLimit(options?: ConcurrencyLimitOptions): ConcurrencyLimit {
  const where = 'concurrencyLimit()';
  const o = optionsObject(where, options) as ConcurrencyLimitOptions;
  checkKeys(where, o, ['algorithm', 'maxQueue', 'maxWaitMs', 'isDrop', 'clock']);
  const algorithm = o.algorithm ?? gradient2();
  if (typeof algorithm !== 'object' || algorithm === null || typeof algorithm.update !== 'function') {
    invalid(where, 'algorithm', algorithm, 'a limit algorithm', 'Use aimd(), vegas() or gradient2().');
  }
  const maxQueue = count(where, 'maxQueue', o.maxQueue, 0, 0, true, 'For example 100, or 0 for no queue.');
  const maxWaitMs = nonNegative(where, 'maxWaitMs', o.maxWaitMs, 1_000, true, 'For example 1000.');
  const isDrop = o.isDrop ?? defaultIsDrop;
  if (typeof isDrop !== 'function') invalid(where, 'isDrop', isDrop, 'a function (error) => boolean');
  const clock = o.clock === undefined ? systemClock : clockOption(where, o.clock);

  let inflight = 0;
  let delivered = 0;
  const queue: Waiter[] = [];
  /** The algorithm's limit, checked: a bad value from a custom algorithm reads as 1. */
  const limitNow = (): number => {
    const l = algorithm.limit;
    return typeof l === 'number' && l >= 1 ? Math.floor(l) : 1;
  };
  const take = (): Slot => new Slot(clock.now(), ++inflight, delivered);

  /** Frees a slot and hands free slots to the best waiters. */
  const free = (): void => {
    inflight--;
    while (queue.length > 0 && inflight < limitNow()) {
      const w = queue.shift() as Waiter;
      w.cleanup();
      w.resolve(take());
    }
  };

  const acquireAt = (priority: number, signal: AbortSignal | undefined): unknown => {
    if (signal?.aborted) throw signal.reason;
    const limit = limitNow();
    if (inflight < limit && queue.length === 0) return take();
    if (queue.length >= maxQueue) {
      // The newest waiter of the lowest priority below this one gives way.
      let victim = -1;
      for (let i = queue.length - 1; i >= 0; i--) {
        const w = queue[i] as Waiter;
        if (w.priority < priority && (victim < 0 || w.priority < (queue[victim] as Waiter).priority)) victim = i;
      }
      if (victim < 0) {
        throw new LimitExceededError(
          'queue-full',
          limit,
          `${inflight} in flight and ${queue.length} waiting (maxQueue)`,
        );
      }
      const [w] = queue.splice(victim, 1) as [Waiter];
      w.cleanup();
      w.reject(new LimitExceededError('displaced', limit, `a request of priority ${priority} took its place`));
    }
    return new Promise<Slot>((resolve, reject) => {
      const timer = new AbortController();
      const onAbort = () => {
        remove();
        reject(signal?.reason);
      };
      const remove = () => {
        const i = queue.indexOf(waiter);
        if (i >= 0) queue.splice(i, 1);
        waiter.cleanup();
      };
      const waiter: Waiter = {
        priority,
        resolve,
        reject,
        cleanup: () => {
          timer.abort();
          signal?.removeEventListener('abort', onAbort);
        },
      };
      let i = queue.length;
      while (i > 0 && (queue[i - 1] as Waiter).priority < priority) i--;
      queue.splice(i, 0, waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (maxWaitMs !== Infinity) {
        clock.sleep(maxWaitMs, timer.signal).then(
          () => {
            remove();
            reject(new LimitExceededError('wait', limitNow(), `no slot within maxWaitMs (${maxWaitMs} ms)`));
          },
          () => {},
        );
      }
    });
  };

  const record = (outcome: Outcome, ticket?: unknown, error?: unknown): void => {
    if (!(ticket instanceof Slot) || ticket.done) return;
    ticket.done = true;
    const rttMs = clock.now() - ticket.start;
    const dropped = outcome === 'throttled' || (outcome === 'failure' && isDrop(error) === true);
    if (outcome === 'success') delivered++;
    try {
      if (outcome === 'success' || dropped) {
        algorithm.update({ rttMs, inflight: ticket.inflight, dropped, delivered: delivered - ticket.delivered });
      }
    } finally {
      free();
    }
  };
  const release = (ticket?: unknown): void => {
    if (!(ticket instanceof Slot) || ticket.done) return;
    ticket.done = true;
    free();
  };

  const view = (priority: number): Required<RateController> => ({
    acquire: (signal?: AbortSignal) => acquireAt(priority, signal),
    record,
    release,
  });

  return {
    get limit() {
      return limitNow();
    },
    get inflight() {
      return inflight;
    },
    get queued() {
      return queue.length;
    },
    acquire: (signal?: AbortSignal) => acquireAt(0, signal),
    record,
    release,
    withPriority(priority: number) {
      if (typeof priority !== 'number' || !Number.isFinite(priority)) {
        invalid('concurrencyLimit.withPriority()', 'priority', priority, 'a finite number', 'For example 1 for high.');
      }
      return view(priority);
    },
  };
}
