import { ignored, readNow, sleepOn } from '../core/boundary.js';
import { type Clock, clockOption } from '../core/clock.js';
import { RENAMED, refuseNamed } from '../core/option-names.js';
import { checkKeys, count, invalid, mistyped, nonNegative, optionsObject } from '../core/validate.js';
import { type FailureVerdict, prop } from '../retry/errors.js';
import { type Judged, judgedExecutor, recordedVerdict } from '../retry/judged-guard.js';
import type { Mechanism } from '../retry/mechanism.js';
import type { IsFailure, Outcome, RateController } from '../retry/options.js';
import { bdp } from './bdp.js';
import { LimitExceededError } from './errors.js';
import type { LimitAlgorithm } from './limit-algorithm.js';

// The refusal lives with the breaker's in errors.ts; importers of this module keep finding it here.
export { isLimitExceededError, LimitExceededError } from './errors.js';

/** Options of {@link concurrencyLimit}. Durations in milliseconds. */
export interface ConcurrencyLimitOptions<T = unknown> {
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
   * Which outcomes are load signals — drops, for the algorithm: the same predicate as `retry()`'s,
   * asked about each request's outcome (`{ ok: false, error }` or `{ ok: true, value }`) with its
   * context. `true` or `'throttled'` is a drop; `false` on a value is a success sample; `false` on
   * an error gives no sample (Netflix's `onIgnore`). It must answer `true`, `false` or
   * `'throttled'`: anything else, or a throw, fails the request it judged (a `TypeError` naming
   * `isFailure`, or what it threw) and feeds no sample; the slot is freed either way. May be async
   * in a pipeline (the slot is freed before it is awaited); through `record()` it must answer at
   * once. Not asked about a `FinalError` (`stop(error)`): no sample.
   *
   * Default: only what says "overloaded" — a `throttled: true` or status-429 error or value
   * (`'throttled'`), a `TimeoutError`, a status-503 error or value (`true`). Other failures (a
   * 500, a refused connection) give no sample, as Netflix's gRPC interceptor drops only
   * `UNAVAILABLE` and ignores other statuses: a limit halved by errors that say nothing about load
   * would starve healthy calls. Through `record()` without it, a `'throttled'` outcome is a drop
   * and the others are judged by this default.
   */
  readonly isFailure?: IsFailure<T>;
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
    /** The attempt it admitted (1 when not told), for `isFailure`'s context. */
    readonly attempt: number,
  ) {}
}

interface Waiter {
  readonly priority: number;
  readonly attempt: number;
  readonly resolve: (slot: Slot) => void;
  readonly reject: (error: unknown) => void;
  readonly cleanup: () => void;
}

/** A view of a concurrency limit: a pipeline mechanism, and a guard for `withRetry()`'s `use`. */
export interface LimitView extends Required<RateController>, Mechanism {}

/**
 * A limit on requests in flight that adapts to latency and drops. It is a mechanism of a pipeline
 * (`pipeline([retrying(), limiter])`, or `limiter.withPriority(p)`) and a guard for `withRetry()`'s `use`.
 */
export interface ConcurrencyLimit extends LimitView {
  /** The algorithm's current limit. */
  readonly limit: number;
  /** Requests holding a slot now. */
  readonly inflight: number;
  /** Requests waiting now. */
  readonly queued: number;
  /** Admits a request (priority 0): a slot at once, or a promise of one; throws {@link LimitExceededError}. */
  acquire(signal?: AbortSignal, attempt?: number): unknown;
  /** Reports a request's outcome with its slot and what it ended with (`detail`), judged as `isFailure` says; frees the slot. */
  record(outcome: Outcome, ticket?: unknown, detail?: unknown): void;
  release(ticket?: unknown): void;
  /**
   * A view of this limiter for requests of another priority (higher is served first; default 0).
   * When the queue is full, a higher-priority request displaces the newest waiter of the lowest
   * priority below its own, so a high class keeps its share under overload.
   */
  withPriority(priority: number): LimitView;
}

/** The limit's default `isFailure`: only what says "overloaded" (see `ConcurrencyLimitOptions.isFailure`). */
function loadSignal(_ok: boolean, detail: unknown): FailureVerdict {
  if (typeof detail !== 'object' || detail === null) return false;
  const status = prop(detail, 'status');
  if (prop(detail, 'throttled') === true || status === 429) return 'throttled';
  return status === 503 || prop(detail, 'name') === 'TimeoutError';
}

/** The signal of a call nothing can abort: none (one function for every such call). */
const noSignal = (): undefined => undefined;

