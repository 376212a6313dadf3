import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Clock, unrefSystemClock } from '../core/clock.js';
import { virtualClock } from '../core/virtual-clock.js';
import { type HedgeDue, HedgeTimer, type HostTimers } from './hedge-timer.js';

/** Host timers on a hand-moved clock: counts every setTimeout, clearTimeout, ref and unref. */
function fakeHost() {
  let t = 0;
  type Handle = { fn: () => void; at: number; refed: boolean; cleared: boolean; ref(): void; unref(): void };
  const handles: Handle[] = [];
  const counts = { set: 0, clear: 0, ref: 0, unref: 0 };
  const host: HostTimers = {
    setTimeout(fn, ms) {
      counts.set++;
      const h: Handle = {
        fn,
        at: t + ms,
        refed: true,
        cleared: false,
        ref() {
          counts.ref++;
          h.refed = true;
        },
        unref() {
          counts.unref++;
          h.refed = false;
        },
      };
      handles.push(h);
      return h;
    },
    clearTimeout(handle) {
      counts.clear++;
      (handle as Handle).cleared = true;
    },
  };
  const clock: Clock = { now: () => t, sleep: () => Promise.reject(new Error('not used')) };
  const live = () => handles.filter((h) => !h.cleared && h.at !== -1);
  /** Moves to `ms`, firing each live timer due by then (a fired timer is spent). */
  const advance = (ms: number): void => {
    for (;;) {
      const due = live()
        .filter((h) => h.at <= ms)
        .sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      t = Math.max(t, due.at);
      due.at = -1;
      due.fn();
    }
    t = ms;
  };
  return { host, clock, counts, live, advance, now: () => t };
}

function entry(log: string[], name: string): HedgeDue {
  return { dueAt: 0, order: 0, slot: -1, hedge: () => log.push(name) };
}

