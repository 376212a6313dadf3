import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clockOption, newTimeline, rebase, systemClock, unrefSystemClock } from './clock.js';
import { hostQueue } from './host-queues.js';
import { refQueue, unrefQueue } from './timer-queue.js';

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

describe('systemClock, exactly: zero sleeps, timer holds, cleanup on abort, messages', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a zero sleep resolves, with or without a signal', async () => {
    await expect(systemClock.sleep(0)).resolves.toBeUndefined();
    await expect(systemClock.sleep(0, new AbortController().signal)).resolves.toBeUndefined();
  });

  it('the system clock’s timers hold the process, the unref clock’s do not, with or without a signal', async () => {
    for (const [clock, held] of [
      [systemClock, true],
      [unrefSystemClock, false],
    ] as const) {
      for (const signal of [undefined, new AbortController().signal]) {
        const spy = vi.spyOn(globalThis, 'setTimeout');
        try {
          await clock.sleep(1, signal);
          const timer = spy.mock.results[0]?.value as NodeJS.Timeout;
          expect(timer.hasRef()).toBe(held);
        } finally {
          spy.mockRestore();
        }
      }
    }
  });

  it('an abort clears the pending timer at once (no host timer left to fire later)', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const sleeping = systemClock.sleep(60_000, controller.signal);
    expect(vi.getTimerCount()).toBe(1);
    controller.abort(new Error('stop'));
    await expect(sleeping).rejects.toThrow('stop');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a chained sleep beyond 2^31 - 1 ms without a signal ends on time, and aborts mid-chain', async () => {
    vi.useFakeTimers();
    let done = false;
    void systemClock.sleep(2_147_483_647 + 5).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(2_147_483_647 + 4);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    const controller = new AbortController();
    const sleeping = systemClock.sleep(3 * 2_147_483_647, controller.signal);
    await vi.advanceTimersByTimeAsync(2_147_483_647 + 1);
    controller.abort('later');
    await expect(sleeping).rejects.toBe('later');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a sleep of exactly 2^31 - 1 ms is one timer', async () => {
    vi.useFakeTimers();
    let done = false;
    void systemClock.sleep(2_147_483_647).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(2_147_483_646);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toBe(true);
  });

  it('the message of a bad sleep shows a number, or the type of anything else', async () => {
    for (const [ms, shown] of [
      [Number.NaN, 'NaN'],
      [-1, '-1'],
      [-Infinity, '-Infinity'],
      ['10', 'string'],
      [undefined, 'undefined'],
      [null, 'object'],
    ] as const) {
      const error = await systemClock.sleep(ms as unknown as number).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RangeError);
      expect((error as Error).message).toBe(`clock.sleep(): expected \`ms\` to be a number >= 0, got ${shown}.`);
    }
  });
});

describe('hostQueue and clockOption', () => {
  it('the host queue is the process-wide timer queue, the one whose timer does not hold the process with unref', () => {
    expect(hostQueue()).toBe(refQueue);
    expect(hostQueue(false)).toBe(refQueue);
    expect(hostQueue(true)).toBe(unrefQueue);
  });

  it('clockOption: the system clock when omitted, the system clocks as they are, a TypeError naming anything but a Clock', () => {
    expect(clockOption('f()', undefined)).toBe(systemClock);
    expect(clockOption('f()', systemClock)).toBe(systemClock);
    expect(clockOption('f()', unrefSystemClock)).toBe(unrefSystemClock);
    for (const [bad, shown] of [
      [null, 'null'],
      [5, '5'],
      [{ now: () => 0 }, 'an object'],
      [{ sleep: () => Promise.resolve() }, 'an object'],
      [{ now: 0, sleep: () => Promise.resolve() }, 'an object'],
      [Object.assign(() => 0, { now: () => 0, sleep: () => Promise.resolve() }), 'a function'],
    ] as const) {
      expect(() => clockOption('f()', bad)).toThrow(
        `f(): expected \`clock\` to be a Clock { now(), sleep(ms, signal) }, got ${shown}.`,
      );
    }
  });
});

describe("clockOption: a clock of the user's, as the mechanisms read it", () => {
  it('reads a clock set back as going on from where it was; passes other readings, throws and sleeps through', async () => {
    const readings: unknown[] = [1_000, 1_010, 10, 20, Number.NaN, 'x', 30];
    let i = 0;
    const slept: number[] = [];
    const user = {
      now: () => readings[i++] as number,
      sleep: (ms: number) => {
        slept.push(ms);
        return Promise.resolve();
      },
    };
    const clock = clockOption('f()', user);
    expect(readings.map(() => clock.now())).toEqual([1_000, 1_010, 1_010, 1_020, Number.NaN, 'x', 1_030]);
    await clock.sleep(5);
    expect(slept).toEqual([5]);
    const broken = clockOption('f()', {
      now: () => {
        throw new Error('clock broke');
      },
      sleep: () => Promise.resolve(),
    });
    expect(() => broken.now()).toThrow('clock broke');
  });
});

describe('rebase: a clock set back goes on from where it was', () => {
  it("counts a step back as no time passing, then the clock's own progress (exact sequence)", () => {
    const timeline = newTimeline();
    expect([100, 150, 50, 60, 300, 300].map((t) => rebase(timeline, t))).toEqual([100, 150, 150, 160, 400, 400]);
    expect(timeline.offset).toBe(100);
  });

  it('gives out times that never go back and advance by exactly what the clock advanced, a step back counting 0', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1e12, max: 1e12, noNaN: true }), { minLength: 1, maxLength: 50 }),
        (readings) => {
          const timeline = newTimeline();
          const times = readings.map((t) => rebase(timeline, t));
          // The first reading as it is (−0 as 0: the timeline adds its offset, 0, to it).
          expect(times[0]).toBe((readings[0] as number) + 0);
          for (let i = 1; i < readings.length; i++) {
            const advanced = (times[i] as number) - (times[i - 1] as number);
            const step = (readings[i] as number) - (readings[i - 1] as number);
            expect(advanced).toBeGreaterThanOrEqual(0);
            // Exact up to the rounding of adding the offset.
            expect(advanced).toBeCloseTo(Math.max(0, step), 0);
          }
        },
      ),
      // −0 first: found by a run of this property.
      { examples: [[[-0, 0]]] },
    );
  });
});
