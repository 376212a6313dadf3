import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type HeapEntry, heapAdd, heapRemove, TimerQueue, type Wakeup } from './timer-queue.js';

function entry(name: string, log: string[], onWake?: () => void): Wakeup {
  return {
    dueAt: 0,
    order: 0,
    slot: -1,
    wake() {
      log.push(name);
      onWake?.();
    },
  };
}

// These tests fake the host timers: the queue is the adapter from many wake-ups to one host
// timer, so its contract is stated in terms of setTimeout, clearTimeout and performance.now.
describe('TimerQueue', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('wakes entries in due order, ties in the order added, on one host timer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const q = new TimerQueue(false);
    const log: string[] = [];
    const t0 = q.now();
    q.add(entry('c', log), t0 + 30);
    q.add(entry('a', log), t0 + 10);
    q.add(entry('b', log), t0 + 10);
    q.add(entry('d', log), t0 + 20);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(10);
    expect(log).toEqual(['a', 'b']);
    await vi.advanceTimersByTimeAsync(20);
    expect(log).toEqual(['a', 'b', 'd', 'c']);
    expect(q.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('never wakes an entry before its due time', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const q = new TimerQueue(false);
    const woke: number[] = [];
    const due = q.now() + 100.4;
    q.add({ dueAt: 0, order: 0, slot: -1, wake: () => woke.push(q.now()) }, due);
    await vi.advanceTimersByTimeAsync(100);
    expect(woke).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(woke).toHaveLength(1);
    expect(woke[0]).toBeGreaterThanOrEqual(due);
  });

  it('removes entries anywhere in the heap, and clears the host timer at the end of the turn it empties in', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const q = new TimerQueue(false);
    const log: string[] = [];
    const t0 = q.now();
    const es = Array.from({ length: 50 }, (_, i) => entry(`e${i}`, log));
    es.forEach((e, i) => {
      q.add(e, t0 + ((i * 37) % 50));
    });
    for (let i = 0; i < 50; i += 2) q.remove(es[i] as Wakeup);
    q.remove(es[0] as Wakeup); // removing twice is harmless
    await vi.advanceTimersByTimeAsync(100);
    const expected = es
      .map((_, i) => [i, (i * 37) % 50] as const)
      .filter(([i]) => i % 2 === 1)
      .sort((a, b) => a[1] - b[1])
      .map(([i]) => `e${i}`);
    expect(log).toEqual(expected);
    const lone = entry('lone', log);
    q.add(lone, q.now() + 1_000);
    expect(vi.getTimerCount()).toBe(1);
    q.remove(lone);
    expect(lone.slot).toBe(-1);
    // Back to back within the turn: the armed timer serves the next entry (no clear, no re-arm).
    const next = entry('next', log);
    q.add(next, q.now() + 2_000);
    q.remove(next);
    expect(vi.getTimerCount()).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(vi.getTimerCount()).toBe(0);
    // An entry that came back before the end of the turn keeps the timer.
    q.add(lone, q.now() + 1_000);
    q.remove(lone);
    q.add(next, q.now() + 1_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(vi.getTimerCount()).toBe(1);
    q.remove(next);
    await new Promise((resolve) => setImmediate(resolve));
    expect(vi.getTimerCount()).toBe(0);
  });

  it('entries added while firing wait for the next turn (no starvation by zero delays)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const q = new TimerQueue(false);
    const log: string[] = [];
    let n = 0;
    const again = (): void => {
      if (++n < 5) q.add(entry(`again${n}`, log, again), q.now());
    };
    q.add(entry('first', log, again), q.now());
    await vi.advanceTimersByTimeAsync(0);
    expect(log).toEqual(['first']);
    // A zero-delay host timer fires a tick later (Node.js makes it 1 ms).
    await vi.advanceTimersByTimeAsync(1);
    expect(log).toEqual(['first', 'again1']);
    await vi.advanceTimersByTimeAsync(1);
    expect(log).toEqual(['first', 'again1', 'again2']);
  });

  it('reaches delays beyond 2^31 − 1 ms by re-arming', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const q = new TimerQueue(false);
    const log: string[] = [];
    const day = 86_400_000;
    q.add(entry('late', log), q.now() + 30 * day);
    await vi.advanceTimersByTimeAsync(29 * day);
    expect(log).toEqual([]);
    await vi.advanceTimersByTimeAsync(day);
    expect(log).toEqual(['late']);
  });

  it('an unref queue does not hold a Node.js process open', () => {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    const q = new TimerQueue(true);
    const e = entry('x', []);
    q.add(e, q.now() + 60_000);
    const timer = spy.mock.results.at(-1)?.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    q.remove(e);
    spy.mockRestore();
  });

  it('is unpoisonable: a due time that is not a finite number >= 0 cannot enter, and the others still wake', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const q = new TimerQueue(false);
    const log: string[] = [];
    const t0 = q.now();
    q.add(entry('ok', log), t0 + 10);
    for (const bad of [Number.NaN, Infinity, -Infinity, -1, '5' as unknown as number, undefined as unknown as number]) {
      const e = entry('bad', log);
      expect(() => q.add(e, bad)).toThrow(
        /^TimerQueue\.add\(\): expected a due time that is a finite number >= 0, got /,
      );
      expect(e.slot).toBe(-1);
    }
    expect(q.size).toBe(1);
    await vi.advanceTimersByTimeAsync(10);
    expect(log).toEqual(['ok']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a wake-up that throws cannot stop the others or reach the host: its entry is failed with the error, the rest wake in the same turn', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const q = new TimerQueue(false);
    const log: string[] = [];
    const t0 = q.now();
    const boom = new Error('wake threw');
    const failed: unknown[] = [];
    q.add(
      {
        ...entry('thrower', log, () => {
          throw boom;
        }),
        fail: (error: unknown) => failed.push(error),
      },
      t0 + 5,
    );
    // An entry whose fail throws too: dropped, the host still sees nothing.
    q.add(
      {
        ...entry('double', log, () => {
          throw new Error('again');
        }),
        fail: () => {
          throw new Error('fail threw');
        },
      },
      t0 + 5,
    );
    q.add(entry('later', log), t0 + 5);
    q.add(entry('last', log), t0 + 20);
    // Fake timers rethrow whatever a timer callback throws: nothing may come out.
    await vi.advanceTimersByTimeAsync(5);
    expect(log).toEqual(['thrower', 'double', 'later']);
    expect(failed).toEqual([boom]);
    await vi.advanceTimersByTimeAsync(20);
    expect(log).toEqual(['thrower', 'double', 'later', 'last']);
    expect(q.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('adding an entry that is already queued moves it instead of corrupting the heap', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const q = new TimerQueue(false);
    const log: string[] = [];
    const t0 = q.now();
    const a = entry('a', log);
    q.add(a, t0 + 10);
    q.add(entry('b', log), t0 + 20);
    q.add(a, t0 + 30);
    expect(q.size).toBe(2);
    await vi.advanceTimersByTimeAsync(30);
    expect(log).toEqual(['b', 'a']);
  });
});

