import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { virtualClock } from '../core/virtual-clock.js';
import { retry } from '../retry/retry.js';
import { type AwsErrorKind, awsRetryQuota, defaultClassify } from './aws-retry-quota.js';

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

describe('awsRetryQuota: behaviours, the default classifier and messages', () => {
  it("charges 5 / 10 / 10 with behaviour 'pre-2026' (@smithy/core 3.39.0), and explicit costs win over the behaviour", () => {
    const old = awsRetryQuota({ behaviour: 'pre-2026' });
    let granted = 0;
    while (old.tryAcquireRetry(transient())) granted++;
    expect(granted).toBe(50);
    const t = awsRetryQuota({ behaviour: 'pre-2026' });
    t.tryAcquireRetry(timeout());
    t.tryAcquireRetry(throttling());
    expect(t.available).toBe(485);
    const now = awsRetryQuota({ behaviour: '2026' });
    now.tryAcquireRetry(timeout());
    now.tryAcquireRetry(throttling());
    expect(now.available).toBe(481);
    const custom = awsRetryQuota({ behaviour: 'pre-2026', costs: { throttling: 1, transient: 2, timeout: 3 } });
    custom.tryAcquireRetry(transient());
    custom.tryAcquireRetry(timeout());
    custom.tryAcquireRetry(throttling());
    expect(custom.available).toBe(494);
  });

  it('classifies by default: throttled: true or status 429 → throttling, name TimeoutError → timeout, else transient', () => {
    const cases: [unknown, AwsErrorKind][] = [
      [{ throttled: true }, 'throttling'],
      [{ status: 429 }, 'throttling'],
      [{ name: 'TimeoutError', status: 429 }, 'throttling'],
      [{ name: 'TimeoutError', throttled: true }, 'throttling'],
      [{ name: 'TimeoutError' }, 'timeout'],
      [Object.assign(new Error('t'), { name: 'TimeoutError' }), 'timeout'],
      [{ throttled: 'yes' }, 'transient'],
      [{ throttled: 1 }, 'transient'],
      [{ status: '429' }, 'transient'],
      [{ status: 503 }, 'transient'],
      [{ name: 'AbortError' }, 'transient'],
      [new Error('x'), 'transient'],
      [Object.create(null), 'transient'],
      ['TimeoutError', 'transient'],
      [429, 'transient'],
      [null, 'transient'],
      [undefined, 'transient'],
    ];
    for (const [error, kind] of cases) expect(defaultClassify(error), String(kind)).toBe(kind);
  });

  it('lets a retry take the last tokens, and a capacity of 0 refuses every retry', () => {
    const q = awsRetryQuota({ capacity: 14 });
    expect(q.tryAcquireRetry(transient())).toBe(true);
    expect(q.available).toBe(0);
    expect(q.tryAcquireRetry(transient())).toBe(false);
    const zero = awsRetryQuota({ capacity: 0 });
    expect(zero.tryAcquireRetry(throttling())).toBe(false);
    zero.recordSuccess({ attempt: 1, lastError: undefined });
    expect(zero.available).toBe(0);
  });

  it('names the option, the value and the fix in its messages', () => {
    const cases: [unknown, ErrorConstructor, string][] = [
      [
        { behaviour: '2025' },
        TypeError,
        "expected `behaviour` to be '2026' or 'pre-2026', got \"2025\". '2026' is what the SDK does today.",
      ],
      [
        { behaviour: null },
        TypeError,
        "expected `behaviour` to be '2026' or 'pre-2026', got null. '2026' is what the SDK does today.",
      ],
      [
        { capacity: -1 },
        RangeError,
        'expected `capacity` to be a finite number >= 0, got -1. For example 500, the SDKs’ quota.',
      ],
      [
        { noRetryIncrement: Infinity },
        RangeError,
        'expected `noRetryIncrement` to be a finite number >= 0, got Infinity. For example 1.',
      ],
      [{ costs: null }, TypeError, 'expected `costs` to be an object { throttling, transient, timeout }, got null.'],
      [
        { costs: [5, 14, 14] },
        TypeError,
        'expected `costs` to be an object { throttling, transient, timeout }, got an array.',
      ],
      [
        { costs: { throttling: 5, transient: -14, timeout: 14 } },
        RangeError,
        'expected `costs.transient` to be a finite number >= 0, got -14. Costs are tokens, such as 5.',
      ],
      [
        { costs: { throttling: 5, transient: 14 } },
        TypeError,
        'expected `costs.timeout` to be a finite number >= 0, got undefined. Costs are tokens, such as 5.',
      ],
      [{ classify: 5 }, TypeError, 'expected `classify` to be a function (error) => kind, got 5.'],
    ];
    for (const [options, type, message] of cases) {
      let error: unknown;
      try {
        awsRetryQuota(options as never);
      } catch (e) {
        error = e;
      }
      expect(error, message).toBeInstanceOf(type);
      expect((error as Error).message).toBe(`awsRetryQuota(): ${message}`);
    }
    const odd = awsRetryQuota({ classify: () => undefined as never });
    expect(() => odd.recordSuccess({ attempt: 2, lastError: new Error() })).toThrow(
      new TypeError("awsRetryQuota(): `classify` returned undefined; expected 'throttling', 'transient' or 'timeout'."),
    );
  });
});
