// The boundary rule as a property (docs/structure.md, "User code at the boundary"): in every
// mechanism, a user function that throws, returns garbage (NaN, undefined, a string) or a promise
// that never settles fails only the call it belongs to, releases everything that call held, and
// never escapes into a host callback. Each case runs two concurrent calls through one mechanism (the
// executor, a pipeline's mechanisms, a guard inside a retrying()) on
// a virtual clock — the call the fault belongs to (A) and an unrelated one (B) — once with every
// user function well behaved (the baseline) and once with one of them misbehaving at its n-th
// call; then it checks what each call ended with, the mechanism's resting values (slots, queue,
// probes, waiters, timers, abort listeners) and that nothing reached the host.
import { getEventListeners } from 'node:events';
import { isPromise } from 'node:util/types';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { constant } from './backoff/constant.js';
import { fullJitter } from './backoff/jitter-full.js';
import { noJitter } from './backoff/jitter-none.js';
import type { Clock } from './core/clock.js';
import { TimerQueue, type Wakeup } from './core/timer-queue.js';
import { type VirtualClock, virtualClock } from './core/virtual-clock.js';
import { type HttpPredicate, standard } from './http/predicates.js';
import { withRetry } from './http/with-retry.js';
import { adaptiveRate } from './rate/adaptive-rate.js';
import { adaptiveThrottle } from './rate/adaptive-throttle.js';
import { awsAdaptiveRate } from './rate/aws-adaptive-rate.js';
import { awsRetryQuota } from './rate/aws-retry-quota.js';
import { ratioBudget } from './rate/ratio-budget.js';
import { aimd } from './resilience/aimd.js';
import { bulkhead } from './resilience/bulkhead.js';
import { circuitBreaker } from './resilience/circuit-breaker.js';
import { concurrencyLimit } from './resilience/concurrency-limit.js';
import { hedgeBudget } from './resilience/hedge-budget.js';
import { hedging } from './resilience/hedging.js';
import type { LimitAlgorithm } from './resilience/limit-algorithm.js';
import type { Result } from './retry/errors.js';
import { fallback } from './retry/fallback.js';
import { guard } from './retry/guard.js';
import type { Mechanism } from './retry/mechanism.js';
import type { AttemptContext, RateController, RetryOptions } from './retry/options.js';
import { pipeline } from './retry/pipeline.js';
import { poll } from './retry/poll.js';
import { retry } from './retry/retry.js';
import { type RetrySyncOptions, retrySync } from './retry/retry-sync.js';
import { retrying } from './retry/retrying.js';
import { timeout } from './retry/timeout.js';

type Fault = 'throws' | 'rejects' | 'NaN' | 'undefined' | 'string' | 'never' | 'bigint' | 'revoked' | 'long';
/**
 * What a callback does instead of answering: throws, returns a promise that rejects (an `async`
 * function that throws), `NaN`, `undefined`, a string, a promise that never settles, a bigint
 * (arithmetic with it throws; `JSON.stringify` throws), a revoked proxy (every read of it throws,
 * `Array.isArray` too) or a string of 100,000 characters (a message that quotes it whole is that long).
 */
const FAULTS: readonly Fault[] = [
  'throws',
  'rejects',
  'NaN',
  'undefined',
  'string',
  'never',
  'bigint',
  'revoked',
  'long',
];
type Call = 'A' | 'B';

/**
 * How a site's callback is used, which says how the call the fault belongs to must end:
 * - `checked`: its value is used and checked (a promise is no value): a throw rejects the call
 *   with what was thrown, anything else with a TypeError/RangeError naming the callback;
 * - `awaited`: may answer with a promise, which is awaited; its value is checked: a promise that
 *   never settles holds the call until its signal aborts;
 * - `hook`: may return a promise, which is awaited; its value is ignored;
 * - `void`: its return is ignored (a promise is not awaited); only a throw fails the call;
 * - `opaque`: its value is handed back to it later unread (a ticket); a promise is awaited;
 * - `listener`: isolated: no fault changes any call;
 * - `repaired`: a bad answer is repaired (the call goes on, unhedged or at a limit of 1): no fault
 *   changes what any call ends with;
 * - `operation`: the operation itself: a throw is a failed attempt, a value is its result;
 *   the call ends somehow (it is not stuck), the unrelated call as in the baseline;
 * - `attempt`: a guard's function inside a `retrying()`: its throw fails the attempt (a refusal),
 *   which the retry judges like any failure — the call succeeds on a later attempt, or fails with
 *   its own operation's failure or with the fault (as the error, or a `RetryError`'s cause);
 * - `result`: its value is the call's result, whatever it is (a fallback's): a throw rejects the
 *   call with it, a promise that never settles holds the call until its signal aborts;
 * - `syncHook`: a synchronous executor's hook: a throw fails the call with it, a promise (which
 *   it cannot wait for) with a TypeError naming the hook, any other value is ignored.
 */
type Use =
  | 'checked'
  | 'awaited'
  | 'hook'
  | 'void'
  | 'opaque'
  | 'listener'
  | 'repaired'
  | 'operation'
  | 'attempt'
  | 'result'
  | 'syncHook';

/** Where a callback's throw or rejection fails the attempt (a refusal an outer retry judges), not the call. */
const REFUSAL: Partial<Record<Fault, Use>> = { throws: 'attempt', rejects: 'attempt' };

interface Env {
  readonly clock: VirtualClock;
  /** Attempts that fail before each call succeeds (with the default policy of 3 attempts). */
  readonly failures: Readonly<Record<Call, number>>;
  readonly signal: Readonly<Record<Call, AbortSignal>>;
  /**
   * `good`, misbehaving at its `nth` call among those `when` accepts (when given): the fault is
   * injected there once, and `good` answers every other call.
   */
  inject<A extends unknown[], R>(good: (...args: A) => R, when?: (...args: A) => boolean): (...args: A) => R;
  /** Runs a site's set-up with no fault injected (the fault belongs to the calls). */
  quiet<T>(setUp: () => T): T;
  /** The call an error belongs to (the operations' errors carry it), if any. */
  callOf(value: unknown): Call | undefined;
}

interface Started {
  readonly a: Promise<unknown>;
  readonly b: Promise<unknown>;
  /** The mechanism's values that must be back at rest (0) once both calls have ended. */
  resting(): Record<string, number>;
}

