import { describe, expect, it } from 'vitest';
import type { Clock } from '../core/clock.js';
import { virtualClock } from '../core/virtual-clock.js';
import { adaptiveRate } from './adaptive-rate.js';
import { adaptiveThrottle } from './adaptive-throttle.js';
import { awsAdaptiveRate } from './aws-adaptive-rate.js';
import { ratioBudget } from './ratio-budget.js';

/** A virtual clock whose now() and sleep() can be broken and mended. */
function breakable() {
  const inner = virtualClock(1_000);
  const state: { now?: () => unknown; sleep?: () => unknown } = {};
  const clock: Clock = {
    now: () => (state.now ? (state.now() as number) : inner.now()),
    sleep: (ms, signal) => (state.sleep ? (state.sleep() as Promise<void>) : inner.sleep(ms, signal)),
  };
  return { inner, clock, state };
}

describe('rate controllers and budgets: a clock that misbehaves fails the calls that read it, and leaves nothing waiting', () => {
  it("adaptiveRate: a sleep that throws refuses the request that would wait, with the clock's error, and nobody is left waiting", async () => {
    const { inner, clock, state } = breakable();
    const rate = adaptiveRate({ initialRatePerSecond: 10, clock });
    rate.acquire(); // goes at once
    const bug = new Error('sleep bug');
    state.sleep = () => {
      throw bug;
    };
    await expect(rate.acquire() as Promise<unknown>).rejects.toBe(bug);
    expect(rate.waiting).toBe(0);
    state.sleep = undefined;
    const next = rate.acquire() as Promise<unknown>;
    expect(rate.waiting).toBe(1);
    await inner.runAll();
    await expect(next).resolves.toBeDefined();
    expect(rate.waiting).toBe(0);
    expect(inner.pending).toBe(0);
  });

  it('adaptiveRate: a sleep that returns no promise is a TypeError naming clock.sleep(), for every waiter', async () => {
    const { clock, state } = breakable();
    const rate = adaptiveRate({ initialRatePerSecond: 10, clock });
    rate.acquire();
    state.sleep = () => 42;
    await expect(rate.acquire() as Promise<unknown>).rejects.toThrow(
      /^clock\.sleep\(\) returned 42; expected a promise\.$/,
    );
    expect(rate.waiting).toBe(0);
  });

  it("awsAdaptiveRate: a now() that throws at a wake-up refuses every waiter with the clock's error; no rejection goes unhandled", async () => {
    const { inner, clock, state } = breakable();
    const rate = awsAdaptiveRate({ clock });
    rate.record('throttled'); // the bucket now paces
    const waiting = [rate.acquire(), rate.acquire(), rate.acquire()].map((p) =>
      Promise.resolve(p).then(
        () => 'granted',
        (e: unknown) => e,
      ),
    );
    const bug = new Error('now bug');
    state.now = () => {
      throw bug;
    };
    await inner.runAll();
    const outcomes = await Promise.all(waiting);
    expect(outcomes.filter((o) => o !== 'granted').every((o) => o === bug)).toBe(true);
    expect(outcomes).toContain(bug);
    expect(inner.pending).toBe(0);
  });

  it.each([
    ['NaN', Number.NaN, RangeError],
    ['undefined', undefined, TypeError],
    ['a string', '5', TypeError],
    ['Infinity', Infinity, RangeError],
  ])(
    'a now() returning %s is a %O naming clock.now() (RangeError for a number out of range), and the controller state stays finite',
    (_, value, kind) => {
      const { clock, state } = breakable();
      const rate = adaptiveRate({ initialRatePerSecond: 10, clock });
      const throttle = adaptiveThrottle({ clock });
      const aws = awsAdaptiveRate({ clock });
      const budget = ratioBudget({ clock });
      state.now = () => value;
      const named = /^clock\.now\(\) returned .*; expected a finite number of milliseconds\.$/;
      for (const call of [
        () => rate.acquire(),
        () => rate.record('throttled'),
        () => throttle.acquire(),
        () => aws.record('throttled'),
        () => budget.recordRequest(),
        () => budget.tryAcquireRetry(),
      ]) {
        expect(call).toThrow(named);
        expect(call).toThrow(kind);
      }
      state.now = undefined;
      expect(Number.isFinite(rate.ratePerSecond)).toBe(true);
      expect(throttle.requests).toBe(0);
      expect(budget.balance).toBe(100);
    },
  );
});
