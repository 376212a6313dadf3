import { predicate, readNow, sleepOn } from '../core/boundary.js';
import { type Clock, clockOption, systemClock } from '../core/clock.js';
import { checkKeys, count, invalid, nonNegative, optionsObject } from '../core/validate.js';
import { prop } from '../retry/errors.js';
import type { Outcome, RateController } from '../retry/options.js';
import { bdp } from './bdp.js';
import { LimitExceededError } from './errors.js';
import type { LimitAlgorithm } from './limit-algorithm.js';

// The refusal lives with the breaker's in errors.ts; importers of this module keep finding it here.
export { isLimitExceededError, LimitExceededError } from './errors.js';

/** Options of {@link concurrencyLimit}. Durations in milliseconds. */
export interface ConcurrencyLimitOptions {
  /**
   * The algorithm: `aimd()`, `vegas()`, `gradient2()` or `bdp()` (a fresh one per limiter).
   * Default `bdp()`, which starts at 1 and never runs ahead of what the service has shown it
   * completes: against real servers of 1, 2 and 6 slots under 1.5 × overload it served 93–99 %
   * of their capacity at 1.5–1.9 × the unloaded p99, where `gradient2()` (Netflix's default,
   * limits 20–200) never went below 20 in flight and served 4–5 %. Against a large, slow service
   * it starts slowly (25 % more a round trip): pass `bdp({ initialLimit })` when you know its size
   * (docs/resilience.md, "Defaults against a small server").
   */
  readonly algorithm?: LimitAlgorithm;
  /** Requests that may wait for a slot; beyond it, `acquire` throws at once. Default 0 (no queue). */
  readonly maxQueue?: number;
  /** The longest wait in the queue. Default 1000. */
  readonly maxWaitMs?: number;
  /**
   * Which failures are load signals (drops) for the algorithm; the others are ignored (no
   * sample). Default: errors with `throttled: true`, `TimeoutError`s, and HTTP 503. It must
   * return `true` or `false`: anything else, or a throw, fails the call whose failure it judged
   * (with a `TypeError` naming `isDrop`, or with what it threw) and feeds the algorithm no sample;
   * the call's slot is freed either way.
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
  const algorithm = o.algorithm ?? bdp();
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
  /**
   * The algorithm's limit, checked: a custom algorithm's limit that is not a number >= 1, or whose
   * getter throws, reads as 1 — the limit is shared by every call, so it is repaired, not failed.
   */
  const limitNow = (): number => {
    let l: unknown;
    try {
      l = algorithm.limit;
    } catch {
      return 1;
    }
    return typeof l === 'number' && l >= 1 ? Math.floor(l) : 1;
  };
  /** A slot for one request; a clock that throws throws before anything is counted. */
  const take = (): Slot => {
    const start = readNow(clock);
    return new Slot(start, ++inflight, delivered);
  };

  /** Hands free slots to the best waiters; a waiter whose slot cannot be taken is refused with why. */
  const serve = (): void => {
    while (queue.length > 0 && inflight < limitNow()) {
      const w = queue.shift() as Waiter;
      w.cleanup();
      let slot: Slot;
      try {
        slot = take();
      } catch (error) {
        w.reject(error);
        continue;
      }
      w.resolve(slot);
    }
  };
  const free = (): void => {
    inflight--;
    serve();
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
      if (maxWaitMs !== Infinity) {
        // Armed before the waiter is queued: a clock whose sleep() throws (or returns no promise)
        // refuses this request with that error and leaves nothing in the queue.
        sleepOn(clock, maxWaitMs, timer.signal).then(
          () => {
            remove();
            reject(new LimitExceededError('wait', limitNow(), `no slot within maxWaitMs (${maxWaitMs} ms)`));
          },
          () => {},
        );
      }
      let i = queue.length;
      while (i > 0 && (queue[i - 1] as Waiter).priority < priority) i--;
      queue.splice(i, 0, waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  };

  /**
   * One request's outcome. The user functions it calls (`isDrop`, the clock, the algorithm's
   * `update`) run inside the `try` whose `finally` frees the slot: whatever they throw fails this
   * call only (the executor rejects it with that error), and the slot goes to the next waiter.
   */
  const record = (outcome: Outcome, ticket?: unknown, error?: unknown): void => {
    if (!(ticket instanceof Slot) || ticket.done) return;
    ticket.done = true;
    if (outcome === 'success') delivered++;
    try {
      const dropped = outcome === 'throttled' || (outcome === 'failure' && predicate(where, 'isDrop', isDrop(error)));
      if (outcome === 'success' || dropped) {
        const rttMs = readNow(clock) - ticket.start;
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