interface Site {
  readonly mechanism: string;
  readonly callback: string;
  readonly use: Use;
  /** What a TypeError/RangeError for a bad value must name. */
  readonly names?: RegExp;
  /**
   * The callback is the mechanism's, shared by both calls (a clock, a budget's count): the fault
   * belongs to whichever call met it, so each call ends as in the baseline or fails with the fault.
   */
  readonly shared?: boolean;
  /**
   * The mechanism keeps state both calls go through (a breaker's counts, a limit's queue, a
   * rate): a call the fault failed changes what the other meets, legitimately. The other call
   * must then only end, and not with the fault's failure; without it, exactly as in the baseline.
   */
  readonly stateful?: boolean;
  /**
   * Attempts race (hedging): a verdict that never comes may be outrun by another attempt that
   * succeeds, so the call may then also end with a value.
   */
  readonly raced?: boolean;
  /** The use for some faults, where it differs (a check function's throw is a failed attempt). */
  readonly useFor?: Partial<Record<Fault, Use>>;
  start(env: Env): Started;
}

/** An operation's failure: tagged with its call, and an HTTP 503 (a drop for a limit, a failure for a breaker). */
const failure = (call: Call, n: number) =>
  Object.assign(new Error(`${call}: attempt ${n} failed`), { call, status: 503 });

/** An operation for `call`: `failures` failed attempts, then its call's name, each attempt 5 ms of virtual time. */
function operation(env: Env, call: Call) {
  let n = 0;
  return ({ signal }: AttemptContext) =>
    env.clock.sleep(5, signal).then(() => {
      n++;
      if (n <= env.failures[call]) throw failure(call, n);
      return call;
    });
}

const policy = constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter });

/** Starts A and B through `retry()` with the shared options, each with its own signal and extras. */
function both(
  env: Env,
  shared: RetryOptions,
  extra: Partial<Record<Call, RetryOptions>> = {},
  op: (call: Call) => (c: AttemptContext) => unknown = (call) => operation(env, call),
): Pick<Started, 'a' | 'b'> {
  const one = (call: Call) =>
    retry(op(call), {
      backoff: policy,
      clock: env.clock,
      signal: env.signal[call],
      ...shared,
      ...extra[call],
    });
  return { a: one('A'), b: one('B') };
}

/**
 * Starts A and B through a pipeline, each with its own signal: `mechanisms(call)` builds the
 * call's mechanisms (shared ones are the same objects for both calls).
 */
function piped(
  env: Env,
  mechanisms: (call: Call) => readonly Mechanism[],
  op: (call: Call) => (c: AttemptContext) => unknown = (call) => operation(env, call),
): Pick<Started, 'a' | 'b'> {
  const one = (call: Call) => pipeline(mechanisms(call)).execute(op(call), { signal: env.signal[call] });
  return { a: one('A'), b: one('B') };
}

/** `retrying()` with the default policy and the virtual clock, and `extra`. */
const retryingIn = (env: Env, extra: RetryOptions = {}) => retrying({ backoff: policy, clock: env.clock, ...extra });

/** Starts A and B through `pipeline([retrying(), mechanism])`, the mechanism (a breaker, a limit, a rate controller) shared by both. */
function guarded(env: Env, mechanism: Mechanism): Pick<Started, 'a' | 'b'> {
  return piped(env, () => [retryingIn(env), mechanism]);
}

/** A clock whose now() and sleep() are user functions to inject faults into. */
function faultyClock(env: Env, which: 'now' | 'sleep'): Clock {
  const c = env.clock;
  return {
    now: which === 'now' ? env.inject(() => c.now()) : () => c.now(),
    sleep: which === 'sleep' ? env.inject((ms: number, s?: AbortSignal) => c.sleep(ms, s)) : c.sleep,
  };
}

const isA = (env: Env) => (error: unknown) => env.callOf(error) === 'A';

// ---------------------------------------------------------------------------------------------
// The sites: every mechanism × every user function it calls.
// ---------------------------------------------------------------------------------------------

const executor: Site[] = [
  {
    mechanism: 'retry',
    callback: 'operation',
    use: 'operation',
    start: (env) => ({
      ...both(env, {}, {}, (call) => (call === 'A' ? env.inject(operation(env, 'A')) : operation(env, 'B'))),
      resting: () => ({}),
    }),
  },
  {
    mechanism: 'retry',
    callback: 'isFailure',
    use: 'awaited',
    names: /isFailure/,
    start: (env) => ({
      ...both(env, {}, { A: { isFailure: env.inject((o: Result) => !o.ok) } }),
      resting: () => ({}),
    }),
  },
  {
    mechanism: 'retry',
    callback: 'backoff.start',
    use: 'checked',
    names: /backoff\.start\(\)/,
    start: (env) => {
      const start = env.inject(() => policy.start());
      return { ...both(env, {}, { A: { backoff: { maxElapsedMs: Infinity, start } as never } }), resting: () => ({}) };
    },
  },
  ...(['onRetry', 'onFailedAttempt', 'onGiveUp', 'onSuccess'] as const).map(
    (callback): Site => ({
      mechanism: 'retry',
      callback,
      use: 'hook',
      start: (env) => ({ ...both(env, {}, { A: { [callback]: env.inject(() => undefined) } }), resting: () => ({}) }),
    }),
  ),
  {
    mechanism: 'retry',
    callback: 'backoff.next',
    use: 'checked',
    names: /backoff\.next\(\)/,
    start: (env) => {
      const next = env.inject(() => 10);
      const backoff = { maxElapsedMs: Infinity, start: () => ({ next: (..._: unknown[]) => (n++ < 2 ? next() : -1) }) };
      let n = 0;
      return { ...both(env, {}, { A: { backoff } }), resting: () => ({}) };
    },
  },
  {
    mechanism: 'retry',
    callback: 'random',
    use: 'checked',
    names: /random\(\)/,
    start: (env) => ({
      ...both(
        env,
        {},
        {
          A: {
            backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: fullJitter }),
            random: env.inject(() => 0.5),
          },
        },
      ),
      resting: () => ({}),
    }),
  },
  ...(['now', 'sleep'] as const).map(
    (which): Site => ({
      mechanism: 'retry',
      callback: `clock.${which}`,
      use: which === 'now' ? 'checked' : 'awaited',
      names: which === 'now' ? /clock\.now\(\)/ : /clock\.sleep\(\)/,
      start: (env) => ({
        ...both(env, {}, { A: { clock: faultyClock(env, which) } }),
        resting: () => ({}),
      }),
    }),
  ),
  ...(['recordRequest', 'recordFailure', 'tryAcquireRetry', 'recordSuccess'] as const).map(
    (method): Site => ({
      mechanism: 'retry',
      callback: `budget.${method}`,
      use: method === 'tryAcquireRetry' ? 'checked' : 'void',
      names: /budget\.tryAcquireRetry/,
      start: (env) => {
        const good = { recordRequest() {}, recordFailure() {}, tryAcquireRetry: () => true, recordSuccess() {} };
        const budget = { ...good, [method]: env.inject(good[method] as (...a: unknown[]) => unknown) };
        // A budget of A's own: its faults can belong to no other call.
        return { ...both(env, {}, { A: { budget: budget as never } }), resting: () => ({}) };
      },
    }),
  ),
  {
    mechanism: 'poll',
    callback: 'check',
    use: 'awaited',
    useFor: { throws: 'operation', rejects: 'operation' },
    names: /poll\(\): the check must return/,
    start: (env) => {
      const check = (call: Call) => {
        let n = 0;
        const good = () => (++n > env.failures[call] ? { done: true as const, value: call } : { done: false as const });
        return call === 'A' ? env.inject(good) : good;
      };
      const one = (call: Call) =>
        poll(check(call), { backoff: policy, clock: env.clock, signal: env.signal[call] }) as Promise<unknown>;
      return { a: one('A'), b: one('B'), resting: () => ({}) };
    },
  },
];

