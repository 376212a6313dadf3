import { describe, expect, it, vi } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { hostQueue } from '../core/host-queues.js';
import { refQueue, TimerQueue, unrefQueue } from '../core/timer-queue.js';
import { retry } from './retry.js';
import { trackHostTimers } from './test-helpers.js';

// The executor as the browser build has it (package.json `exports`, condition `browser`):
// host-queues.ts replaced by host-queues.browser.ts, as tsdown.config.ts's plugin does. Every
// wait is then one host timer, and the guarantees stay: the wait ends when due, never sooner,
// an abort cuts it short and leaves no timer, `unref` unrefs it in Node.js.
vi.mock('../core/host-queues.js', () => import('../core/host-queues.browser.js'));

/** Lets the executor reach its wait: the failure's handlers run in a few turns. */
const turns = async (n = 3) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('the browser build: no process-wide timer queue', () => {
  it('the host queue is not the process-wide timer queue', () => {
    expect(hostQueue()).not.toBeInstanceOf(TimerQueue);
    expect(hostQueue(true)).not.toBeInstanceOf(TimerQueue);
    expect(hostQueue(false)).toBe(hostQueue());
  });

  it('a wake-up never comes before its due time, and never within add()', async () => {
    const queue = hostQueue();
    const woke: number[] = [];
    const due = queue.now() + 30;
    let done: () => void = () => {};
    const entry = {
      slot: -1,
      dueAt: 0,
      order: 0,
      wake: () => {
        woke.push(queue.now());
        done();
      },
    };
    queue.add(entry, due);
    expect(entry.slot).not.toBe(-1);
    expect(woke).toEqual([]); // never within add()
    await new Promise<void>((resolve) => {
      done = resolve;
    });
    expect(woke).toHaveLength(1);
    expect(woke[0]).toBeGreaterThanOrEqual(due);
    expect(entry.slot).toBe(-1);
  });

  it("a wake-up that throws goes to the entry's fail(), never to the host timer's callback", async () => {
    const queue = hostQueue();
    const reached: unknown[] = [];
    const onUncaught = (error: unknown) => reached.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      const failed: unknown[] = [];
      const bug = new Error('wake bug');
      let done: () => void = () => {};
      const entry = {
        slot: -1,
        dueAt: 0,
        order: 0,
        wake: () => {
          throw bug;
        },
        fail: (error: unknown) => {
          failed.push(error);
          done();
        },
      };
      // An entry whose fail() throws too: the host still sees nothing.
      const deaf = {
        slot: -1,
        dueAt: 0,
        order: 0,
        wake: () => {
          throw new Error('wake bug 2');
        },
        fail: () => {
          throw new Error('fail bug');
        },
      };
      queue.add(deaf, queue.now());
      queue.add(entry, queue.now() + 5);
      await new Promise<void>((resolve) => {
        done = resolve;
      });
      await turns();
      expect(failed).toEqual([bug]);
      expect([entry.slot, deaf.slot]).toEqual([-1, -1]);
      expect(reached).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it('a wait is one host timer, not a queue entry; it fires and the next attempt runs', async () => {
    const timers = trackHostTimers();
    try {
      let calls = 0;
      const p = retry(
        () => {
          calls++;
          return calls < 3 ? Promise.reject(new Error(`attempt ${calls}`)) : 'third';
        },
        { backoff: constant({ delayMs: 0, maxAttempts: 3, jitter: noJitter }) },
      );
      await turns();
      expect(refQueue.size).toBe(0);
      expect(await p).toBe('third');
      expect(calls).toBe(3);
      expect(timers.live).toBe(0);
    } finally {
      timers.restore();
    }
  });

  it('an abort cuts a one-hour wait short at once and leaves no timer', async () => {
    const timers = trackHostTimers();
    try {
      const controller = new AbortController();
      const p = retry(() => Promise.reject(new Error('down')), {
        signal: controller.signal,
        backoff: constant({ delayMs: 3_600_000, maxAttempts: 2, jitter: noJitter }),
      }).catch((error: unknown) => error);
      await turns();
      expect(timers.live).toBe(1);
      expect(refQueue.size).toBe(0);
      const reason = new Error('stop');
      controller.abort(reason);
      expect(await p).toBe(reason);
      expect(timers.live).toBe(0);
    } finally {
      timers.restore();
    }
  });

  it('unref: the wait’s host timer does not hold the process (Node.js)', async () => {
    const handles: ReturnType<typeof setTimeout>[] = [];
    const real = globalThis.setTimeout;
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((callback: () => void, ms?: number) => {
      const handle = real(callback, ms);
      handles.push(handle);
      return handle;
    }) as typeof setTimeout);
    const controller = new AbortController();
    try {
      const p = retry(() => Promise.reject(new Error('down')), {
        unref: true,
        signal: controller.signal,
        backoff: constant({ delayMs: 3_600_000, maxAttempts: 2, jitter: noJitter }),
      }).catch((error: unknown) => error);
      await turns();
      const waits = handles.filter((h) => !h.hasRef());
      expect(waits).toHaveLength(1);
      expect(unrefQueue.size).toBe(0);
      controller.abort(new Error('stop'));
      await p;
    } finally {
      spy.mockRestore();
    }
  });
});
