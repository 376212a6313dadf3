import { afterEach, describe, expect, it, vi } from 'vitest';
import { systemClock, unrefSystemClock } from './clock.js';

describe('systemClock', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('measures monotonic time and sleeps for real', async () => {
    const start = systemClock.now();
    await systemClock.sleep(20);
    // Timers may fire up to a millisecond early against performance.now().
    expect(systemClock.now() - start).toBeGreaterThanOrEqual(19);
  });

  it('rejects with the signal reason at once when aborted mid-sleep, and removes its listener', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    const start = systemClock.now();
    const sleeping = systemClock.sleep(600_000, controller.signal);
    setTimeout(() => controller.abort(reason), 5);
    await expect(sleeping).rejects.toBe(reason);
    expect(systemClock.now() - start).toBeLessThan(1_000);
  });

  it('never starts a timer for an already-aborted signal', async () => {
    const reason = new Error('already');
    const spy = vi.spyOn(globalThis, 'setTimeout');
    await expect(systemClock.sleep(10, AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
  });

  it('leaves no abort listener after a completed sleep', async () => {
    const controller = new AbortController();
    const add = vi.spyOn(controller.signal, 'addEventListener');
    const remove = vi.spyOn(controller.signal, 'removeEventListener');
    await systemClock.sleep(1, controller.signal);
    expect(add).toHaveBeenCalledTimes(1);
    expect(remove).toHaveBeenCalledWith('abort', add.mock.calls[0]?.[1]);
  });

  // The one test that fakes the global timers: it is the only way to check the chaining of
  // delays beyond setTimeout's 2^31 - 1 ms limit without waiting 25 days.
  it('chains timers for delays beyond 2^31 - 1 ms instead of firing after 1 ms', async () => {
    vi.useFakeTimers();
    const day = 86_400_000;
    let done = false;
    const sleeping = systemClock.sleep(30 * day).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(24 * day);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(6 * day - 1);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await sleeping;
    expect(done).toBe(true);
  });

  it('unrefs its timers so that a sleep does not hold a Node.js process open', async () => {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    await unrefSystemClock.sleep(1);
    const timer = spy.mock.results[0]?.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    spy.mockRestore();
  });

  it('refuses a sleep that is not a number >= 0 (setTimeout would take NaN as 1 ms)', async () => {
    for (const clock of [systemClock, unrefSystemClock]) {
      for (const bad of [Number.NaN, -1, '10', undefined]) {
        await expect(clock.sleep(bad as number)).rejects.toThrow(
          /^clock\.sleep\(\): expected `ms` to be a number >= 0, got /,
        );
      }
    }
  });
});