/** A pipeline's own mechanisms and a guard of the user's (`{ acquire, record, release }`, wrapped by `guard()`) inside a retry. */
/** Starts A and B through `retrySync()` (each in a turn of its own), on a clock that blocks for no time. */
function blocking(env: Env, extra: Partial<Record<Call, RetrySyncOptions<unknown>>>): Pick<Started, 'a' | 'b'> {
  const one = (call: Call) =>
    Promise.resolve().then(() => {
      let now = 0;
      let n = 0;
      const op = () => {
        n++;
        if (n <= env.failures[call]) throw failure(call, n);
        return call;
      };
      return retrySync(op, {
        backoff: policy,
        clock: {
          now: () => now,
          sleepSync: (ms: number) => {
            now += ms;
          },
        },
        ...extra[call],
      });
    });
  return { a: one('A'), b: one('B') };
}

const syncSites: Site[] = [
  {
    mechanism: 'retrySync',
    callback: 'isFailure',
    use: 'checked',
    names: /isFailure/,
    start: (env) => ({ ...blocking(env, { A: { isFailure: env.inject((o: Result) => !o.ok) } }), resting: () => ({}) }),
  },
  ...(['onRetry', 'onFailedAttempt', 'onGiveUp', 'onSuccess'] as const).map(
    (callback): Site => ({
      mechanism: 'retrySync',
      callback,
      use: 'syncHook',
      names: new RegExp(`retrySync\\(\\): \`${callback}\``),
      start: (env) => ({ ...blocking(env, { A: { [callback]: env.inject(() => undefined) } }), resting: () => ({}) }),
    }),
  ),
];

const pipelineSites: Site[] = [
  ...(['acquire', 'record'] as const).map(
    (method): Site => ({
      mechanism: 'pipeline guard',
      callback: method,
      use: method === 'acquire' ? 'opaque' : 'void',
      // An acquire's rejected ticket is a refusal, as its throw is; record's and release's answers are not read.
      useFor: method === 'acquire' ? REFUSAL : { throws: 'attempt' },
      start: (env) => {
        // Tickets handed out and not yet handed back (to record or release, whatever they do then),
        // by A's guard and B's: one count, each call its own guard.
        let held = 0;
        const guardOf = (call: Call): RateController => {
          const good = {
            acquire: (_s?: AbortSignal): unknown => call,
            record: (..._: unknown[]): unknown => undefined,
          };
          const acquire = call === 'A' && method === 'acquire' ? env.inject(good.acquire) : good.acquire;
          const record = call === 'A' && method === 'record' ? env.inject(good.record) : good.record;
          return {
            acquire: (signal?: AbortSignal) => {
              const ticket = acquire(signal);
              // `isPromise`, not `instanceof`: a revoked proxy throws on the latter.
              if (isPromise(ticket)) {
                // A ticket is held once it is delivered (this one, never: the fault).
                return ticket.then((t) => {
                  held++;
                  return t;
                });
              }
              held++;
              return ticket;
            },
            record: (o, t, d) => {
              held--;
              // Its answer handed on: a promise it returns is the guard's to handle.
              return record(o, t, d);
            },
            release: () => {
              held--;
            },
          };
        };
        const guards = { A: guardOf('A'), B: guardOf('B') };
        return {
          ...piped(env, (call) => [retryingIn(env), guard(guards[call])]),
          resting: () => ({ ticketsHeld: held }),
        };
      },
    }),
  ),
  {
    mechanism: 'retrying',
    callback: 'isFailure',
    use: 'awaited',
    names: /isFailure/,
    start: (env) => ({
      ...piped(env, (call) => [retryingIn(env, call === 'A' ? { isFailure: env.inject((o: Result) => !o.ok) } : {})]),
      resting: () => ({}),
    }),
  },
  {
    mechanism: 'retrying',
    callback: 'onFailedAttempt',
    use: 'hook',
    start: (env) => ({
      ...piped(env, (call) => [retryingIn(env, call === 'A' ? { onFailedAttempt: env.inject(() => undefined) } : {})]),
      resting: () => ({}),
    }),
  },
  {
    mechanism: 'retrying',
    callback: 'backoff.next',
    use: 'checked',
    names: /backoff\.next\(\)/,
    start: (env) => {
      const next = env.inject(() => 10);
      let n = 0;
      const backoff = { maxElapsedMs: Infinity, start: () => ({ next: () => (n++ < 2 ? next() : -1) }) };
      return { ...piped(env, (call) => [retryingIn(env, call === 'A' ? { backoff } : {})]), resting: () => ({}) };
    },
  },
  {
    mechanism: 'retrying',
    callback: 'clock.sleep',
    use: 'awaited',
    names: /clock\.sleep\(\)/,
    start: (env) => ({
      ...piped(env, (call) => [retryingIn(env, call === 'A' ? { clock: faultyClock(env, 'sleep') } : {})]),
      resting: () => ({}),
    }),
  },
  {
    mechanism: 'retrying',
    callback: 'budget.tryAcquireRetry',
    use: 'checked',
    names: /budget\.tryAcquireRetry/,
    start: (env) => {
      const budget = { tryAcquireRetry: env.inject(() => true), recordSuccess() {} };
      return { ...piped(env, (call) => [retryingIn(env, call === 'A' ? { budget } : {})]), resting: () => ({}) };
    },
  },
  {
    // Around the retry, 5 s: longer than any call of the baseline. A sleep that never ends leaves
    // the call as in the baseline (no time limit, then); one that throws or answers no promise
    // fails the call at its start.
    mechanism: 'timeout',
    callback: 'clock.sleep',
    use: 'checked',
    useFor: { never: 'repaired' },
    names: /clock\.sleep\(\)/,
    start: (env) => ({
      ...piped(env, (call) => [
        timeout(5_000, { clock: call === 'A' ? faultyClock(env, 'sleep') : env.clock }),
        retryingIn(env),
      ]),
      resting: () => ({}),
    }),
  },
  {
    // Asked when the retry gives up (a call whose operation fails 4 times): its answer is the result.
    mechanism: 'fallback',
    callback: 'function',
    use: 'result',
    start: (env) => ({
      ...piped(env, (call) => [
        fallback(call === 'A' ? env.inject((_o: Result) => 'spare A') : () => 'spare B'),
        retryingIn(env),
      ]),
      resting: () => ({}),
    }),
  },
  {
    mechanism: 'fallback',
    callback: 'isFailure',
    use: 'awaited',
    names: /isFailure/,
    start: (env) => ({
      ...piped(env, (call) => [
        fallback(`spare ${call}`, call === 'A' ? { isFailure: env.inject((o: Result) => !o.ok) } : {}),
        retryingIn(env),
      ]),
      resting: () => ({}),
    }),
  },
];