describe('TimerQueue: pinned by its mutation survivors', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it('arms the host timer only for an entry earlier than the armed one', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const set = vi.spyOn(globalThis, 'setTimeout');
    const q = new TimerQueue(false);
    const t0 = q.now();
    q.add(entry('a', []), t0 + 20);
    expect(set).toHaveBeenCalledTimes(1);
    q.add(entry('same', []), t0 + 20);
    q.add(entry('later', []), t0 + 30);
    expect(set).toHaveBeenCalledTimes(1);
    q.add(entry('earlier', []), t0 + 10);
    expect(set).toHaveBeenCalledTimes(2);
    expect(set.mock.calls[1]?.[1]).toBe(10);
    expect(vi.getTimerCount()).toBe(1);
  });

  it('after a turn, arms once for an entry a wake-up added, and not again', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const set = vi.spyOn(globalThis, 'setTimeout');
    const q = new TimerQueue(false);
    const log: string[] = [];
    const t0 = q.now();
    q.add(
      entry('first', log, () => q.add(entry('next', log), t0 + 50)),
      t0 + 10,
    );
    q.add(entry('second', log), t0 + 100);
    expect(set).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(10);
    // The wake-up's add armed for t0 + 50; the end of the turn does not arm again.
    expect(set).toHaveBeenCalledTimes(2);
    expect(set.mock.calls[1]?.[1]).toBe(40);
    await vi.advanceTimersByTimeAsync(90);
    expect(log).toEqual(['first', 'next', 'second']);
  });

  it('ties keep the order added after a removal from the top', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const q = new TimerQueue(false);
    const log: string[] = [];
    const due = q.now() + 10;
    const es = ['a', 'b', 'c', 'd', 'e'].map((n) => entry(n, log));
    for (const e of es) q.add(e, due);
    q.remove(es[0] as Wakeup);
    await vi.advanceTimersByTimeAsync(10);
    expect(log).toEqual(['b', 'c', 'd', 'e']);
  });

  it('remove() of an entry queued elsewhere leaves both queues intact', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const a = new TimerQueue(false);
    const b = new TimerQueue(false);
    const log: string[] = [];
    const t0 = a.now();
    const mine = entry('mine', log);
    a.add(mine, t0 + 10);
    b.add(entry('x', log), t0 + 20);
    b.add(entry('y', log), t0 + 30);
    b.remove(mine);
    expect(b.size).toBe(2);
    expect(a.size).toBe(1);
    expect(mine.slot).toBe(0);
    await vi.advanceTimersByTimeAsync(30);
    expect(log).toEqual(['mine', 'x', 'y']);
  });

  it('an unref queue works where timers have no unref() (browsers: a number)', async () => {
    // Mocked only around the one call each, so no other timer in the process is affected.
    const set = vi.spyOn(globalThis, 'setTimeout').mockImplementation((() => 7) as never);
    const q = new TimerQueue(true);
    const e = entry('x', []);
    let armed: unknown[][] = [];
    try {
      q.add(e, q.now() + 60_000);
    } finally {
      armed = [...set.mock.calls];
      set.mockRestore();
    }
    expect(armed).toHaveLength(1);
    const clear = vi.spyOn(globalThis, 'clearTimeout').mockImplementation(() => {});
    let cleared: unknown[][] = [];
    try {
      q.remove(e);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      cleared = [...clear.mock.calls];
      clear.mockRestore();
    }
    expect(cleared).toEqual([[7]]);
  });

  it('where there is no setImmediate (a browser given this build by its bundler), the empty queue is cleared after a zero timeout', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    vi.stubGlobal('setImmediate', undefined);
    try {
      const q = new TimerQueue(false);
      const e = entry('x', []);
      q.add(e, q.now() + 60_000);
      // A timeout() that ended in time, a wait aborted: the entry leaves and the queue empties.
      expect(() => q.remove(e)).not.toThrow();
      expect(vi.getTimerCount()).toBe(2); // the armed timer, and the zero timeout that clears it
      await vi.advanceTimersByTimeAsync(0);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});