describe('HedgeTimer', () => {
  it('calls that settle before their deadline arm one host timer in all, and unref it between calls', () => {
    const f = fakeHost();
    const timer = new HedgeTimer(f.clock, f.host);
    const log: string[] = [];
    for (let i = 0; i < 1_000; i++) {
      const e = entry(log, `c${i}`);
      timer.add(e, f.now() + 100);
      f.advance(f.now() + 0.05);
      timer.remove(e);
    }
    expect(f.counts).toEqual({ set: 1, clear: 0, ref: 999, unref: 1_000 });
    expect(f.live()).toHaveLength(1);
    expect(f.live()[0]?.refed).toBe(false); // nothing waits: the process may exit
    f.advance(1_000); // it fires once, to no effect
    expect(log).toEqual([]);
    expect(f.live()).toHaveLength(0);
    expect(timer.size).toBe(0);
  });

  it('fires each hedge at its deadline, never before, in deadline order, ties in the order added', () => {
    const f = fakeHost();
    const timer = new HedgeTimer(f.clock, f.host);
    const log: string[] = [];
    timer.add(entry(log, 'a'), 100);
    f.advance(10);
    timer.add(entry(log, 'b'), 50); // earlier than the armed timer: re-armed
    timer.add(entry(log, 'c'), 100);
    timer.add(entry(log, 'd'), 100);
    expect(f.counts.clear).toBe(1);
    f.advance(49.9);
    expect(log).toEqual([]);
    f.advance(50);
    expect(log).toEqual(['b']);
    f.advance(99);
    expect(log).toEqual(['b']);
    f.advance(100);
    expect(log).toEqual(['b', 'a', 'c', 'd']);
    expect(f.live()).toHaveLength(0);
  });

  it('a timer that fires before the first deadline (armed for a call since gone) re-arms for it', () => {
    const f = fakeHost();
    const timer = new HedgeTimer(f.clock, f.host);
    const log: string[] = [];
    const gone = entry(log, 'gone');
    timer.add(gone, 30);
    timer.add(entry(log, 'late'), 80);
    timer.remove(gone);
    f.advance(30);
    expect(log).toEqual([]);
    expect(f.live().map((h) => [h.at, h.refed])).toEqual([[80, true]]);
    f.advance(80);
    expect(log).toEqual(['late']);
  });

  it('a hedge queued while the timer fires waits for the next turn, even when already due', () => {
    const f = fakeHost();
    const timer = new HedgeTimer(f.clock, f.host);
    const log: string[] = [];
    const again: HedgeDue = {
      dueAt: 0,
      order: 0,
      slot: -1,
      hedge() {
        log.push(`again@${f.now()}`);
        if (log.length < 3) timer.add(again, f.now());
      },
    };
    timer.add(again, 10);
    f.advance(10);
    expect(log).toEqual(['again@10', 'again@10', 'again@10']);
    expect(f.counts.set).toBe(3); // one turn each
  });

  it('on the unref system clock the timer never holds the process', () => {
    const f = fakeHost();
    const timer = new HedgeTimer(unrefSystemClock, f.host);
    const e = entry([], 'x');
    timer.add(e, unrefSystemClock.now() + 1_000);
    expect(f.live().map((h) => h.refed)).toEqual([false]);
    timer.remove(e);
    timer.add(e, unrefSystemClock.now() + 1_000);
    expect(f.live().map((h) => h.refed)).toEqual([false]);
    expect(f.counts.ref).toBe(0);
  });

  it('on another clock it sleeps on that clock and leaves no sleep behind when nothing waits', async () => {
    const clock = virtualClock();
    const timer = new HedgeTimer(clock);
    const log: string[] = [];
    const a = entry(log, 'a');
    timer.add(a, 40);
    timer.add(entry(log, 'b'), 20);
    expect(clock.pending).toBe(1);
    await clock.advance(20);
    expect(log).toEqual(['b']);
    timer.remove(a);
    expect(clock.pending).toBe(0);
    await clock.runAll();
    expect(log).toEqual(['b']);
  });

  it('property: any interleaving of adds, removes and time — each hedge once, never early, never after removal, never late', () => {
    type Op = { kind: 'add'; delay: number } | { kind: 'remove'; pick: number } | { kind: 'advance'; ms: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({
        kind: fc.constant('add' as const),
        delay: fc.oneof(fc.integer({ min: 0, max: 200 }), fc.double({ min: 0, max: 200, noNaN: true })),
      }),
      fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('advance' as const), ms: fc.double({ min: 0, max: 120, noNaN: true }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const f = fakeHost();
        const timer = new HedgeTimer(f.clock, f.host);
        const fired = new Map<number, number>();
        const removed = new Set<number>();
        const due: number[] = [];
        const entries: HedgeDue[] = [];
        const check = () => {
          // Promptness: while anything waits, a live, ref()ed host timer is set no later than the first deadline.
          const waiting = entries.filter((_, i) => !removed.has(i) && !fired.has(i));
          if (waiting.length === 0) return;
          const first = Math.min(...waiting.map((e) => e.dueAt));
          const armed = f.live().filter((h) => h.refed);
          expect(armed.length).toBe(1);
          expect(armed[0]?.at).toBeLessThanOrEqual(first + 1);
        };
        for (const o of ops) {
          if (o.kind === 'add') {
            const i = entries.length;
            const e: HedgeDue = {
              dueAt: 0,
              order: 0,
              slot: -1,
              hedge: () => {
                expect(fired.has(i)).toBe(false);
                expect(removed.has(i)).toBe(false);
                expect(f.now()).toBeGreaterThanOrEqual(due[i] as number);
                fired.set(i, f.now());
              },
            };
            entries.push(e);
            due.push(f.now() + o.delay);
            timer.add(e, f.now() + o.delay);
          } else if (o.kind === 'remove' && entries.length > 0) {
            const i = o.pick % entries.length;
            if (!fired.has(i)) removed.add(i);
            timer.remove(entries[i] as HedgeDue);
          } else if (o.kind === 'advance') f.advance(f.now() + o.ms);
          check();
        }
        f.advance(f.now() + 1_000);
        // Every hedge not removed fired, within the 1 ms of the host timer's rounding up.
        entries.forEach((_, i) => {
          if (removed.has(i)) expect(fired.has(i)).toBe(false);
          else expect((fired.get(i) as number) - (due[i] as number)).toBeLessThanOrEqual(1);
        });
        expect(timer.size).toBe(0);
      }),
      { numRuns: 300 },
    );
  });
});