/** withRetry over a scripted fetch: `failures` 503s, then 200 with the call's name. */
function http(
  env: Env,
  fault: 'fetchImpl' | 'isFailure' | 'serverHintMs' | 'isFailure.serverHintMs' | 'onRetry',
): Pick<Started, 'a' | 'b'> {
  const sent: Record<Call, number> = { A: 0, B: 0 };
  const fetchGood = async (input: RequestInfo | URL, _init?: RequestInit): Promise<Response> => {
    const call: Call = String(input).endsWith('/A') ? 'A' : 'B';
    await env.clock.sleep(5);
    const headers = { 'x-call': call };
    return ++sent[call] <= env.failures[call]
      ? new Response('busy', { status: 503, headers })
      : new Response(call, { status: 200, headers });
  };
  const fetchImpl =
    fault === 'fetchImpl'
      ? env.inject(fetchGood, (input: RequestInfo | URL) => String(input).endsWith('/A'))
      : fetchGood;
  // A hint reader that answers no hint, but for the call the fault is injected into.
  const noHint = () =>
    env.inject(
      (_r: Response): number | undefined => undefined,
      (r: Response) => r.headers.get('x-call') === 'A',
    );
  let isFailure: HttpPredicate = standard;
  if (fault === 'isFailure') {
    isFailure = env.inject(standard, (_o, c) => (c as unknown as { url: string }).url.endsWith('/A')) as HttpPredicate;
  }
  if (fault === 'isFailure.serverHintMs') {
    isFailure = Object.assign((o: Parameters<HttpPredicate>[0]) => standard(o), { serverHintMs: noHint() });
  }
  const f = withRetry(fetchImpl as typeof fetch, {
    backoff: policy,
    clock: env.clock,
    isFailure,
    ...(fault === 'serverHintMs' ? { serverHintMs: noHint() } : {}),
    ...(fault === 'onRetry'
      ? {
          onRetry: env.inject(
            (_c: { url: string }) => undefined,
            (c) => c.url.endsWith('/A'),
          ),
        }
      : {}),
  });
  const one = (call: Call) =>
    f(`http://127.0.0.1/${call}`, { signal: env.signal[call] }).then(
      async (res) => `${res.status} ${await res.text()}`,
    );
  return { a: one('A'), b: one('B') };
}

const httpSites: Site[] = (
  [
    ['fetchImpl', 'awaited', /fetchImpl/],
    ['isFailure', 'awaited', /isFailure/],
    ['serverHintMs', 'void', undefined],
    ['isFailure.serverHintMs', 'void', undefined],
    ['onRetry', 'hook', undefined],
  ] as const
).map(
  ([callback, use, names]): Site => ({
    mechanism: 'withRetry',
    callback,
    use,
    ...(names ? { names } : {}),
    start: (env) => ({
      ...http(env, callback),
      resting: () => ({}),
    }),
  }),
);

function breakerSite(
  callback: string,
  use: Use,
  build: (env: Env) => Parameters<typeof circuitBreaker>[0],
  names?: RegExp,
  shared?: boolean,
): Site {
  return {
    mechanism: 'circuitBreaker',
    callback,
    use,
    stateful: true,
    ...(names ? { names } : {}),
    ...(shared ? { shared } : {}),
    start: (env) => {
      const breaker = circuitBreaker({
        consecutiveFailures: 2,
        openBackoff: constant({ delayMs: 20, jitter: noJitter, maxAttempts: Infinity }),
        clock: env.clock,
        ...build(env),
      });
      return { ...guarded(env, breaker), resting: () => ({ probesInFlight: breaker.metrics.probesInFlight }) };
    },
  };
}

