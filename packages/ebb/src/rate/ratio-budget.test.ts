import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { virtualClock } from '../core/virtual-clock.js';
import { retry } from '../retry/retry.js';
import { type RatioBudgetOptions, ratioBudget } from './ratio-budget.js';

describe('ratioBudget', () => {
  // After Finagle's RetryBudgetTest.testBudget: time frozen, 10 000 requests each followed by a
  // retry attempt; the retries granted match percentCanRetry · requests + the reserve within 1.
  it.each([
    [{ percentCanRetry: 0.1, minRetriesPerSecond: 0, ttlMs: 60_000 }],
    [{ percentCanRetry: 0.5, minRetriesPerSecond: 0, ttlMs: 60_000 }],
    [{ percentCanRetry: 0.25, minRetriesPerSecond: 0, ttlMs: 60_000 }],
    [{ percentCanRetry: 0.75, minRetriesPerSecond: 0, ttlMs: 60_000 }],
    [{ percentCanRetry: 0.99, minRetriesPerSecond: 0, ttlMs: 60_000 }],
    [{ percentCanRetry: 0.001, minRetriesPerSecond: 0, ttlMs: 60_000 }],
    [{ percentCanRetry: 0, minRetriesPerSecond: 10, ttlMs: 1000 }],
    [{ percentCanRetry: 0, minRetriesPerSecond: 5, ttlMs: 2000 }],
    [{ percentCanRetry: 0.1, minRetriesPerSecond: 10, ttlMs: 1000 }],
    [{ percentCanRetry: 0.5, minRetriesPerSecond: 5, ttlMs: 2000 }],
  ] as [RatioBudgetOptions][])('%o', (options) => {
    const clock = virtualClock();
    const b = ratioBudget({ ...options, clock });
    const minRetries = Math.floor((options.ttlMs as number) / 1000) * (options.minRetriesPerSecond as number);
    expect(b.balance).toBe(minRetries);
    let retried = 0;
    for (let i = 0; i < 10_000; i++) {
      b.recordRequest();
      if (b.tryAcquireRetry(new Error())) retried++;
      else expect(b.balance).toBe(0);
    }
    const expected = Math.trunc(10_000 * (options.percentCanRetry as number)) + minRetries;
    expect(Math.abs(retried - expected)).toBeLessThanOrEqual(1);
  });

  it('allows more than one retry per request above 100 % (Finagle: 2.0 gives 20 000 for 10 000)', () => {
    const b = ratioBudget({ percentCanRetry: 2, minRetriesPerSecond: 0, ttlMs: 60_000, clock: virtualClock() });
    expect(b.balance).toBe(0);
    for (let i = 0; i < 10_000; i++) b.recordRequest();
    expect(b.balance).toBe(20_000);
  });

  it('refuses everything with both percentCanRetry and minRetriesPerSecond at 0 (Finagle’s Empty)', () => {
    const b = ratioBudget({ percentCanRetry: 0, minRetriesPerSecond: 0 });
    b.recordRequest();
    expect(b.tryAcquireRetry(new Error())).toBe(false);
    expect(b.balance).toBe(0);
  });

  it('defaults to 20 %, 10 retries a second and a 10-s ttl: a reserve of 100, one more per five requests', () => {
    const clock = virtualClock();
    const b = ratioBudget({ clock });
    expect(b.balance).toBe(100);
    for (let i = 0; i < 1000; i++) b.recordRequest();
    expect(b.balance).toBe(300);
    let granted = 0;
    while (b.tryAcquireRetry(new Error())) granted++;
    expect(granted).toBe(300);
  });

  it('forgets requests after the ttl: ten slices of ttlMs / 10, the oldest dropped as time moves', async () => {
    const at = async (ttlMs: number, checkAtMs: number) => {
      const clock = virtualClock();
      const b = ratioBudget({ clock, ttlMs, percentCanRetry: 0.5, minRetriesPerSecond: 0 });
      for (let i = 0; i < 100; i++) b.recordRequest();
      await clock.advance(checkAtMs);
      return b.balance;
    };
    expect(await at(10_000, 9000)).toBe(50);
    expect(await at(10_000, 10_000)).toBe(0);
    expect(await at(2000, 1800)).toBe(50);
    expect(await at(2000, 2000)).toBe(0);
  });

  it('withdraws at most 2^31 − 1 per retry, as Scala’s toInt saturates: a tiny percentage keeps a finite balance', () => {
    const b = ratioBudget({ percentCanRetry: 5e-324, minRetriesPerSecond: 1, ttlMs: 1000 });
    expect(b.balance).toBe(1);
    expect(b.tryAcquireRetry()).toBe(true);
    expect(b.balance).toBe(0);
    expect(b.tryAcquireRetry()).toBe(false);
  });

  it('gives each of minRetriesPerSecond × whole seconds of ttl as reserve', () => {
    expect(ratioBudget({ minRetriesPerSecond: 3 }).balance).toBe(30);
    expect(ratioBudget({ minRetriesPerSecond: 3, ttlMs: 2500 }).balance).toBe(6);
  });

  it('deposits once per operation through retry(), not per attempt', async () => {
    const clock = virtualClock();
    // 100 %: each request pays for one retry, and there is no reserve.
    const b = ratioBudget({ clock, percentCanRetry: 1, minRetriesPerSecond: 0 });
    const runs = Array.from({ length: 10 }, () =>
      retry((c) => (c.attempt < 2 ? Promise.reject(new Error('503')) : 'ok'), {
        budget: b,
        clock,
        backoff: constant({ delayMs: 1, maxAttempts: 10 }),
      }),
    );
    await clock.runAll();
    expect(await Promise.all(runs)).toEqual(Array(10).fill('ok'));
    // 10 deposits, 10 retries taken; a deposit per attempt would have left 10.
    expect(b.balance).toBe(0);
  });

  it('rejects bad options at construction, naming them', () => {
    expect(() => ratioBudget({ ttlMs: 999 })).toThrow(
      /ratioBudget\(\): expected `ttlMs` to be a whole number from 1000 to 60000/,
    );
    expect(() => ratioBudget({ ttlMs: 60_001 })).toThrow(/`ttlMs`/);
    expect(() => ratioBudget({ ttlMs: 1500.5 })).toThrow(/`ttlMs`/);
    expect(() => ratioBudget({ minRetriesPerSecond: -1 })).toThrow(/`minRetriesPerSecond`/);
    expect(() => ratioBudget({ minRetriesPerSecond: 1.5 })).toThrow(/`minRetriesPerSecond`/);
    expect(() => ratioBudget({ percentCanRetry: -0.1 })).toThrow(/`percentCanRetry` to be a number from 0 to 1000/);
    expect(() => ratioBudget({ percentCanRetry: 1001 })).toThrow(RangeError);
    expect(() => ratioBudget({ clock: {} as never })).toThrow(/`clock`/);
    expect(() => ratioBudget({ ttl: 10 } as never)).toThrow(/unknown option `ttl`/);
  });
});

