import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import type { AttemptContext, RetryBudget } from '../retry/options.js';
import { hedging } from './hedging.js';

/** An operation that takes `ms` of virtual time, recording whether its signal aborted. */
function slow(clock: ReturnType<typeof virtualClock>, ms: number) {
  const aborted: unknown[] = [];
  const op = ({ signal }: AttemptContext) => {
    signal.addEventListener('abort', () => aborted.push(signal.reason));
    return clock.sleep(ms, signal).then(() => 'slow');
  };
  return { op, aborted };
}

describe('hedging: a budget or clock that misbehaves fails only the call it belongs to', () => {
  it('tryAcquireRetry throwing at the hedge: the call rejects with its error, its attempt is aborted, no timer is left', async () => {
    const clock = virtualClock();
    const bug = new Error('budget bug');
    const budget: RetryBudget = {
      tryAcquireRetry: () => {
        throw bug;
      },
      recordSuccess() {},
    };
    const h = hedging({ delayMs: 50, clock, budget });
    const s = slow(clock, 1_000);
    const call = h.run(s.op).catch((e: unknown) => e);
    // An unrelated call on the same hedging, which settles before its delay.
    const other = h.run(() => clock.sleep(10).then(() => 'other'));
    await clock.runAll();
    expect(await call).toBe(bug);
    expect(await other).toBe('other');
    expect(s.aborted).toEqual([bug]);
    expect(clock.pending).toBe(0);
    expect(h.stats).toEqual({ calls: 2, hedges: 0 });
  });

  it.each([
    ['NaN', Number.NaN],
    ['undefined', undefined],
    ['a string', 'yes'],
    ['a promise', new Promise(() => {})],
  ])('tryAcquireRetry returning %s: a TypeError naming it fails the call', async (_, value) => {
    const clock = virtualClock();
    const h = hedging({
      delayMs: 50,
      clock,
      budget: { tryAcquireRetry: () => value as unknown as boolean, recordSuccess() {} },
    });
    const s = slow(clock, 1_000);
    const call = h.run(s.op).catch((e: unknown) => e);
    await clock.runAll();
    const error = await call;
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(
      /^hedging\(\): `budget\.tryAcquireRetry` returned .*; expected true or false\.$/,
    );
    expect(clock.pending).toBe(0);
  });

  it('recordRequest throwing: run() rejects with its error (it does not throw), and no attempt starts', async () => {
    const clock = virtualClock();
    const bug = new Error('count bug');
    let calls = 0;
    const h = hedging({
      delayMs: 50,
      clock,
      budget: {
        recordRequest: () => {
          throw bug;
        },
        tryAcquireRetry: () => true,
        recordSuccess() {},
      },
    });
    let result: Promise<unknown> | undefined;
    expect(() => {
      result = h.run(() => calls++);
    }).not.toThrow();
    await expect(result).rejects.toBe(bug);
    expect(calls).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it("a clock whose now() throws: the call is not hedged and settles with its operation's value", async () => {
    const inner = virtualClock();
    let broken = false;
    const clock = {
      now: () => {
        if (broken) throw new Error('clock bug');
        return inner.now();
      },
      sleep: inner.sleep,
    };
    const h = hedging({ delayMs: 50, clock, budget: { tryAcquireRetry: () => true, recordSuccess() {} } });
    broken = true;
    const call = h.run(() => inner.sleep(100).then(() => 'done'));
    await inner.runAll();
    await expect(call).resolves.toBe('done');
    expect(h.stats.hedges).toBe(0);
    expect(inner.pending).toBe(0);
  });

  it('a clock whose sleep() throws or returns no promise: calls are not hedged, and settle', async () => {
    for (const sleep of [
      () => {
        throw new Error('sleep bug');
      },
      () => 42,
    ]) {
      const inner = virtualClock();
      const clock = { now: inner.now, sleep: sleep as unknown as typeof inner.sleep };
      const h = hedging({ delayMs: 50, clock, budget: { tryAcquireRetry: () => true, recordSuccess() {} } });
      const calls = [h.run(() => inner.sleep(100).then(() => 'a')), h.run(() => inner.sleep(200).then(() => 'b'))];
      await inner.runAll();
      await expect(Promise.all(calls)).resolves.toEqual(['a', 'b']);
      expect(h.stats.hedges).toBe(0);
    }
  });
});