const breakerSites: Site[] = [
  {
    ...breakerSite(
      'isFailure',
      'awaited',
      (env) => ({
        isFailure: env.inject(
          (o: Result) => !o.ok,
          (o: Result) => !o.ok && isA(env)(o.error),
        ),
      }),
      /isFailure/,
    ),
    useFor: REFUSAL,
  },
  breakerSite('onStateChange', 'listener', (env) => ({ onStateChange: env.inject(() => undefined) })),
  breakerSite('onListenerError', 'listener', (env) => ({
    onStateChange: () => {
      throw new Error('listener bug');
    },
    onListenerError: env.inject(() => undefined),
  })),
  {
    mechanism: 'circuitBreaker',
    callback: 'subscribe listener',
    use: 'listener',
    stateful: true,
    start: (env) => {
      const breaker = circuitBreaker({
        consecutiveFailures: 2,
        openBackoff: constant({ delayMs: 20, jitter: noJitter, maxAttempts: Infinity }),
        clock: env.clock,
      });
      breaker.subscribe(env.inject(() => undefined));
      return { ...guarded(env, breaker), resting: () => ({ probesInFlight: breaker.metrics.probesInFlight }) };
    },
  },
  breakerSite(
    'openBackoff.next',
    'checked',
    (env) => {
      const next = env.inject(() => 20);
      return { openBackoff: { maxElapsedMs: Infinity, start: () => ({ next: () => next() }) } as never };
    },
    /openBackoff's next\(\)/,
    true,
  ),
  breakerSite('clock.now', 'checked', (env) => ({ clock: faultyClock(env, 'now') }), /clock\.now\(\)/, true),
];

function limitSite(
  callback: string,
  use: Use,
  build: (env: Env) => Parameters<typeof concurrencyLimit>[0],
  names?: RegExp,
  shared?: boolean,
): Site {
  return {
    mechanism: 'concurrencyLimit',
    callback,
    use,
    stateful: true,
    ...(names ? { names } : {}),
    ...(shared ? { shared } : {}),
    start: (env) => {
      const limiter = concurrencyLimit({
        algorithm: aimd({ initialLimit: 1, minLimit: 1, maxLimit: 1 }),
        maxQueue: 4,
        maxWaitMs: 10_000,
        clock: env.clock,
        ...build(env),
      });
      return {
        ...guarded(env, limiter),
        resting: () => ({ inflight: limiter.inflight, queued: limiter.queued }),
      };
    },
  };
}

/** An algorithm with a limit of 1 whose `update` and `limit` are user functions. */
function algorithm(env: Env, which: 'update' | 'limit'): LimitAlgorithm {
  const limit = which === 'limit' ? env.inject(() => 1) : () => 1;
  const update = which === 'update' ? env.inject((_s: unknown) => undefined) : () => undefined;
  return {
    get limit() {
      return limit() as number;
    },
    update,
  };
}

const limitSites: Site[] = [
  {
    ...limitSite(
      'isFailure',
      'awaited',
      (env) => ({
        isFailure: env.inject(
          (o: Result) => !o.ok,
          (o: Result) => !o.ok && isA(env)(o.error),
        ),
      }),
      /isFailure/,
    ),
    useFor: REFUSAL,
  },
  limitSite('algorithm.update', 'void', (env) => ({ algorithm: algorithm(env, 'update') }), undefined, true),
  limitSite('algorithm.limit', 'repaired', (env) => ({ algorithm: algorithm(env, 'limit') })),
  limitSite('clock.now', 'checked', (env) => ({ clock: faultyClock(env, 'now') }), /clock\.now\(\)/, true),
  limitSite('clock.sleep', 'awaited', (env) => ({ clock: faultyClock(env, 'sleep') }), /clock\.sleep\(\)/, true),
];

/** Hedging inside each attempt: a hedge after 3 ms, so every attempt (5 ms) is hedged once. */
function hedgeSite(
  callback: string,
  use: Use,
  build: (env: Env) => Parameters<typeof hedging>[0],
  names?: RegExp,
  shared?: boolean,
): Site {
  return {
    mechanism: 'hedging',
    callback,
    use,
    ...(names ? { names } : {}),
    ...(shared ? { shared } : {}),
    start: (env) => {
      const hedger = env.quiet(() => hedging({ delayMs: 3, clock: env.clock, ...build(env) }));
      // Each retry attempt fails or succeeds whichever hedged copy answers: the outcome is the
      // same hedged or not (a clock that cannot time hedges leaves the calls unhedged).
      const op = (call: Call) => (outer: AttemptContext) =>
        hedger.run(
          (h) =>
            env.clock.sleep(5, h.signal).then(() => {
              if (outer.attempt <= env.failures[call]) throw failure(call, outer.attempt);
              return call;
            }),
          { signal: outer.signal },
        );
      return { ...both(env, {}, {}, op), resting: () => ({}) };
    },
  };
}

const always = { recordRequest() {}, tryAcquireRetry: () => true, recordSuccess() {} };
const hedgeSites: Site[] = [
  hedgeSite(
    'budget.tryAcquireRetry',
    'checked',
    (env) => ({ budget: { ...always, tryAcquireRetry: env.inject(() => true) } }),
    /budget\.tryAcquireRetry/,
    true,
  ),
  hedgeSite(
    'budget.recordRequest',
    'void',
    (env) => ({ budget: { ...always, recordRequest: env.inject(() => undefined) } }),
    undefined,
    true,
  ),
  hedgeSite('clock.now', 'repaired', (env) => ({ budget: always, clock: faultyClock(env, 'now') })),
  hedgeSite('clock.sleep', 'repaired', (env) => ({ budget: always, clock: faultyClock(env, 'sleep') })),
  hedgeSite(
    'hedgeBudget clock.now',
    'checked',
    (env) => ({ budget: env.quiet(() => hedgeBudget({ clock: faultyClock(env, 'now'), minPerSecond: 100 })) }),
    /clock\.now\(\)/,
    true,
  ),
];

/** A bulkhead of 1 with a queue, inside the retry of both calls: its clock is the user's. */
function bulkheadSite(which: 'now' | 'sleep'): Site {
  return {
    mechanism: 'bulkhead',
    callback: `clock.${which}`,
    use: which === 'now' ? 'checked' : 'awaited',
    names: which === 'now' ? /clock\.now\(\)/ : /clock\.sleep\(\)/,
    shared: true,
    stateful: true,
    start: (env) => {
      const b = bulkhead({ maxConcurrent: 1, maxQueue: 4, maxWaitMs: 10_000, clock: faultyClock(env, which) });
      return { ...guarded(env, b), resting: () => ({ inflight: b.inflight, queued: b.queued }) };
    },
  };
}

/** Judges only call A's failures (the fault belongs to A): `!o.ok` otherwise. */
const judgeOfA = (env: Env) =>
  env.inject(
    (o: Result) => !o.ok,
    (o: Result) => !o.ok && isA(env)(o.error),
  );

