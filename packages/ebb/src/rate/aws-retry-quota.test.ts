import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { virtualClock } from '../core/virtual-clock.js';
import { retry } from '../retry/retry.js';
import { awsRetryQuota } from './aws-retry-quota.js';

const transient = () => Object.assign(new Error('503 Service Unavailable'), { status: 503 });
const throttling = () => Object.assign(new Error('429 Too Many Requests'), { throttled: true });
const timeout = () => Object.assign(new Error('attempt timed out'), { name: 'TimeoutError' });

describe('awsRetryQuota', () => {
  it('holds 500 tokens; a transient retry costs 14 and a throttling retry 5 (@smithy/util-retry 4.6.2)', () => {
    const q = awsRetryQuota();
    expect(q.available).toBe(500);
    let granted = 0;
    while (q.tryAcquireRetry(transient())) granted++;
    expect(granted).toBe(35); // 35 · 14 = 490
    expect(q.available).toBe(10);
    expect(q.tryAcquireRetry(timeout())).toBe(false); // timeouts cost 14 too
    expect(q.tryAcquireRetry(throttling())).toBe(true);
    expect(q.tryAcquireRetry(throttling())).toBe(true);
    expect(q.tryAcquireRetry(throttling())).toBe(false);
    expect(q.available).toBe(0);
  });

  it('refunds what the last retry cost on success, or 1 token without a retry, up to the capacity', () => {
    const q = awsRetryQuota();
    q.tryAcquireRetry(transient());
    q.tryAcquireRetry(throttling());
    expect(q.available).toBe(481);
    q.recordSuccess({ attempt: 3, lastError: throttling() });
    expect(q.available).toBe(486);
    q.recordSuccess({ attempt: 2, lastError: transient() });
    expect(q.available).toBe(500);
    q.recordSuccess({ attempt: 1, lastError: undefined });
    expect(q.available).toBe(500);
    q.tryAcquireRetry(transient());
    q.recordSuccess({ attempt: 1, lastError: undefined });
    expect(q.available).toBe(487);
  });

  it('takes capacity, costs, noRetryIncrement and classify from its options', () => {
    const legacy = awsRetryQuota({ capacity: 100, costs: { throttling: 5, transient: 10, timeout: 10 } });
    expect(legacy.available).toBe(100);
    legacy.tryAcquireRetry(transient());
    legacy.tryAcquireRetry(timeout());
    legacy.tryAcquireRetry(throttling());
    expect(legacy.available).toBe(75);

    const generous = awsRetryQuota({ noRetryIncrement: 4 });
    generous.tryAcquireRetry(transient());
    generous.recordSuccess({ attempt: 1, lastError: undefined });
    expect(generous.available).toBe(490);

    const byCode = awsRetryQuota({
      classify: (e) => ((e as { code?: string }).code === 'SlowDown' ? 'throttling' : 'transient'),
    });
    byCode.tryAcquireRetry({ code: 'SlowDown' });
    expect(byCode.available).toBe(495);
    byCode.tryAcquireRetry(throttling()); // not throttling by this classifier
    expect(byCode.available).toBe(481);
  });

  it('refunds through retry(): a throttled attempt then a success leaves the quota full', async () => {
    const clock = virtualClock();
    const q = awsRetryQuota();
    const p = retry((c) => (c.attempt === 1 ? Promise.reject(throttling()) : 'ok'), {
      budget: q,
      clock,
      backoff: constant({ delayMs: 10, maxAttempts: 10 }),
    });
    await clock.runAll();
    expect(await p).toBe('ok');
    expect(q.available).toBe(500);
  });

  it('rejects bad options at construction, naming them', () => {
    expect(() => awsRetryQuota({ capacity: -1 })).toThrow(/awsRetryQuota\(\): expected `capacity`/);
    expect(() => awsRetryQuota({ noRetryIncrement: Number.NaN })).toThrow(/`noRetryIncrement`/);
    expect(() => awsRetryQuota({ costs: 5 as never })).toThrow(/`costs` to be an object/);
    expect(() => awsRetryQuota({ costs: { throttling: 5, transient: 14 } as never })).toThrow(/`costs.timeout`/);
    expect(() => awsRetryQuota({ costs: { throttling: 5, transient: 14, timeout: 1, other: 2 } as never })).toThrow(
      /unknown option `other`/,
    );
    expect(() => awsRetryQuota({ classify: 'x' as never })).toThrow(/`classify` to be a function/);
    const odd = awsRetryQuota({ classify: () => 'server' as never });
    expect(() => odd.tryAcquireRetry(new Error())).toThrow(/`classify` returned "server"/);
  });
});
