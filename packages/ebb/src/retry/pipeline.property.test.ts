import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { exponential } from '../backoff/exponential.js';
import { fullJitter } from '../backoff/jitter-full.js';
import { noJitter } from '../backoff/jitter-none.js';
import { isThenable } from '../core/boundary.js';
import { seeded } from '../core/random.js';
import { refQueue } from '../core/timer-queue.js';
import { type VirtualClock, virtualClock } from '../core/virtual-clock.js';
import { adaptiveRate } from '../rate/adaptive-rate.js';
import { bulkhead } from '../resilience/bulkhead.js';
import { circuitBreaker } from '../resilience/circuit-breaker.js';
import { concurrencyLimit } from '../resilience/concurrency-limit.js';
import { hedging } from '../resilience/hedging.js';
import type { AttemptContext } from './contexts.js';
import type { FailureVerdict, Result } from './errors.js';
import { fallback } from './fallback.js';
import { guard } from './guard.js';
import type { RateController } from './hook-points.js';
import type { Mechanism } from './mechanism.js';
import { pipeline } from './pipeline.js';
import { retrying } from './retrying.js';
import { timeout } from './timeout.js';

/**
 * Pipelines of any mechanisms in any order — retrying, timeout, fallback, guards wrapped by `guard()` (test
 * doubles that wait, refuse, or misbehave, and the real circuitBreaker and concurrencyLimit
 * through the guard protocol), and the mechanisms of ebb/resilience and ebb/rate as themselves (a breaker, a
 * limit, a bulkhead, hedging, an adaptive rate, each judging outcomes by its own isFailure, sync
 * or async, sometimes throwing) — around an
 * operation that succeeds, fails, throws, or never settles, with hostile callbacks, on a virtual
 * clock, aborted at a random moment or at the end. Whatever the pipeline:
 *
 * - the call settles, and once aborted it settles at once with the abort's reason (unless it had
 *   settled before); no attempt starts and no guard is asked after the abort;
 * - every ticket a guard handed out ends in exactly one `record` or `release` (a breaker's probe,
 *   a limit's slot: each failure counted once by each guard), the limit holds no slot and no
 *   waiter, and no timer is left (virtual or in the process-wide queue);
 * - each retrying() asks isFailure and reports onFailedAttempt once per attempt; every other
 *   mechanism that judges outcomes asks its isFailure at most once per call it ran (a failure
 *   counted once by each mechanism); breakers hold no probe, limits and bulkheads no slot.
 */

/** What the operation does on one call. */
type Step =
  | { kind: 'ok'; ms: number; deaf: boolean }
  | { kind: 'fail'; ms: number; deaf: boolean; throttled: boolean; hintMs: number | undefined }
  | { kind: 'throw' }
  | { kind: 'hang' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('ok' as const), ms: fc.integer({ min: 0, max: 300 }), deaf: fc.boolean() }),
  fc.record({
    kind: fc.constant('fail' as const),
    ms: fc.integer({ min: 0, max: 300 }),
    deaf: fc.boolean(),
    throttled: fc.boolean(),
    hintMs: fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }),
  }),
  fc.record({ kind: fc.constant('throw' as const) }),
  fc.record({ kind: fc.constant('hang' as const) }),
);

/** How a test-double guard behaves on one acquire. */
type Acquire = 'now' | 'wait' | 'deaf-wait' | 'refuse' | 'throw-value' | 'reject';

/** A mechanism to build, on the run's clock. */
type Spec =
  | {
      kind: 'retrying';
      attempts: number;
      delayMs: number;
      jittered: boolean;
      hostile: 'none' | 'isFailure' | 'onRetry';
    }
  | { kind: 'timeout'; ms: number }
  | { kind: 'fallback'; fn: boolean; throws: boolean }
  | { kind: 'guard'; acquires: Acquire[]; recordThrows: boolean }
  | { kind: 'breaker' }
  | { kind: 'limit'; limit: number; maxQueue: number; maxWaitMs: number }
  | { kind: 'native-breaker'; judge: Judge }
  | { kind: 'native-limit'; limit: number; maxQueue: number; maxWaitMs: number; judge: Judge }
  | { kind: 'bulkhead'; max: number; maxQueue: number; maxWaitMs: number }
  | { kind: 'hedging'; delayMs: number; maxHedges: number; judge: Judge }
  | { kind: 'rate'; judge: Judge };