const mechanismSites: Site[] = [
  bulkheadSite('now'),
  bulkheadSite('sleep'),
  {
    // Hedging as a pipeline mechanism inside the retry: a hedge after 3 ms of each 5 ms attempt.
    mechanism: 'hedging in a pipeline',
    callback: 'isFailure',
    raced: true,
    use: 'awaited',
    useFor: REFUSAL,
    names: /isFailure/,
    start: (env) => {
      const hedger = env.quiet(() =>
        hedging({ delayMs: 3, budget: always, clock: env.clock, isFailure: judgeOfA(env) }),
      );
      return { ...piped(env, () => [retryingIn(env), hedger]), resting: () => ({}) };
    },
  },
  {
    mechanism: 'adaptiveRate in a pipeline',
    callback: 'isFailure',
    use: 'awaited',
    useFor: REFUSAL,
    names: /isFailure/,
    stateful: true,
    start: (env) => {
      const r = env.quiet(() =>
        adaptiveRate({ initialRatePerSecond: 100, clock: env.clock, isFailure: judgeOfA(env) }),
      );
      return { ...guarded(env, r), resting: () => ({ waiting: r.waiting }) };
    },
  },
];

/** A shared rate controller, a guard inside the retry of both calls. */
function rateSite(
  mechanism: string,
  callback: string,
  use: Use,
  make: (env: Env) => { rate: Mechanism; resting?: () => Record<string, number> },
  names?: RegExp,
): Site {
  return {
    mechanism,
    callback,
    use,
    shared: true,
    stateful: true,
    ...(names ? { names } : {}),
    start: (env) => {
      const { rate, resting } = env.quiet(() => make(env));
      return { ...guarded(env, rate), resting: resting ?? (() => ({})) };
    },
  };
}

const rateSites: Site[] = [
  ...(['now', 'sleep'] as const).flatMap((which) => [
    rateSite(
      'adaptiveRate',
      `clock.${which}`,
      which === 'now' ? 'checked' : 'awaited',
      (env) => {
        // 100 a second: the second call waits 10 ms in the gate, on the clock's sleep.
        const r = adaptiveRate({ initialRatePerSecond: 100, clock: faultyClock(env, which) });
        return { rate: r, resting: () => ({ waiting: r.waiting }) };
      },
      which === 'now' ? /clock\.now\(\)/ : /clock\.sleep\(\)/,
    ),
    rateSite(
      'awsAdaptiveRate',
      `clock.${which}`,
      which === 'now' ? 'checked' : 'awaited',
      (env) => {
        const r = awsAdaptiveRate({ clock: faultyClock(env, which) });
        // Throttled once, so that its bucket paces (and the gate sleeps).
        r.record('throttled');
        return { rate: r };
      },
      which === 'now' ? /clock\.now\(\)/ : /clock\.sleep\(\)/,
    ),
  ]),
  rateSite(
    'adaptiveThrottle',
    'clock.now',
    'checked',
    (env) => ({ rate: adaptiveThrottle({ clock: faultyClock(env, 'now') }) }),
    /clock\.now\(\)/,
  ),
  rateSite(
    'adaptiveThrottle',
    'random',
    'checked',
    (env) => {
      const clock = env.clock;
      const t = adaptiveThrottle({ clock, k: 1, random: env.inject(() => 0.99) });
      // Refusals on record: the throttle draws for every request.
      for (let i = 0; i < 20; i++) t.record('throttled');
      for (let i = 0; i < 20; i++) {
        try {
          t.acquire();
        } catch {}
      }
      return { rate: t };
    },
    /random/,
  ),
];

/** A shared budget passed to both calls. */
function budgetSite(
  mechanism: string,
  callback: string,
  use: Use,
  make: (env: Env) => RetryOptions['budget'],
  names?: RegExp,
  shared = true,
): Site {
  return {
    mechanism,
    callback,
    use,
    shared,
    stateful: shared,
    ...(names ? { names } : {}),
    start: (env) => ({ ...both(env, { budget: env.quiet(() => make(env)) }), resting: () => ({}) }),
  };
}

const budgetSites: Site[] = [
  budgetSite(
    'ratioBudget',
    'clock.now',
    'checked',
    (env) => ratioBudget({ clock: faultyClock(env, 'now') }),
    /clock\.now\(\)/,
  ),
  budgetSite(
    'awsRetryQuota',
    'classify',
    'checked',
    (env) => awsRetryQuota({ classify: env.inject((_e: unknown) => 'transient' as const, isA(env)) }),
    /classify/,
    false,
  ),
];

const SITES: readonly Site[] = [
  ...executor,
  ...syncSites,
  ...pipelineSites,
  ...httpSites,
  ...breakerSites,
  ...limitSites,
  ...hedgeSites,
  ...mechanismSites,
  ...rateSites,
  ...budgetSites,
];

// ---------------------------------------------------------------------------------------------
// The harness.
// ---------------------------------------------------------------------------------------------

type Outcome =
  | { status: 'fulfilled'; value: unknown }
  | { status: 'rejected'; reason: unknown }
  | { status: 'pending' };

function settle(p: Promise<unknown>): { outcome: Outcome } {
  const box: { outcome: Outcome } = { outcome: { status: 'pending' } };
  p.then(
    (value) => {
      box.outcome = { status: 'fulfilled', value };
    },
    (reason: unknown) => {
      box.outcome = { status: 'rejected', reason };
    },
  );
  return box;
}

/** An outcome as text, comparable across runs (errors by class, name, message and give-up reason). */
function show(o: Outcome): string {
  if (o.status === 'pending') return 'pending';
  if (o.status === 'fulfilled') return `fulfilled ${String(o.value)}`;
  const r = o.reason;
  if (r instanceof Error) {
    const cause = r.cause instanceof Error ? ` (cause ${r.cause.message})` : '';
    const { reason, attempts } = r as { reason?: unknown; attempts?: unknown };
    // A RetryError's message carries the elapsed time, which a repaired (unhedged) call may change.
    if (r.name === 'RetryError') return `rejected RetryError [${String(reason)}] after ${String(attempts)}${cause}`;
    return `rejected ${r.name}: ${r.message}${cause}`;
  }
  return `rejected ${String(o.reason)}`;
}

const ABORT = 'aborted by the test';

interface Report {
  readonly a: Outcome;
  readonly b: Outcome;
  readonly resting: Record<string, number>;
  readonly faulted: boolean;
  readonly thrownSeen: unknown;
}