describe('ratioBudget: bounds and messages', () => {
  it('accepts percentCanRetry from 0 to 1000 and ttlMs from 1000 to 60000', () => {
    const clock = virtualClock();
    const most = ratioBudget({ clock, percentCanRetry: 1000, minRetriesPerSecond: 0 });
    most.recordRequest();
    expect(most.balance).toBe(1000); // a withdrawal of 1 per retry
    const none = ratioBudget({ clock, percentCanRetry: 0, minRetriesPerSecond: 1, ttlMs: 60_000 });
    none.recordRequest(); // deposits nothing
    expect(none.balance).toBe(60);
    let granted = 0;
    while (none.tryAcquireRetry()) granted++;
    expect(granted).toBe(60);
    none.recordSuccess();
    expect(none.balance).toBe(0);
  });

  it('keeps its balance whatever successes are recorded (Finagle counts requests only)', () => {
    const b = ratioBudget({ clock: virtualClock(), percentCanRetry: 0.5, minRetriesPerSecond: 0 });
    for (let i = 0; i < 4; i++) b.recordRequest();
    for (let i = 0; i < 10; i++) b.recordSuccess();
    expect(b.balance).toBe(2);
    const empty = ratioBudget({ percentCanRetry: 0, minRetriesPerSecond: 0 });
    empty.recordSuccess();
    empty.recordRequest();
    expect(empty.balance).toBe(0);
    expect(empty.tryAcquireRetry()).toBe(false);
  });

  it('names the option, the value and the fix in its messages', () => {
    const cases: [unknown, ErrorConstructor, string][] = [
      [
        { percentCanRetry: 1000.5 },
        RangeError,
        'expected `percentCanRetry` to be a number from 0 to 1000, got 1000.5. For example 0.2 for 20 %.',
      ],
      [
        { percentCanRetry: '0.2' },
        TypeError,
        'expected `percentCanRetry` to be a number from 0 to 1000, got "0.2". For example 0.2 for 20 %.',
      ],
      [
        { minRetriesPerSecond: 0.5 },
        RangeError,
        'expected `minRetriesPerSecond` to be a whole number >= 0, got 0.5. For example 10.',
      ],
      [{ ttlMs: 0 }, RangeError, 'expected `ttlMs` to be a whole number >= 1, got 0. For example 10000.'],
      [
        { ttlMs: 999 },
        RangeError,
        'expected `ttlMs` to be a whole number from 1000 to 60000, got 999. Finagle bounds the ttl to [1 s, 60 s].',
      ],
      [
        { ttlMs: 60_001 },
        RangeError,
        'expected `ttlMs` to be a whole number from 1000 to 60000, got 60001. Finagle bounds the ttl to [1 s, 60 s].',
      ],
    ];
    for (const [options, type, message] of cases) {
      let error: unknown;
      try {
        ratioBudget(options as never);
      } catch (e) {
        error = e;
      }
      expect(error, message).toBeInstanceOf(type);
      expect((error as Error).message).toBe(`ratioBudget(): ${message}`);
    }
  });
});

