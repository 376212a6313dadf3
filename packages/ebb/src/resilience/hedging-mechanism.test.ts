import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { virtualClock } from '../core/virtual-clock.js';
import type { AttemptContext } from '../retry/contexts.js';
import { defaultIsFailure } from '../retry/errors.js';
import { guard } from '../retry/guard.js';
import type { RateController } from '../retry/hook-points.js';
import { pipeline } from '../retry/pipeline.js';
import { retrying } from '../retry/retrying.js';
import { timeout } from '../retry/timeout.js';
import { circuitBreaker } from './circuit-breaker.js';
import { hedging } from './hedging.js';

const always = { tryAcquireRetry: () => true, recordSuccess() {} };

/** A guard that admits everything and logs each ticket's end: what each hedged attempt passed through. */
function logging(log: string[]): RateController {
  let n = 0;
  return {
    acquire: (_signal, attempt) => `t${++n}/a${attempt}`,
    record: (outcome, ticket) => log.push(`record ${String(ticket)} ${outcome}`),
    release: (ticket) => log.push(`release ${String(ticket)}`),
  };
}

describe('hedging() as a pipeline mechanism: hedged attempts of the chain inside it', () => {
  it('hedges the inner chain after the delay; the first value wins, the loser’s inner guard hands its ticket back', async () => {
    const clock = virtualClock();
    const log: string[] = [];
    const h = hedging({ delayMs: 50, clock, budget: always });
    const api = pipeline([h, guard(logging(log))]);
    const times = [1_000, 30];
    const seen: { attempt: number; elapsedMs: number }[] = [];
    const call = api.execute((c: AttemptContext) => {
      seen.push({ attempt: c.attempt, elapsedMs: c.elapsedMs });
      return clock.sleep(times[c.attempt - 1] as number, c.signal).then(() => `attempt ${c.attempt}`);
    });
    await clock.runAll();
    expect(await call).toBe('attempt 2');
    expect(clock.now()).toBe(80);
    expect(seen).toEqual([
      { attempt: 1, elapsedMs: 0 },
      { attempt: 2, elapsedMs: 50 },
    ]);
    expect(log).toEqual(['record t2/a2 success', 'release t1/a1']);
    expect(h.stats).toEqual({ calls: 1, hedges: 1 });
  });

  it('inside retrying(), each attempt is hedged and its hedges count on from its number; an outer timeout aborts them all', async () => {
    const clock = virtualClock();
    const log: string[] = [];
    const h = hedging({ delayMs: 20, clock, budget: always });
    const api = pipeline([
      timeout(100, { clock }),
      retrying({ clock, backoff: constant({ delayMs: 5, maxAttempts: 5, jitter: noJitter }) }),
      h,
      guard(logging(log)),
    ]);
    const attempts: number[] = [];
    const call = api
      .execute((c: AttemptContext) => {
        attempts.push(c.attempt);
        return c.attempt === 1 ? Promise.reject(new Error('503')) : clock.sleep(1_000, c.signal).then(() => 'late');
      })
      .catch((e: Error) => e.name);
    await clock.runAll();
    // Attempt 1 failed at once; attempt 2 (at 5 ms) was hedged at 25 ms as attempt 3; the timeout
    // at 100 ms aborted both, and their tickets went back.
    expect(attempts).toEqual([1, 2, 3]);
    expect(await call).toBe('TimeoutError');
    expect(log).toEqual(['record t1/a1 failure', 'release t2/a2', 'release t3/a3']);
    expect(clock.pending).toBe(0);
  });

  it('each hedged attempt passes the breaker inside it, judged and counted once', async () => {
    const clock = virtualClock();
    const breaker = circuitBreaker({ clock, consecutiveFailures: 3 });
    const h = hedging({ delayMs: 10, clock, budget: always });
    const api = pipeline([h, breaker]);
    const call = api
      .execute((c: AttemptContext) =>
        clock.sleep(c.attempt === 1 ? 30 : 5).then(() => Promise.reject(new Error('503'))),
      )
      .catch((e: Error) => e.message);
    await clock.runAll();
    expect(await call).toBe('503');
    expect(breaker.metrics.consecutiveFailures).toBe(2);
  });

  it('isFailure: a value it calls a failure wins nothing; when every attempt fails, the last failure is the result', async () => {
    const clock = virtualClock();
    const h = hedging<{ status: number }>({
      delayMs: 10,
      clock,
      budget: always,
      isFailure: (o) => (o.ok ? o.value.status >= 500 : defaultIsFailure(o)),
    });
    const run = (statuses: [number, number][]) => {
      const call = pipeline([h]).execute((c: AttemptContext) => {
        const [ms, status] = statuses[c.attempt - 1] as [number, number];
        return clock.sleep(ms).then(() => ({ status, attempt: c.attempt }));
      });
      return clock.runAll().then(() => call);
    };
    // The fast 503 of the hedge does not beat the slow 200 of the first attempt.
    expect(
      await run([
        [40, 200],
        [5, 503],
      ]),
    ).toEqual({ status: 200, attempt: 1 });
    // Both fail: the call ends with the last to end, as a value (a retry around it judges it again).
    expect(
      await run([
        [40, 503],
        [5, 502],
      ]),
    ).toEqual({ status: 503, attempt: 1 });
  });

  it('an error that is no failure ends the call at once, aborting the other attempts (Polly’s rule)', async () => {
    const clock = virtualClock();
    const h = hedging({ delayMs: 10, clock, budget: always });
    const aborted: number[] = [];
    const call = pipeline([h])
      .execute((c: AttemptContext) => {
        c.signal.addEventListener('abort', () => aborted.push(c.attempt));
        return c.attempt === 1
          ? clock.sleep(1_000, c.signal)
          : clock.sleep(5).then(() => Promise.reject(new TypeError('bug')));
      })
      .catch((e: Error) => e.message);
    await clock.advance(15);
    expect(await call).toBe('bug');
    expect(aborted).toEqual([1]);
    await clock.runAll();
  });

  it('an async isFailure is awaited for each attempt; a bad verdict fails the call with a TypeError naming it', async () => {
    const clock = virtualClock();
    const good = hedging({ delayMs: 10, clock, budget: always, isFailure: async (o) => !o.ok });
    const ok = pipeline([good]).execute(() => clock.sleep(5).then(() => 'value'));
    await clock.runAll();
    expect(await ok).toBe('value');
    const bad = hedging({ delayMs: 10, clock, budget: always, isFailure: () => 'no' as never });
    const failed = pipeline([bad])
      .execute(() => 'value')
      .catch((e: Error) => e.message);
    expect(await failed).toBe('hedging(): `isFailure` returned "no"; expected true, false or \'throttled\'.');
  });

  it("run() judges by isFailure too (withRetry()'s hedge), and counts one call and one budget request a call", async () => {
    const clock = virtualClock();
    let requests = 0;
    const h = hedging<number>({
      delayMs: 10,
      clock,
      budget: { ...always, recordRequest: () => requests++ },
      isFailure: (o) => o.ok && o.value < 0,
    });
    const values = [-1, 7];
    const p = h.run((c) => clock.sleep(c.attempt === 1 ? 15 : 20).then(() => values[c.attempt - 1] as number));
    await clock.runAll();
    // The first attempt's -1 (at 15 ms) is a failure: the call waits for the hedge (10 + 20 ms).
    expect(await p).toBe(7);
    expect(clock.now()).toBe(30);
    expect(requests).toBe(1);
    expect(h.stats).toEqual({ calls: 1, hedges: 1 });
  });
});