async function runCase(
  site: Site,
  fault: Fault | undefined,
  thrown: unknown,
  nth: number,
  failures: Record<Call, number>,
): Promise<Report> {
  const clock = virtualClock();
  const controllers = { A: new AbortController(), B: new AbortController() };
  let hits = 0;
  let faulted = false;
  let quiet = false;
  const env: Env = {
    clock,
    failures,
    signal: { A: controllers.A.signal, B: controllers.B.signal },
    inject(good, when) {
      return (...args) => {
        if (fault !== undefined && !quiet && !faulted && (when === undefined || when(...args)) && ++hits === nth) {
          faulted = true;
          switch (fault) {
            case 'throws':
              throw thrown;
            case 'rejects':
              return Promise.reject(thrown) as never;
            case 'NaN':
              return Number.NaN as never;
            case 'undefined':
              return undefined as never;
            case 'string':
              return 'oops' as never;
            case 'never':
              return new Promise(() => {}) as never;
            case 'bigint':
              return 10n as never;
            case 'revoked': {
              const { proxy, revoke } = Proxy.revocable({}, {});
              revoke();
              return proxy as never;
            }
            case 'long':
              return '9'.repeat(100_000) as never;
          }
        }
        return good(...args);
      };
    },
    quiet(setUp) {
      quiet = true;
      try {
        return setUp();
      } finally {
        quiet = false;
      }
    },
    callOf: (value) => {
      const call = (value as { call?: unknown } | null | undefined)?.call;
      return call === 'A' || call === 'B' ? call : undefined;
    },
  };
  const started = site.start(env);
  const a = settle(started.a);
  const b = settle(started.b);
  // Each call ends within a second of virtual time when every user function behaves.
  for (let i = 0; i < 40 && (a.outcome.status === 'pending' || b.outcome.status === 'pending'); i++) {
    await clock.advance(50);
  }
  controllers.A.abort(ABORT);
  controllers.B.abort(ABORT);
  await clock.advance(50);
  await clock.advance(10_000);
  const listeners =
    getEventListeners(controllers.A.signal, 'abort').length + getEventListeners(controllers.B.signal, 'abort').length;
  return {
    a: a.outcome,
    b: b.outcome,
    // Read with no fault injected: the fault belongs to the calls, not to this look at the state.
    resting: { ...env.quiet(() => started.resting()), timers: clock.pending, abortListeners: listeners },
    faulted,
    thrownSeen: thrown,
  };
}

/** The site's use of its callback for `fault`. */
const useOf = (site: Site, fault: Fault): Use => site.useFor?.[fault] ?? site.use;

/** Whether `o` is the failure `fault` makes where the callback is used as `use`. */
function isFaultFailure(o: Outcome, fault: Fault, use: Use, thrown: unknown, names: RegExp | undefined): boolean {
  if (o.status !== 'rejected') return false;
  const isThrown = o.reason === thrown || (o.reason as { cause?: unknown } | undefined)?.cause === thrown;
  if (fault === 'throws') return isThrown;
  // A rejection is the callback's throw where its promise is awaited; where a value is checked, a
  // promise is no value (named), unless the site awaits it first.
  if (fault === 'rejects' && use !== 'checked') return isThrown;
  if (fault === 'rejects' && isThrown) return true;
  if (use === 'void' || use === 'listener' || use === 'repaired' || use === 'operation' || use === 'attempt') {
    return false;
  }
  if (fault === 'never' && use !== 'checked') return o.reason === ABORT;
  if (use === 'hook' || use === 'opaque' || use === 'result') return false;
  const r = o.reason;
  // Named, and short enough to read: a value is quoted in part, never whole.
  return (
    (r instanceof TypeError || r instanceof RangeError) &&
    (names === undefined || names.test(r.message)) &&
    r.message.length < 1_000
  );
}

/** Whether `o` is a failure of `call`'s own operation: its error, or a RetryError's cause. */
function isOwnFailure(o: Outcome, call: Call): boolean {
  if (o.status !== 'rejected') return false;
  const r = o.reason as { call?: unknown; cause?: { call?: unknown } } | null | undefined;
  return r?.call === call || r?.cause?.call === call;
}

/** What the call the fault belongs to may end with. */
function ownAllowed(site: Site, fault: Fault, thrown: unknown, got: Outcome, base: Outcome): boolean {
  const use = useOf(site, fault);
  const same = show(got) === show(base);
  if (site.raced && fault === 'never' && got.status === 'fulfilled') return true;
  switch (use) {
    case 'listener':
    case 'repaired':
      return same;
    case 'operation':
      return got.status !== 'pending';
    case 'attempt':
      // The retry took another path: fewer calls of the operation, so another of its failures
      // last — or, where the mechanism keeps state, a refusal of its own (an open circuit).
      return (
        got.status === 'fulfilled' ||
        isOwnFailure(got, 'A') ||
        isFaultFailure(got, 'throws', use, thrown, site.names) ||
        (site.stateful === true && !marked(got, thrown, site.names))
      );
    case 'result':
      // No promise can fulfil with a revoked proxy (resolving reads its `then`, which throws):
      // the call rejects with the engine's TypeError.
      if (fault === 'revoked') return got.status === 'rejected' && got.reason instanceof TypeError;
      return fault === 'throws' || fault === 'rejects' || fault === 'never'
        ? isFaultFailure(got, fault, use, thrown, site.names)
        : got.status === 'fulfilled';
    case 'void':
      // Its return is not awaited: a rejected promise changes nothing (and reaches no host).
      return fault === 'throws' ? isFaultFailure(got, fault, use, thrown, site.names) : same;
    case 'hook':
    case 'opaque':
      return fault === 'throws' || fault === 'rejects' || fault === 'never'
        ? isFaultFailure(got, fault, use, thrown, site.names)
        : same;
    case 'syncHook':
      if (fault === 'throws') return isFaultFailure(got, fault, use, thrown, site.names);
      return fault === 'rejects' || fault === 'never'
        ? got.status === 'rejected' && got.reason instanceof TypeError && site.names?.test(got.reason.message) === true
        : same;
    case 'checked':
    case 'awaited':
      return isFaultFailure(got, fault, use, thrown, site.names);
  }
}

