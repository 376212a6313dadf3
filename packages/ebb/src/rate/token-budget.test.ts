import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { virtualClock } from '../core/virtual-clock.js';
import { retry } from '../retry/retry.js';
import { tokenBudget } from './token-budget.js';

/** One retryable failure as the executor reports it: counted, then the question asked. */
const failure = (budget: ReturnType<typeof tokenBudget>): boolean => {
  const error = new Error('unavailable');
  budget.recordFailure(error);
  return budget.tryAcquireRetry(error);
};

describe('tokenBudget', () => {
  it('reproduces gRPC core’s RetryThrottler test (maxTokens 4, tokenRatio 1.6)', () => {
    // grpc/grpc test/core/client_channel/retry_throttle_test.cc, TEST(RetryThrottler, Basic).
    const b = tokenBudget({ maxTokens: 4, tokenRatio: 1.6 });
    expect(failure(b)).toBe(true); // 3
    b.recordSuccess(); // 4, not beyond max
    expect(b.tokens).toBe(4);
    expect(failure(b)).toBe(true); // 3
    expect(failure(b)).toBe(false); // 2: at the threshold
    expect(failure(b)).toBe(false); // 1
    expect(failure(b)).toBe(false); // 0
    expect(failure(b)).toBe(false); // 0, not below
    expect(b.tokens).toBe(0);
    b.recordSuccess(); // 1.6
    b.recordSuccess(); // 3.2
    expect(failure(b)).toBe(true); // 2.2
    expect(failure(b)).toBe(false); // 1.2
    b.recordSuccess(); // 2.8
    expect(failure(b)).toBe(false); // 1.8
    b.recordSuccess(); // 3.4
    expect(failure(b)).toBe(true); // 2.4
    expect(b.tokens).toBe(2.4);
  });

  it('defaults to gRFC A6’s example, maxTokens 10 and tokenRatio 0.1, counted exactly', () => {
    const b = tokenBudget();
    expect(b.tokens).toBe(10);
    expect([1, 2, 3, 4, 5].map(() => failure(b))).toEqual([true, true, true, true, false]);
    for (let i = 0; i < 10; i++) failure(b);
    expect(b.tokens).toBe(0);
    for (let i = 0; i < 10; i++) b.recordSuccess();
    expect(b.tokens).toBe(1); // ten tenths make exactly one
    for (let i = 0; i < 41; i++) b.recordSuccess();
    expect(b.tokens).toBe(5.1);
    expect(b.tryAcquireRetry(new Error())).toBe(true); // over half: retries resume
  });

  it('lets a shared budget stop a fleet’s retries during a total outage', async () => {
    const clock = virtualClock();
    const budget = tokenBudget(); // 10 %
    let calls = 0;
    const ops = Array.from({ length: 1000 }, () =>
      retry(
        () => {
          calls++;
          throw new Error('503');
        },
        { budget, clock, backoff: constant({ delayMs: 10, maxAttempts: 3 }) },
      ).catch((e: unknown) => e),
    );
    await clock.runAll();
    const errors = await Promise.all(ops);
    // Half of maxTokens: the first failures retry while more than 5 tokens remain.
    expect(calls).toBeLessThanOrEqual(1005);
    expect(calls / 1000).toBeLessThanOrEqual(1.2);
    expect(errors.filter((e) => (e as { reason?: string }).reason === 'budget').length).toBeGreaterThan(990);
  });

  it('rejects bad options at construction, naming them', () => {
    expect(() => tokenBudget({ maxTokens: 0 })).toThrow(
      /tokenBudget\(\): expected `maxTokens` to be a whole number >= 1/,
    );
    expect(() => tokenBudget({ maxTokens: 2.5 })).toThrow(RangeError);
    expect(() => tokenBudget({ tokenRatio: 0 })).toThrow(
      /`tokenRatio` to be a finite number > 0 with at most 3 decimals/,
    );
    // Issue 10, defect 4: null was taken as the default, and Infinity refilled 0 → 10 in one success.
    expect(() => tokenBudget({ tokenRatio: null as never })).toThrow(/`tokenRatio`.*got null/);
    expect(() => tokenBudget({ tokenRatio: Infinity })).toThrow(/`tokenRatio`.*got Infinity/);
    expect(() => tokenBudget({ tokenRatio: Infinity })).toThrow(RangeError);
    expect(() => tokenBudget({ tokenRatio: 0.1234 })).toThrow(/`tokenRatio`/);
    expect(() => tokenBudget({ tokenRatio: '0.1' as never })).toThrow(TypeError);
    expect(() => tokenBudget({ ratio: 0.1 } as never)).toThrow(/unknown option `ratio`/);
  });
});