describe('TimerQueue: the host timer holds the process only for the ref queue', () => {
  it('a ref queue leaves its host timer ref’d; an unref queue unrefs it', () => {
    // Real host timers (not faked): Node.js Timeout objects report their hold with hasRef().
    const timers: ReturnType<typeof setTimeout>[] = [];
    const original = globalThis.setTimeout;
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((f: () => void, ms?: number) => {
      const t = original(f, ms);
      timers.push(t);
      return t;
    }) as typeof setTimeout);
    try {
      for (const unref of [false, true]) {
        const q = new TimerQueue(unref);
        const e = entry('x', []);
        q.add(e, q.now() + 60_000);
        expect(timers).toHaveLength(1);
        expect((timers[0] as NodeJS.Timeout).hasRef()).toBe(!unref);
        q.remove(e);
        timers.length = 0;
      }
    } finally {
      spy.mockRestore();
    }
  });
});

describe('the deadline heap (heapAdd, heapRemove: the timer queue and the hedging timer share it)', () => {
  it('an entry moved into a removed slot climbs above a larger parent from another subtree', () => {
    const heap: HeapEntry[] = [];
    const entries = [0, 10, 1, 11, 12, 2].map((dueAt, order) => {
      const e: HeapEntry = { dueAt: 0, order: 0, slot: -1 };
      heapAdd(heap, e, dueAt, order);
      return e;
    });
    // [0, 10, 1, 11, 12, 2]: removing 11 (slot 3) moves 2 there, under 10.
    expect(heapRemove(heap, entries[3] as HeapEntry)).toBe(true);
    expect(heap.map((e) => e.dueAt)).toEqual([0, 2, 1, 10, 12]);
    expect(heap.map((e) => e.slot)).toEqual([0, 1, 2, 3, 4]);
  });

  it('after any sequence of adds and removes: every slot right, no entry before its parent, and the top leaves in (dueAt, order) order', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.integer({ min: 0, max: 50 }),
            fc.constant(-1 as const),
            fc.nat({ max: 40 }).map((k) => -2 - k),
          ),
          {
            minLength: 30,
            maxLength: 200,
          },
        ),
        (ops) => {
          const heap: HeapEntry[] = [];
          const all: HeapEntry[] = [];
          let order = 0;
          for (const op of ops) {
            if (op >= 0) {
              const e: HeapEntry = { dueAt: 0, order: 0, slot: -1 };
              all.push(e);
              heapAdd(heap, e, op, order++);
            } else {
              // -1: the top; -2 - k: the k-th entry ever added (queued or not).
              const e = op === -1 ? heap[0] : all[-2 - op];
              if (e !== undefined) {
                const queued = heap.includes(e);
                expect(heapRemove(heap, e)).toBe(queued);
                expect(e.slot).toBe(-1);
              }
            }
            // Every entry knows its slot, and none comes before its parent (the heap's order).
            // (Plain comparisons, one expect per step: an expect per entry made this property take seconds.)
            let wrong = -1;
            for (let i = 0; i < heap.length && wrong < 0; i++) {
              const e = heap[i] as HeapEntry;
              const p = heap[(i - 1) >> 1] as HeapEntry;
              const ordered = i === 0 || p.dueAt < e.dueAt || (p.dueAt === e.dueAt && p.order < e.order);
              if (e.slot !== i || !ordered) wrong = i;
            }
            expect(wrong).toBe(-1);
          }
          const out: HeapEntry[] = [];
          while (heap.length > 0) {
            const top = heap[0] as HeapEntry;
            expect(heapRemove(heap, top)).toBe(true);
            expect(top.slot).toBe(-1);
            out.push(top);
          }
          for (let i = 1; i < out.length; i++) {
            const a = out[i - 1] as HeapEntry;
            const b = out[i] as HeapEntry;
            expect(a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.order < b.order)).toBe(true);
          }
        },
      ),
      { numRuns: 2000 },
    );
    // 2,000 runs take about a second alone and several on a loaded machine: a bound, not a speed check.
  }, 60_000);
});