/** RFC 6298's gain for the smoothed round-trip time (α = 1/8): the limit's estimate of a slot's hold. */
const RTT_GAIN = 0.125;

/**
 * An adaptive concurrency limit (after Netflix concurrency-limits' `SimpleLimiter` and
 * `AbstractPartitionedLimiter`): a request takes a slot while fewer than `algorithm.limit` are in
 * flight, else waits in a bounded queue (`maxQueue`, `maxWaitMs`) ordered by priority, then FIFO.
 * Each outcome feeds the algorithm one sample: its round trip, the requests in flight when it was
 * admitted, whether it was dropped (see `isFailure`), and the successes completed while it was in
 * flight (for `bdp()`). No timer runs while nobody waits.
 *
 * A refusal ({@link LimitExceededError}) carries `retryAfterMs`: the time the limit takes to serve
 * the requests ahead, by Little's law — `(queued + 1) × the smoothed round trip ÷ the limit` —
 * which an outer `retrying()` waits at least (0 until a round trip is known: its own backoff).
 *
 * @example
 * const limiter = concurrencyLimit({ algorithm: vegas(), maxQueue: 100, maxWaitMs: 500 });
 * await pipeline([retrying(), limiter]).execute(({ signal }) => fetch(url, { signal }));
 */
export function concurrencyLimit<T = unknown>(options?: ConcurrencyLimitOptions<T>): ConcurrencyLimit {
  return limiter('concurrencyLimit()', options, undefined);
}

/**
 * A concurrency limit, its options checked under `where`; `fixed`: a fixed limit of that many
 * (the bulkhead), which learns nothing and so judges nothing. @internal
 */