/** Whether a call that did not meet the fault ended as only the fault could have made it end. */
function marked(o: Outcome, thrown: unknown, names: RegExp | undefined): boolean {
  if (o.status === 'pending') return true;
  if (o.status === 'fulfilled') return false;
  const r = o.reason;
  return (
    r === ABORT ||
    r === thrown ||
    ((r instanceof TypeError || r instanceof RangeError) && names !== undefined && names.test(r.message))
  );
}

const thrownValues = [new Error('user bug'), 'a thrown string', undefined, null, 42] as const;

let hostErrors: unknown[] = [];
const onUnhandled = (reason: unknown) => hostErrors.push(reason);
const onUncaught = (error: unknown) => hostErrors.push(error);
beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
  process.on('uncaughtException', onUncaught);
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
  process.off('uncaughtException', onUncaught);
});

describe('every mechanism × every user function × every fault: only its own call fails, nothing is held, nothing reaches the host', () => {
  it('lists every site once', () => {
    const ids = SITES.map((s) => `${s.mechanism} ${s.callback}`);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThanOrEqual(54);
  });

  it('holds over thousands of generated cases', async () => {
    const checked = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...SITES),
        fc.constantFrom(...FAULTS),
        fc.constantFrom(...thrownValues),
        fc.integer({ min: 1, max: 3 }),
        fc.record({ A: fc.constantFrom(0, 1, 2, 4), B: fc.constantFrom(0, 1, 2, 4) }),
        async (site, fault, thrown, nth, failures) => {
          hostErrors = [];
          const base = await runCase(site, undefined, thrown, nth, failures);
          const got = await runCase(site, fault, thrown, nth, failures);
          // A turn of the host's loop: a rejection nobody handled is reported after it.
          await new Promise((r) => setImmediate(r));
          const where = `${site.mechanism} ${site.callback}, ${fault} (thrown ${String(thrown)}) at call ${nth}, failures ${JSON.stringify(failures)}`;
          expect(hostErrors, `${where}: reached the host`).toEqual([]);
          // Resting values: every slot, ticket, probe, waiter, timer and listener released.
          for (const r of [base.resting, got.resting]) {
            for (const [name, value] of Object.entries(r)) expect(value, `${where}: ${name} at rest`).toBe(0);
          }
          expect(got.a.status, `${where}: A settled`).not.toBe('pending');
          expect(got.b.status, `${where}: B settled`).not.toBe('pending');
          expect(base.b.status, `${where}: B settles in the baseline`).not.toBe('pending');
          if (!got.faulted) {
            // The callback was never called n times here: nothing may differ.
            expect(show(got.a), where).toBe(show(base.a));
            expect(show(got.b), where).toBe(show(base.b));
            return;
          }
          checked.set(
            `${site.mechanism} ${site.callback}`,
            (checked.get(`${site.mechanism} ${site.callback}`) ?? 0) + 1,
          );
          const use = useOf(site, fault);
          if (site.shared) {
            // A shared function's fault belongs to whichever call met it: each call ends as in
            // the baseline, or with the fault; where the mechanism keeps state, a call that met
            // nothing may take another path, but never ends as only the fault could make it.
            for (const [call, o, b] of [
              ['A', got.a, base.a],
              ['B', got.b, base.b],
            ] as const) {
              const ok =
                show(o) === show(b) ||
                isFaultFailure(o, fault, use, thrown, site.names) ||
                (site.stateful === true && !marked(o, thrown, site.names));
              expect(ok, `${where}: ${call} ended ${show(o)}, baseline ${show(b)}`).toBe(true);
            }
            return;
          }
          expect(
            ownAllowed(site, fault, thrown, got.a, base.a),
            `${where}: A ended ${show(got.a)}, baseline ${show(base.a)}`,
          ).toBe(true);
          if (site.stateful) {
            expect(marked(got.b, thrown, site.names), `${where}: the unrelated call B ended ${show(got.b)}`).toBe(
              false,
            );
          } else {
            expect(show(got.b), `${where}: the unrelated call B`).toBe(show(base.b));
          }
        },
      ),
      {
        numRuns: 3_000,
        // Every site with every fault first, its callback faulted on its first call, in a run
        // where both calls fail until their last attempt and in one where they succeed at once:
        // the random cases after them then cannot leave a pair unchecked by chance.
        examples: SITES.flatMap((site) =>
          FAULTS.flatMap((fault) =>
            [4, 0].map((n): [Site, Fault, unknown, number, Record<Call, number>] => [
              site,
              fault,
              thrownValues[0],
              1,
              { A: n, B: n },
            ]),
          ),
        ),
      },
    );
    // Every site met a fault in some case.
    for (const s of SITES)
      expect(checked.get(`${s.mechanism} ${s.callback}`) ?? 0, `${s.mechanism} ${s.callback}`).toBeGreaterThan(0);
  }, 600_000);
});

describe('the shared timer queue: a wake-up that throws fails only its own entry', () => {
  it('over random due times and throwing entries, every other entry wakes once, in order, and nothing reaches the host', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ due: fc.integer({ min: 0, max: 200 }), throws: fc.boolean(), removed: fc.boolean() }), {
            minLength: 1,
            maxLength: 40,
          }),
          async (specs) => {
            const q = new TimerQueue(false);
            const t0 = q.now();
            const woke: number[] = [];
            const failed: number[] = [];
            const entries = specs.map(
              (s, i): Wakeup => ({
                dueAt: 0,
                order: 0,
                slot: -1,
                wake() {
                  woke.push(i);
                  if (s.throws) throw new Error(`entry ${i}`);
                },
                fail: () => failed.push(i),
              }),
            );
            for (const [i, e] of entries.entries()) q.add(e, t0 + (specs[i]?.due ?? 0));
            for (const [i, e] of entries.entries()) if (specs[i]?.removed) q.remove(e);
            // Fake timers rethrow what a timer callback throws: the call below rejects if anything escapes.
            await vi.advanceTimersByTimeAsync(250);
            const expected = specs
              .map((s, i) => ({ ...s, i }))
              .filter((s) => !s.removed)
              .sort((x, y) => x.due - y.due || x.i - y.i)
              .map((s) => s.i);
            expect(woke).toEqual(expected);
            expect(failed).toEqual(expected.filter((i) => specs[i]?.throws));
            expect(q.size).toBe(0);
            expect(vi.getTimerCount()).toBe(0);
          },
        ),
        { numRuns: 500 },
      );
    } finally {
      vi.useRealTimers();
    }
  });
});