/** How a mechanism's own isFailure answers: at once, as a promise, or with a throw on attempt 2. */
type Judge = 'sync' | 'async' | 'throws';
const judge = fc.constantFrom<Judge>('sync', 'sync', 'async', 'throws');

const spec: fc.Arbitrary<Spec> = fc.oneof(
  fc.record({
    kind: fc.constant('retrying' as const),
    attempts: fc.integer({ min: 1, max: 4 }),
    delayMs: fc.integer({ min: 0, max: 200 }),
    jittered: fc.boolean(),
    hostile: fc.constantFrom('none' as const, 'none' as const, 'isFailure' as const, 'onRetry' as const),
  }),
  fc.record({ kind: fc.constant('timeout' as const), ms: fc.integer({ min: 1, max: 500 }) }),
  fc.record({ kind: fc.constant('fallback' as const), fn: fc.boolean(), throws: fc.boolean() }),
  fc.record({
    kind: fc.constant('guard' as const),
    acquires: fc.array(fc.constantFrom<Acquire>('now', 'now', 'wait', 'deaf-wait', 'refuse', 'throw-value', 'reject'), {
      minLength: 1,
      maxLength: 5,
    }),
    recordThrows: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('breaker' as const) }),
  fc.record({
    kind: fc.constant('limit' as const),
    limit: fc.integer({ min: 1, max: 2 }),
    maxQueue: fc.integer({ min: 0, max: 2 }),
    maxWaitMs: fc.constantFrom(50, 300, Infinity),
  }),
  fc.record({ kind: fc.constant('native-breaker' as const), judge }),
  fc.record({
    kind: fc.constant('native-limit' as const),
    limit: fc.integer({ min: 1, max: 2 }),
    maxQueue: fc.integer({ min: 0, max: 2 }),
    maxWaitMs: fc.constantFrom(50, 300, Infinity),
    judge,
  }),
  fc.record({
    kind: fc.constant('bulkhead' as const),
    max: fc.integer({ min: 1, max: 2 }),
    maxQueue: fc.integer({ min: 0, max: 2 }),
    maxWaitMs: fc.constantFrom(50, 300, Infinity),
  }),
  fc.record({
    kind: fc.constant('hedging' as const),
    delayMs: fc.integer({ min: 0, max: 200 }),
    maxHedges: fc.integer({ min: 1, max: 2 }),
    judge,
  }),
  fc.record({ kind: fc.constant('rate' as const), judge }),
);

/** Tickets of one guard, wrapped so that each one's end is seen: `open` holds those not ended. */
interface Ledger {
  readonly open: Set<object>;
  readonly twice: string[];
  readonly late: string[];
}

/**
 * A guard's acquire/record/release wrapped to follow each ticket; `asked` notes an acquire made
 * after the abort.
 */
function tracked(g: RateController, ledger: Ledger, aborted: () => boolean, name: string): RateController {
  const wrap = (ticket: unknown): object => {
    const id = { ticket };
    ledger.open.add(id);
    return id;
  };
  const end = (id: unknown, how: string): unknown => {
    if (!ledger.open.delete(id as object)) ledger.twice.push(`${name}: ${how} of a ticket already ended or unknown`);
    return (id as { ticket?: unknown } | undefined)?.ticket;
  };
  return {
    acquire(signal, attempt) {
      if (aborted()) ledger.late.push(`${name}: acquire after the abort`);
      const t = g.acquire(signal, attempt);
      return isThenable(t) ? Promise.resolve(t).then(wrap) : wrap(t);
    },
    record(outcome, id, detail) {
      const ticket = end(id, 'record');
      g.record(outcome, ticket, detail);
    },
    release(id) {
      const ticket = end(id, 'release');
      g.release?.(ticket);
    },
  };
}