describe('ratioBudget: Finagle’s Long arithmetic', () => {
  it('keeps a reserve beyond 2^53 tokens exact: 4,194,307 a second at the 2^31 − 1 withdrawal', () => {
    // 4 194 307 × (2^31 − 1) tokens is above 2^53: as one double it rounded the balance down to
    // 4 194 306; Finagle's Long gives 4 194 307.
    const b = ratioBudget({ percentCanRetry: 5e-324, minRetriesPerSecond: 4_194_307, ttlMs: 1000 });
    expect(b.balance).toBe(4_194_307);
    expect(b.tryAcquireRetry()).toBe(true);
    expect(b.balance).toBe(4_194_306);
  });

  it('rounds the balance towards zero, as a Long division, also below zero when deposits expire first', async () => {
    const clock = virtualClock();
    // 20 %: a deposit is 1000 tokens, a retry withdraws 5000; no reserve.
    const b = ratioBudget({ clock, percentCanRetry: 0.2, minRetriesPerSecond: 0, ttlMs: 10_000 });
    const balances: number[] = [];
    for (let i = 0; i < 5; i++) b.recordRequest();
    balances.push(b.balance); // 5000 / 5000
    await clock.advance(5000);
    b.recordRequest();
    b.recordRequest();
    balances.push(b.balance); // 7000 / 5000 → 1
    expect(b.tryAcquireRetry()).toBe(true);
    balances.push(b.balance); // 2000 / 5000 → 0
    expect(b.tryAcquireRetry()).toBe(false);
    await clock.advance(5000);
    // The five deposits of t = 0 expire, the withdrawal of t = 5 s stays: −3000 / 5000 → 0 (not −1).
    balances.push(b.balance);
    expect(b.tryAcquireRetry()).toBe(false);
    expect(balances).toEqual([1, 1, 0, 0]);
    expect(Object.is(b.balance, -0)).toBe(false);
  });

  it('reports a negative balance once only withdrawals remain in the window, as Finagle’s does', async () => {
    const clock = virtualClock();
    const b = ratioBudget({ clock, percentCanRetry: 0.2, minRetriesPerSecond: 0, ttlMs: 10_000 });
    for (let i = 0; i < 10; i++) b.recordRequest(); // 10 000
    await clock.advance(5000);
    expect(b.tryAcquireRetry()).toBe(true);
    expect(b.tryAcquireRetry()).toBe(true); // 0 left
    expect(b.balance).toBe(0);
    await clock.advance(5000); // the deposits expire: −10 000 / 5000
    expect(b.balance).toBe(-2);
    expect(b.tryAcquireRetry()).toBe(false);
    await clock.advance(5000); // the withdrawals expire too
    expect(b.balance).toBe(0);
    // With a reserve (3 retries: 1 a second over 3 s) the balance is counted on top of it.
    const r = ratioBudget({ clock, percentCanRetry: 0.2, minRetriesPerSecond: 1, ttlMs: 3000 });
    r.recordRequest();
    r.recordRequest(); // 2000 + the reserve's 15 000
    await clock.advance(1500);
    for (let i = 0; i < 3; i++) expect(r.tryAcquireRetry()).toBe(true); // 17 000 − 15 000 = 2000
    expect(r.tryAcquireRetry()).toBe(false);
    expect(r.balance).toBe(0);
    await clock.advance(1500); // the deposits expire: −15 000 + 15 000 = 0
    expect(r.balance).toBe(0);
    await clock.advance(1500); // the withdrawals expire: the reserve alone
    expect(r.balance).toBe(3);
  });
});
