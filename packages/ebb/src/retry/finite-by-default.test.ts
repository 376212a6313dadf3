import { describe, expect, it } from 'vitest';
import type { BackoffPolicy } from '../backoff/backoff.js';
import { exponential } from '../backoff/exponential.js';
import { withOptions } from '../backoff/with-options.js';
import { virtualClock } from '../core/virtual-clock.js';
import { withRetry } from '../http/with-retry.js';
import { RetryError } from './errors.js';
import { poll } from './poll.js';
import { retry } from './retry.js';
import { retrySync } from './retry-sync.js';

/** Runs `start` on a virtual clock until nothing waits, and gives what it settled with. */
async function settle<T>(start: (clock: ReturnType<typeof virtualClock>) => Promise<T>): Promise<T | unknown> {
  const clock = virtualClock();
  const done = start(clock).catch((e: unknown) => e);
  await clock.runAll();
  return done;
}

describe('a curve with no limit of its own stops after 5 attempts: nothing retries forever by accident', () => {
  it('retry(), poll(), retrySync() and withRetry() give up after the 5th call of exponential({ initialDelayMs: 1 })', async () => {
    const backoff = exponential({ initialDelayMs: 1 });
    let calls = 0;
    const fail = () => {
      calls++;
      throw new Error('down');
    };
    const error = await settle((clock) => retry(fail, { backoff, clock }));
    expect(error).toBeInstanceOf(RetryError);
    expect([(error as RetryError).attempts, calls]).toEqual([5, 5]);

    const polled = await settle((clock) => poll(() => ({ done: false }), { backoff, clock }));
    expect((polled as RetryError).attempts).toBe(5);

    calls = 0;
    expect(() => retrySync(fail, { backoff, clock: { now: () => 0, sleepSync: () => undefined } })).toThrow(RetryError);
    expect(calls).toBe(5);

    let requests = 0;
    const fetch = (_input: string) => {
      requests++;
      return Promise.resolve(new Response('', { status: 503 }));
    };
    const response = await settle((clock) => withRetry(fetch, { backoff, clock })('http://127.0.0.1/'));
    expect([(response as Response).status, requests]).toEqual([503, 5]);
  });

  it('retries until success when told maxAttempts: Infinity (the option, or withOptions())', async () => {
    const failingTwenty = () => {
      let calls = 0;
      return () => {
        if (++calls <= 20) throw new Error('down');
        return calls;
      };
    };
    for (const backoff of [
      exponential({ initialDelayMs: 1, maxAttempts: Infinity }),
      withOptions(exponential({ initialDelayMs: 1 }), { maxAttempts: Infinity }),
    ]) {
      expect(await settle((clock) => retry(failingTwenty(), { backoff, clock }))).toBe(21);
    }
    // A time budget alone stops a curve: no attempt limit then.
    const budget = exponential({ initialDelayMs: 1, maxDelayMs: 1, maxElapsedMs: 1_000 });
    expect(await settle((clock) => retry(failingTwenty(), { backoff: budget, clock }))).toBe(21);
  });

  it('a custom policy is the caller’s business: not refused, however long it runs', async () => {
    const custom: BackoffPolicy = { maxElapsedMs: Infinity, start: () => ({ next: () => 1 }) };
    await expect(retry(() => 'ok', { backoff: custom })).resolves.toBe('ok');
  });
});