/** A test-double guard: each acquire does what the script says (the last entry repeats). */
function double(clock: VirtualClock, acquires: Acquire[], recordThrows: boolean): RateController {
  let n = 0;
  return {
    acquire(signal) {
      const what = acquires[Math.min(n++, acquires.length - 1)];
      switch (what) {
        case 'wait':
          return clock.sleep(40, signal).then(() => `t${n}`);
        case 'deaf-wait':
          return clock.sleep(40).then(() => `t${n}`);
        case 'refuse':
          throw Object.assign(new Error('refused'), { retryAfterMs: 30 });
        case 'throw-value':
          throw 'refused as a string';
        case 'reject':
          return Promise.reject(new Error('acquire rejected'));
        default:
          return `t${n}`;
      }
    },
    record() {
      if (recordThrows) throw new Error('record broke');
    },
    release() {},
  };
}

/** The run's clock as the mechanisms get it: it counts their timers still running. */
function countingClock(clock: VirtualClock): VirtualClock & { readonly live: number } {
  let live = 0;
  return {
    get live() {
      return live;
    },
    get pending() {
      return clock.pending;
    },
    now: () => clock.now(),
    sleep: (ms, signal) => {
      live++;
      return clock.sleep(ms, signal).finally(() => {
        live--;
      });
    },
    advance: (ms) => clock.advance(ms),
    runAll: (n) => clock.runAll(n),
  };
}

interface Run {
  readonly mechanisms: Mechanism[];
  readonly ledgers: Ledger[];
  readonly limits: { readonly inflight: number; readonly queued: number }[];
  readonly breakers: ReturnType<typeof circuitBreaker>[];
  /** Per retrying(): how often isFailure was asked about each attempt (by its context). */
  readonly judged: Map<object, number>[];
  /** Per other mechanism with an isFailure: how often it was asked about each call it ran (by its context). */
  readonly counted: Map<object, number>[];
}