export function limiter(where: string, options: object | undefined, fixed: number | undefined): ConcurrencyLimit {
  const o = optionsObject(where, options) as ConcurrencyLimitOptions;
  refuseNamed(
    where,
    o,
    {
      isDrop:
        "use `isFailure: (outcome, context) => …`, asked about every outcome (`{ ok: false, error }` or `{ ok: true, value }`); `true` or `'throttled'` is a drop.",
    },
    RENAMED,
  );
  checkKeys(
    where,
    o,
    fixed === undefined
      ? ['algorithm', 'maxQueue', 'maxWaitMs', 'isFailure', 'clock']
      : ['maxQueue', 'maxWaitMs', 'clock'],
  );
  const algorithm: LimitAlgorithm = fixed === undefined ? (o.algorithm ?? bdp()) : { limit: fixed, update() {} };
  if (typeof algorithm !== 'object' || algorithm === null || typeof algorithm.update !== 'function') {
    mistyped(where, 'algorithm', algorithm, 'a limit algorithm', 'Use aimd(), vegas() or gradient2().');
  }
  const maxQueue = count(where, 'maxQueue', o.maxQueue, 0, 0, true, 'For example 100, or 0 for no queue.');
  const maxWaitMs = nonNegative(where, 'maxWaitMs', o.maxWaitMs, 1_000, true, 'For example 1000.');
  const isFailure = o.isFailure;
  if (isFailure !== undefined && typeof isFailure !== 'function') {
    mistyped(where, 'isFailure', isFailure, "a function (outcome, context) => true, false or 'throttled'");
  }
  const judge = fixed === undefined ? loadSignal : (): FailureVerdict => false;
  const clock = clockOption(where, o.clock);

  let inflight = 0;
  let delivered = 0;
  /** The smoothed round trip of the requests sampled (RFC 6298's SRTT); NaN until the first. */
  let srtt = Number.NaN;
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
    if (typeof l === 'number' && l >= 1) return Math.floor(l);
    ignored(l);
    return 1;
  };
  /** A slot for one request; a clock that throws throws before anything is counted. */
  const take = (attempt: number): Slot => {
    const start = readNow(clock);
    return new Slot(start, ++inflight, delivered, attempt);
  };
  /** The wait a refusal suggests: the requests ahead served at the limit's rate (Little's law), 0 while no round trip is known. */
  const retryAfterMs = (): number => (srtt >= 0 ? Math.ceil((srtt * (queue.length + 1)) / limitNow()) : 0);
  const refusal = (reason: LimitExceededError['reason'], detail: string): LimitExceededError =>
    new LimitExceededError(reason, limitNow(), detail, retryAfterMs(), fixed === undefined ? undefined : 'bulkhead');

  /** Hands free slots to the best waiters; a waiter whose slot cannot be taken is refused with why. */
  const serve = (): void => {
    while (queue.length > 0 && inflight < limitNow()) {
      const w = queue.shift() as Waiter;
      w.cleanup();
      let slot: Slot;
      try {
        slot = take(w.attempt);
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

  /**
   * Admits a request of `priority`: a slot at once, a promise of one (it waits in the queue), or a
   * refusal. `signalOf` gives the signal a wait listens to — read only when the request must wait.
   */
  const acquireAt = (priority: number, signalOf: () => AbortSignal | undefined, attempt: number): unknown => {
    const limit = limitNow();
    if (inflight < limit && queue.length === 0) return take(attempt);
    if (queue.length >= maxQueue) {
      // The newest waiter of the lowest priority below this one gives way.
      let victim = -1;
      for (let i = queue.length - 1; i >= 0; i--) {
        const w = queue[i] as Waiter;
        if (w.priority < priority && (victim < 0 || w.priority < (queue[victim] as Waiter).priority)) victim = i;
      }
      if (victim < 0) {
        throw refusal('queue-full', `${inflight} in flight and ${queue.length} waiting (maxQueue)`);
      }
      const [w] = queue.splice(victim, 1) as [Waiter];
      w.cleanup();
      w.reject(refusal('displaced', `a request of priority ${priority} took its place`));
    }
    const signal = signalOf();
    if (signal?.aborted) throw signal.reason;
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
        attempt,
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
            reject(refusal('wait', `no slot within maxWaitMs (${maxWaitMs} ms)`));
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

  /** One sample for the algorithm: the request ended at `at`, dropped or not. */
  const sample = (slot: Slot, at: number, dropped: boolean): void => {
    if (!dropped) delivered++;
    const rttMs = at - slot.start;
    srtt = srtt >= 0 ? srtt + RTT_GAIN * (rttMs - srtt) : rttMs;
    ignored(algorithm.update({ rttMs, inflight: slot.inflight, dropped, delivered: delivered - slot.delivered }));
  };

  /**
   * One request's outcome: its `verdict`, or — none given (`record()`) — `outcome` and `detail`
   * judged here by `isFailure` or the default. The user functions it calls (`isFailure`, the
   * clock, the algorithm's `update`) run inside the `try` whose `finally` frees the slot: whatever
   * they throw fails this call only (the executor rejects it with that error), and the slot goes
   * to the next waiter.
   */
  const settle = (
    slot: Slot,
    ok: boolean,
    verdict: FailureVerdict | undefined,
    outcome?: Outcome,
    detail?: unknown,
  ): void => {
    slot.done = true;
    try {
      // No verdict yet: a record()'s, judged here (no closure made for it on a pipeline's call).
      const dropped =
        (verdict ?? recordedVerdict(where, isFailure, judge, outcome as Outcome, detail, slot.attempt)) !== false;
      if (ok || dropped) sample(slot, readNow(clock), dropped);
    } finally {
      free();
    }
  };
  const record = (outcome: Outcome, ticket?: unknown, detail?: unknown): void => {
    if (!(ticket instanceof Slot) || ticket.done) return;
    settle(ticket, outcome === 'success', undefined, outcome, detail);
  };
  const release = (ticket?: unknown): void => {
    if (!(ticket instanceof Slot) || ticket.done) return;
    ticket.done = true;
    free();
  };

  /** The limit as a pipeline mechanism for requests of `priority`: it judges each outcome itself. */
  const judged = (priority: number): Judged<Slot> => ({
    where,
    isFailure,
    judge,
    acquire: (context, abortable) =>
      acquireAt(priority, abortable ? () => context.signal : noSignal, context.attempt) as Slot,
    release,
    settle(slot, verdict, ok) {
      settle(slot, ok, verdict);
    },
    end(slot, ok) {
      // The slot is free before the verdict is awaited; the sample follows it.
      slot.done = true;
      let at: number;
      try {
        at = readNow(clock);
      } finally {
        free();
      }
      return (verdict) => {
        const dropped = verdict !== false;
        if (ok || dropped) sample(slot, at, dropped);
      };
    },
  });

  const view = (priority: number): LimitView => {
    const spec = judged(priority);
    return {
      acquire(signal?: AbortSignal, attempt?: number) {
        if (signal?.aborted) throw signal.reason;
        return acquireAt(priority, () => signal, typeof attempt === 'number' && attempt >= 1 ? attempt : 1);
      },
      record,
      release,
      execute: judgedExecutor(spec),
    };
  };
  const base = view(0);

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
    acquire: base.acquire,
    record,
    release,
    execute: base.execute,
    withPriority(priority: number) {
      if (typeof priority !== 'number' || !Number.isFinite(priority)) {
        invalid(
          `${where.slice(0, -2)}.withPriority()`,
          'priority',
          priority,
          'a finite number',
          'For example 1 for high.',
        );
      }
      return view(priority);
    },
  };
}
