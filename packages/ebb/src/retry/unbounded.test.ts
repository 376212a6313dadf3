import { describe, expect, it } from 'vitest';
import type { BackoffPolicy } from '../backoff/backoff.js';
import { exponential } from '../backoff/exponential.js';
import { virtualClock } from '../core/virtual-clock.js';
import { withRetry } from '../http/with-retry.js';
import { poll } from './poll.js';
import { retry } from './retry.js';
import { retrySync } from './retry-sync.js';

const NEVER_STOPS = /^retry\(\): the backoff policy never stops \(no maxAttempts, no maxElapsedMs\)/;

describe('a Backoff that can run forever is refused unless the caller said so', () => {
  it('retry(), poll(), retrySync() and withRetry() refuse exponential({ initialDelayMs: 1 }) at the call', async () => {
    const backoff = exponential({ initialDelayMs: 1 });
    let calls = 0;
    const op = () => {
      calls++;
      return 'ok';
    };
    const error = await retry(op, { backoff }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RangeError);
    expect((error as Error).message).toMatch(NEVER_STOPS);
    expect((error as Error).message).toMatch(/maxAttempts: Infinity/);
    await expect(poll(() => ({ done: true, value: 1 }), { backoff })).rejects.toThrow(
      /^poll\(\): the backoff policy never stops/,
    );
    expect(() => retrySync(op, { backoff })).toThrow(/^retrySync\(\): the backoff policy never stops/);
    expect(() => withRetry(() => Promise.resolve(new Response('')), { backoff })).toThrow(
      /^withRetry\(\): the backoff policy never stops/,
    );
    expect(calls).toBe(0);
  });

  it('accepted when bounded, or when the caller said forever: maxAttempts: Infinity, withMaxAttempts(Infinity), retries: Infinity', async () => {
    const clock = virtualClock(50);
    const bounded = [
      exponential({ initialDelayMs: 1, maxAttempts: 3 }),
      exponential({ initialDelayMs: 1, maxElapsedMs: 1_000 }),
      exponential({ initialDelayMs: 1, maxAttempts: Infinity }),
      exponential({ initialDelayMs: 1 }).withMaxAttempts(Infinity),
    ];
    for (const backoff of bounded) {
      await expect(retry(() => 'ok', { backoff, clock })).resolves.toBe('ok');
    }
    await expect(
      retry(() => 'ok', { backoff: exponential({ initialDelayMs: 1 }), retries: Infinity, clock }),
    ).resolves.toBe('ok');
    await expect(retry(() => 'ok', { backoff: exponential({ initialDelayMs: 1 }), retries: 4, clock })).resolves.toBe(
      'ok',
    );
  });

  it('a custom policy is the caller’s business: not refused', async () => {
    const custom: BackoffPolicy = { maxElapsedMs: Infinity, start: () => ({ next: () => 1 }) };
    await expect(retry(() => 'ok', { backoff: custom })).resolves.toBe('ok');
  });
});