/** The mechanisms of `specs` on `clock`; the test doubles' own waits (a hook's, a guard's) on `userClock`. */
function build(specs: Spec[], clock: VirtualClock, userClock: VirtualClock, aborted: () => boolean, seed: number): Run {
  const ledgers: Ledger[] = [];
  const limits: { readonly inflight: number; readonly queued: number }[] = [];
  const breakers: ReturnType<typeof circuitBreaker>[] = [];
  const judged: Map<object, number>[] = [];
  const counted: Map<object, number>[] = [];
  const random = seeded(seed);
  /** A mechanism's own isFailure: counts what it is asked about each call; answers as `how` says. */
  const judging = (how: Judge) => {
    const counts = new Map<object, number>();
    counted.push(counts);
    return (o: Result, c: AttemptContext) => {
      counts.set(c, (counts.get(c) ?? 0) + 1);
      if (how === 'throws' && c.attempt === 2) throw new Error('isFailure broke');
      const verdict: FailureVerdict = o.ok
        ? false
        : (o.error as { throttled?: unknown } | null)?.throttled === true
          ? 'throttled'
          : true;
      return how === 'async' ? Promise.resolve(verdict) : verdict;
    };
  };
  /** A guard followed ticket by ticket, wrapped by `guard()` as a user wraps a guard of their own. */
  const ticketed = (g: RateController, name: string) => {
    const ledger: Ledger = { open: new Set(), twice: [], late: [] };
    ledgers.push(ledger);
    return guard(tracked(g, ledger, aborted, name));
  };
  const mechanisms = specs.map((s, i): Mechanism => {
    switch (s.kind) {
      case 'retrying': {
        // Each attempt has its own context object: how often isFailure was asked about it.
        const counts = new Map<object, number>();
        judged.push(counts);
        return retrying({
          clock,
          random,
          backoff: s.jittered
            ? exponential({ initialDelayMs: Math.max(1, s.delayMs), jitter: fullJitter, maxAttempts: s.attempts })
            : constant({ delayMs: s.delayMs, maxAttempts: s.attempts, jitter: noJitter }),
          isFailure: (o, c) => {
            counts.set(c, (counts.get(c) ?? 0) + 1);
            if (s.hostile === 'isFailure' && c.attempt === 2) throw new Error('isFailure broke');
            return !o.ok;
          },
          onRetry: async () => {
            await userClock.sleep(5);
            if (s.hostile === 'onRetry') throw new Error('onRetry broke');
          },
        });
      }
      case 'timeout':
        return timeout(s.ms, { clock });
      case 'fallback':
        return fallback(
          s.fn
            ? () => {
                if (s.throws) throw new Error('fallback broke');
                return 'fallback value';
              }
            : 'fallback value',
        );
      case 'guard':
        return ticketed(double(userClock, s.acquires, s.recordThrows), `guard ${i}`);
      case 'breaker':
        return ticketed(
          circuitBreaker({ clock, consecutiveFailures: 2, openBackoff: constant({ delayMs: 100, jitter: noJitter }) }),
          `breaker ${i}`,
        );
      case 'limit': {
        const limit = concurrencyLimit({
          clock,
          algorithm: { limit: s.limit, update: () => {} },
          maxQueue: s.maxQueue,
          maxWaitMs: s.maxWaitMs,
        });
        limits.push(limit);
        return ticketed(limit, `limit ${i}`);
      }
      case 'native-breaker': {
        const breaker = circuitBreaker({
          clock,
          consecutiveFailures: 2,
          openBackoff: constant({ delayMs: 100, jitter: noJitter }),
          isFailure: judging(s.judge),
        });
        breakers.push(breaker);
        return breaker;
      }
      case 'native-limit': {
        const limit = concurrencyLimit({
          clock,
          algorithm: { limit: s.limit, update: () => {} },
          maxQueue: s.maxQueue,
          maxWaitMs: s.maxWaitMs,
          isFailure: judging(s.judge),
        });
        limits.push(limit);
        return limit;
      }
      case 'bulkhead': {
        const b = bulkhead({ maxConcurrent: s.max, maxQueue: s.maxQueue, maxWaitMs: s.maxWaitMs, clock });
        limits.push(b);
        return b;
      }
      case 'hedging':
        return hedging({ clock, delayMs: s.delayMs, maxHedges: s.maxHedges, isFailure: judging(s.judge) });
      case 'rate':
        return adaptiveRate({ clock, initialRatePerSecond: 20, isFailure: judging(s.judge) });
      default:
        throw new Error(`no such mechanism: ${JSON.stringify(s)}`);
    }
  });
  return { mechanisms, ledgers, limits, breakers, judged, counted };
}

