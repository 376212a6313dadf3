import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { virtualClock } from '../core/virtual-clock.js';
import { adaptiveRate } from '../rate/adaptive-rate.js';
import type { FailedAttemptContext } from '../retry/contexts.js';
import { RetryError } from '../retry/errors.js';
import { pipeline } from '../retry/pipeline.js';
import { retrying } from '../retry/retrying.js';
import { bulkhead } from './bulkhead.js';
import { circuitBreaker } from './circuit-breaker.js';
import { concurrencyLimit } from './concurrency-limit.js';

const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

/** One line per failed attempt: when it ended, what failed it (an ebb error's `code`, else its message), the wait chosen. */
const logOf = (clock: { now(): number }, log: string[]) => (c: FailedAttemptContext) => {
  const e = c.error as { code?: string; message?: string; retryAfterMs?: number } | undefined;
  const what = e?.code ?? e?.message ?? `value ${JSON.stringify(c.value)}`;
  const hint = e?.retryAfterMs === undefined ? '' : ` (retryAfterMs ${e.retryAfterMs})`;
  log.push(`${c.attempt}@${clock.now()} ${what}${hint} → ${c.next === 'retry' ? `wait ${c.delayMs}` : c.reason}`);
};

describe('a refusal that carries a wait is backed off by an outer retrying(), as a throttle is', () => {
  it("an open breaker's BrokenCircuitError: the retry waits its retryAfterMs (the rest of the open period), not its own 10 ms backoff, then the probe goes through", async () => {
    const clock = virtualClock();
    const breaker = circuitBreaker({
      clock,
      consecutiveFailures: 2,
      openBackoff: constant({ delayMs: 1_000, jitter: noJitter }),
    });
    const log: string[] = [];
    const calls: number[] = [];
    const api = pipeline([
      retrying({
        clock,
        backoff: constant({ delayMs: 10, maxAttempts: 6, jitter: noJitter }),
        onFailedAttempt: logOf(clock, log),
      }),
      breaker,
    ]);
    const result = api.execute(() => {
      calls.push(clock.now());
      return calls.length <= 2 ? Promise.reject(new Error('503 from the service')) : 'recovered';
    });
    await clock.runAll();
    expect(await result).toBe('recovered');
    expect(log).toEqual([
      '1@0 503 from the service → wait 10',
      '2@10 503 from the service → wait 10',
      // Opened at 10 ms for 1 s: refused at 20 ms with the 990 ms left, which the retry waits.
      '3@20 EBB_CIRCUIT_OPEN (retryAfterMs 990) → wait 990',
    ]);
    // The service saw two attempts, nothing while the circuit was open, then the probe at 1010 ms.
    expect(calls).toEqual([0, 10, 1_010]);
    expect(breaker.state).toBe('closed');
  });

  it('an isolated breaker refuses with retryAfterMs Infinity: the retry gives up at once (reason retry-after), the service is never called', async () => {
    const clock = virtualClock();
    const breaker = circuitBreaker({ clock });
    breaker.isolate();
    const log: string[] = [];
    let calls = 0;
    const result = settle(
      pipeline([
        retrying({
          clock,
          backoff: constant({ delayMs: 10, maxAttempts: 6, jitter: noJitter }),
          onFailedAttempt: logOf(clock, log),
        }),
        breaker,
      ]).execute(() => ++calls),
    );
    await clock.runAll();
    const r = await result;
    expect(r.ok).toBe(false);
    expect((r as { error: unknown }).error).toBeInstanceOf(RetryError);
    expect((r as { error: RetryError }).error).toMatchObject({ reason: 'retry-after', attempts: 1 });
    expect(((r as { error: RetryError }).error.cause as { code: string }).code).toBe('EBB_CIRCUIT_OPEN');
    expect(log).toEqual(['1@0 EBB_CIRCUIT_OPEN (retryAfterMs Infinity) → retry-after']);
    expect(calls).toBe(0);
  });

  it("a full concurrency limit's LimitExceededError: the retry waits its retryAfterMs (Little's law on the measured round trip) until the slot is free", async () => {
    const clock = virtualClock();
    const limit = concurrencyLimit({ clock, algorithm: { limit: 1, update() {} } });
    // One call of 100 ms teaches the limit its round trip.
    const learn = pipeline([limit]).execute(() => clock.sleep(100));
    await clock.advance(100);
    await learn;
    const holder = pipeline([limit]).execute(() => clock.sleep(250).then(() => 'holder'));
    const log: string[] = [];
    const calls: number[] = [];
    const retried = pipeline([
      retrying({
        clock,
        backoff: constant({ delayMs: 1, maxAttempts: 6, jitter: noJitter }),
        onFailedAttempt: logOf(clock, log),
      }),
      limit,
    ]).execute(() => {
      calls.push(clock.now());
      return 'retried';
    });
    await clock.runAll();
    expect([await holder, await retried]).toEqual(['holder', 'retried']);
    // One request ahead (the holder) at a measured 100 ms round trip: each refusal asks for 100 ms.
    expect(log).toEqual([
      '1@100 EBB_LIMIT_EXCEEDED (retryAfterMs 100) → wait 100',
      '2@200 EBB_LIMIT_EXCEEDED (retryAfterMs 100) → wait 100',
      '3@300 EBB_LIMIT_EXCEEDED (retryAfterMs 100) → wait 100',
    ]);
    expect(calls).toEqual([400]);
    expect(limit.inflight).toBe(0);
  });

  it('a bulkhead full before any round trip is known refuses with retryAfterMs 0: the retry keeps its own backoff', async () => {
    const clock = virtualClock();
    const b = bulkhead({ maxConcurrent: 1, clock });
    const holder = pipeline([b]).execute(() => clock.sleep(25).then(() => 'holder'));
    const log: string[] = [];
    const retried = pipeline([
      retrying({
        clock,
        backoff: constant({ delayMs: 10, maxAttempts: 6, jitter: noJitter }),
        onFailedAttempt: logOf(clock, log),
      }),
      b,
    ]).execute(() => `retried at ${clock.now()}`);
    await clock.runAll();
    expect([await holder, await retried]).toEqual(['holder', 'retried at 30']);
    expect(log).toEqual([
      '1@0 EBB_LIMIT_EXCEEDED (retryAfterMs 0) → wait 10',
      '2@10 EBB_LIMIT_EXCEEDED (retryAfterMs 0) → wait 10',
      '3@20 EBB_LIMIT_EXCEEDED (retryAfterMs 0) → wait 10',
    ]);
  });

  it('isFailure judges results in every mechanism of one pipeline: a { status: 503 } value opens the breaker, a { status: 429 } value cuts the rate, and the retry returns the last value when its attempts end', async () => {
    const clock = virtualClock();
    const isFailure = (o: { ok: boolean; value?: unknown }) =>
      o.ok
        ? (o.value as { status: number }).status === 429
          ? ('throttled' as const)
          : (o.value as { status: number }).status >= 500
        : true;
    const breaker = circuitBreaker({
      clock,
      consecutiveFailures: 3,
      openBackoff: constant({ delayMs: 10_000, jitter: noJitter }),
      isFailure,
    });
    const rate = adaptiveRate({ clock, initialRatePerSecond: 100, isFailure });
    const statuses = [429, 503, 503];
    let n = 0;
    const api = pipeline([
      retrying({ clock, backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter }), isFailure }),
      breaker,
      rate,
    ]);
    const result = api.execute(() => ({ status: statuses[n++] as number }));
    await clock.runAll();
    // The last value the retry judged a failure is the call's result (withRetry's rule).
    expect(await result).toEqual({ status: 503 });
    expect(n).toBe(3);
    expect(breaker.state).toBe('open');
    expect(rate.ratePerSecond).toBeLessThan(100);
  });
});
