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
    expect(() => tokenBudget({ tokenRatio: 0 })).toThrow(/`tokenRatio` to be a finite number >= 0.001/);
    expect(() => tokenBudget({ tokenRatio: 0.0009 })).toThrow(/`tokenRatio`/);
    expect(() => tokenBudget({ tokenRatio: Infinity })).toThrow(/`tokenRatio`/);
    expect(() => tokenBudget({ tokenRatio: null as never })).toThrow(TypeError);
    expect(() => tokenBudget({ maxTokens: 1001 })).toThrow(/`maxTokens` to be at most 1000/);
    expect(() => tokenBudget({ tokenRatio: '0.1' as never })).toThrow(TypeError);
    expect(() => tokenBudget({ ratio: 0.1 } as never)).toThrow(/unknown option `ratio`/);
  });
});

describe('tokenBudget: bounds and thousandths', () => {
  it('accepts maxTokens up to 1000 (gRPC’s bound) and tokenRatio down to 0.001', () => {
    const big = tokenBudget({ maxTokens: 1000, tokenRatio: 0.001 });
    expect(big.tokens).toBe(1000);
    big.recordFailure();
    expect(big.tokens).toBe(999);
    big.recordSuccess();
    expect(big.tokens).toBe(999.001);
    const small = tokenBudget({ maxTokens: 1 });
    expect(small.tokens).toBe(1);
    expect(small.tryAcquireRetry()).toBe(true); // 1 > 0.5
  });

  it('reads tokenRatio to the thousandth as gRPC core does: 1.005 is 1.005 (not 1.004), 0.5466 is 0.546', () => {
    const b = tokenBudget({ maxTokens: 10, tokenRatio: 1.005 });
    for (let i = 0; i < 3; i++) b.recordFailure();
    b.recordSuccess();
    expect(b.tokens).toBe(8.005);
    const c = tokenBudget({ maxTokens: 10, tokenRatio: 0.5466 });
    for (let i = 0; i < 3; i++) c.recordFailure();
    c.recordSuccess();
    expect(c.tokens).toBe(7.546);
    // 0.0019 reads as 0.001: accepted, and a success adds one thousandth.
    const d = tokenBudget({ maxTokens: 2, tokenRatio: 0.0019 });
    d.recordFailure();
    d.recordSuccess();
    expect(d.tokens).toBe(1.001);
  });

  it('takes a failure from a bucket under one token down to 0, and fills exactly to maxTokens', () => {
    const b = tokenBudget({ maxTokens: 2, tokenRatio: 0.4 });
    b.recordFailure();
    b.recordFailure();
    b.recordSuccess(); // 0.4
    b.recordFailure(); // not below 0
    expect(b.tokens).toBe(0);
    for (let i = 0; i < 5; i++) b.recordSuccess(); // 2.0 exactly
    expect(b.tokens).toBe(2);
    b.recordSuccess();
    expect(b.tokens).toBe(2);
    // At exactly half (1 of 2) no retry; above it, one.
    b.recordFailure();
    expect(b.tokens).toBe(1);
    expect(b.tryAcquireRetry()).toBe(false);
    b.recordSuccess();
    expect(b.tryAcquireRetry()).toBe(true);
  });

  it('names the option, the value and the fix in its messages', () => {
    const cases: [unknown, ErrorConstructor, string][] = [
      [
        { maxTokens: 0 },
        RangeError,
        'expected `maxTokens` to be a whole number >= 1, got 0. For example 10, as in gRFC A6.',
      ],
      [
        { maxTokens: 1001 },
        RangeError,
        'expected `maxTokens` to be at most 1000, got 1001. gRPC refuses more than 1000.',
      ],
      [
        { tokenRatio: 0.0009 },
        RangeError,
        'expected `tokenRatio` to be a finite number >= 0.001, got 0.0009. For example 0.1, as in gRFC A6.',
      ],
      [
        { tokenRatio: Number.NaN },
        RangeError,
        'expected `tokenRatio` to be a finite number >= 0.001, got NaN. For example 0.1, as in gRFC A6.',
      ],
      [
        { tokenRatio: -Infinity },
        RangeError,
        'expected `tokenRatio` to be a finite number >= 0.001, got -Infinity. For example 0.1, as in gRFC A6.',
      ],
      [
        { tokenRatio: '0.1' },
        TypeError,
        'expected `tokenRatio` to be a finite number >= 0.001, got "0.1". For example 0.1, as in gRFC A6.',
      ],
    ];
    for (const [options, type, message] of cases) {
      let error: unknown;
      try {
        tokenBudget(options as never);
      } catch (e) {
        error = e;
      }
      expect(error, message).toBeInstanceOf(type);
      expect((error as Error).message).toBe(`tokenBudget(): ${message}`);
    }
  });
});