/** Lets every queued callback run without moving virtual time. */
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('pipelines of any mechanisms in any order: abort, release, count once', () => {
  it('hold their invariants over generated pipelines, operations and aborts, with and without a signal', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(spec, { minLength: 1, maxLength: 6 }),
        fc.array(fc.array(step, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 3 }),
        fc.option(fc.integer({ min: 0, max: 1_500 }), { nil: undefined }),
        fc.integer(),
        // Calls without a signal: nothing can abort them unless a timeout is in the pipeline, so the
        // mechanisms that judge their outcomes may take their path with no abort listener. An
        // operation that never settles would then hang the call for good: those steps throw instead.
        fc.boolean(),
        async (specs, generated, abortAt, seed, signalled) => {
          const scripts = signalled
            ? generated
            : generated.map((script) => script.map((s): Step => (s.kind === 'hang' ? { kind: 'throw' } : s)));
          const clock = virtualClock();
          const mechanismClock = countingClock(clock);
          let aborted = false;
          const lateCalls: string[] = [];
          // The mechanisms' timers still running when the last call settled: none may be.
          const leftAtEnd: number[] = [];
          const run = build(specs, mechanismClock, clock, () => aborted, seed);
          const through = pipeline(run.mechanisms);
          const controller = new AbortController();
          const reason = new Error('aborted by the caller');
          const results = scripts.map((script, call) => {
            let n = 0;
            const result: { settled: boolean; ok?: boolean; value?: unknown; settledAt?: number } = { settled: false };
            through
              .execute(
                ({ signal }) => {
                  if (aborted) lateCalls.push(`call ${call}: an attempt started after the abort`);
                  const s = script[Math.min(n++, script.length - 1)] as Step;
                  if (s.kind === 'throw') throw new Error('thrown at once');
                  if (s.kind === 'hang') return new Promise(() => {});
                  const wait = s.deaf ? clock.sleep(s.ms) : clock.sleep(s.ms, signal);
                  return wait.then(() => {
                    if (s.kind === 'ok') return `value ${call}`;
                    throw Object.assign(new Error('503'), { throttled: s.throttled, retryAfterMs: s.hintMs });
                  });
                },
                signalled ? { signal: controller.signal } : undefined,
              )
              .then(
                (value) => Object.assign(result, { settled: true, ok: true, value, settledAt: clock.now() }),
                (error: unknown) =>
                  Object.assign(result, { settled: true, ok: false, value: error, settledAt: clock.now() }),
              )
              .then(async () => {
                // The microtasks of the cancellations run first (no virtual time passes).
                for (let i = 0; i < 5; i++) await Promise.resolve();
                if (leftAtEnd.length === 0 && results.every((r) => r.settled)) leftAtEnd.push(mechanismClock.live);
              });
            return result;
          });
          let pendingAtAbort: boolean[] = [];
          let abortedAt = Number.NaN;
          const abort = () => {
            aborted = true;
            abortedAt = clock.now();
            pendingAtAbort = results.map((r) => !r.settled);
            controller.abort(reason);
          };
          if (signalled && abortAt !== undefined) void clock.sleep(abortAt).then(abort);
          await clock.runAll(100_000);
          if (signalled && !aborted) abort();
          await turns();
          // Every call settled; one still running when the abort came settled at once, with its reason.
          for (const [i, r] of results.entries()) {
            expect(r.settled, `call ${i} settled`).toBe(true);
            if (pendingAtAbort[i]) {
              expect(r.settledAt, `call ${i} settled when aborted`).toBe(abortedAt);
              expect(r.value, `call ${i} rejected with the abort's reason`).toBe(reason);
            }
          }
          // Late outcomes (deaf sleeps, operations that settle after the abort) change nothing.
          await clock.runAll(100_000);
          await turns();
          expect(lateCalls).toEqual([]);
          for (const ledger of run.ledgers) {
            expect(ledger.late).toEqual([]);
            expect(ledger.twice).toEqual([]);
            expect(ledger.open.size).toBe(0);
          }
          for (const limit of run.limits)
            expect({ inflight: limit.inflight, queued: limit.queued }).toEqual({ inflight: 0, queued: 0 });
          for (const counts of run.judged)
            for (const [c, times] of counts) expect(times, `attempt ${(c as { attempt: number }).attempt}`).toBe(1);
          for (const counts of run.counted)
            for (const [c, times] of counts) expect(times, `call ${(c as { attempt: number }).attempt} judged`).toBe(1);
          for (const breaker of run.breakers) expect(breaker.metrics.probesInFlight).toBe(0);
          expect(leftAtEnd, 'timers of the mechanisms left when the last call settled').toEqual([0]);
          expect(clock.pending).toBe(0);
          expect(refQueue.size).toBe(0);
        },
      ),
      { numRuns: 400 },
    );
  }, 120_000);
});
