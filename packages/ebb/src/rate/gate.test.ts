import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import { Gate } from './gate.js';

/** A gate whose policy lets one request through every `intervalMs`, numbering the grants. */
function spaced(intervalMs: number, classes = 1) {
  const clock = virtualClock();
  let next = 0;
  let granted = 0;
  const gate = new Gate(clock, classes, {
    waitMs: (now) => next - now,
    grant: (now) => {
      next = Math.max(next, now) + intervalMs;
      return ++granted;
    },
  });
  return { clock, gate };
}

describe('Gate', () => {
  it('grants at once when nobody waits, and queues otherwise, one wake-up at a time', async () => {
    const { clock, gate } = spaced(10);
    expect(gate.acquire(0, undefined)).toBe(1);
    const second = gate.acquire(0, undefined);
    expect(second).toBeInstanceOf(Promise);
    gate.acquire(0, undefined);
    expect(gate.waiting).toBe(2);
    expect(clock.pending).toBe(1);
    await clock.runAll();
    expect(await second).toBe(2);
    expect(gate.waiting).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('keeps FIFO order over thousands of waiters (its queues compact as they drain)', async () => {
    const { clock, gate } = spaced(1);
    gate.acquire(0, undefined);
    const order: number[] = [];
    const all: Promise<unknown>[] = [];
    for (let i = 0; i < 3000; i++) {
      all.push((gate.acquire(0, undefined) as Promise<unknown>).then(() => order.push(i)));
      // Latecomers join while the queue drains.
      if (i === 1500) await clock.advance(1200);
    }
    await clock.runAll();
    await Promise.all(all);
    expect(order).toEqual(Array.from({ length: 3000 }, (_, i) => i));
  });

  it('serves class 0 before class 1 whatever the order of arrival', async () => {
    const { clock, gate } = spaced(5, 2);
    gate.acquire(1, undefined);
    const order: string[] = [];
    const all = ['b1', 'a1', 'b2', 'a2'].map((name) =>
      (gate.acquire(name[0] === 'a' ? 0 : 1, undefined) as Promise<unknown>).then(() => order.push(name)),
    );
    await clock.runAll();
    await Promise.all(all);
    expect(order).toEqual(['a1', 'a2', 'b1', 'b2']);
  });

  it('re-times its wake-up when poked after the policy changed', async () => {
    const clock = virtualClock();
    let next = 1000;
    const gate = new Gate(clock, 1, { waitMs: (now) => next - now, grant: () => 'go' });
    const p = gate.acquire(0, undefined) as Promise<unknown>;
    let at = -1;
    p.then(() => {
      at = clock.now();
    });
    await clock.advance(100);
    next = 200;
    gate.poke();
    await clock.runAll();
    expect(at).toBe(200);
  });
});

/** A gate over a policy that logs every grant as [time, woken] and lets one through every `intervalMs`. */
function logged(intervalMs: number, classes = 1) {
  const clock = virtualClock();
  let next = 0;
  const grants: [number, boolean][] = [];
  const sleeps: number[] = [];
  const watched = {
    now: () => clock.now(),
    sleep: (ms: number, signal?: AbortSignal) => {
      sleeps.push(ms);
      return clock.sleep(ms, signal);
    },
  };
  const gate = new Gate(watched, classes, {
    waitMs: (now) => next - now,
    grant: (now, woken) => {
      next = Math.max(next, now) + intervalMs;
      grants.push([now, woken]);
      return grants.length;
    },
  });
  return { clock, gate, grants, sleeps };
}

describe('Gate: waits, wake-ups and aborts', () => {
  it('tells the policy whether a request went at once or on the wake-up, at the wake-up’s time', async () => {
    const { clock, gate, grants, sleeps } = logged(10);
    expect(gate.acquire(0, undefined)).toBe(1);
    const p = gate.acquire(0, undefined) as Promise<unknown>;
    const q = gate.acquire(0, undefined) as Promise<unknown>;
    await clock.runAll();
    expect([await p, await q]).toEqual([2, 3]);
    expect(grants).toEqual([
      [0, false],
      [10, true],
      [20, true],
    ]);
    // One sleep to the head's turn at a time: 10 ms, then 10 ms more.
    expect(sleeps).toEqual([10, 10]);
  });

  it('rejects an already-aborted signal at once, queueing nothing and arming nothing', async () => {
    const { clock, gate, grants } = logged(10);
    const controller = new AbortController();
    const reason = new Error('gone');
    controller.abort(reason);
    await expect(gate.acquire(0, controller.signal) as Promise<unknown>).rejects.toBe(reason);
    expect(gate.waiting).toBe(0);
    expect(clock.pending).toBe(0);
    expect(grants).toEqual([]);
    // The next request still goes at once.
    expect(gate.acquire(0, undefined)).toBe(1);
  });

  it('a shutdown aborting thousands of waiters, the head and every other one: the rest go in order, each grant at its turn, none to a waiter that left', async () => {
    const { clock, gate, grants } = logged(1, 2);
    gate.acquire(0, undefined);
    const n = 3000;
    const controllers = Array.from({ length: n }, () => new AbortController());
    const served: number[] = [];
    const outcomes = controllers.map((c, i) =>
      (gate.acquire(i % 3 === 0 ? 0 : 1, c.signal) as Promise<unknown>).then(
        () => served.push(i),
        () => undefined,
      ),
    );
    // The first waiter of each class, then every even one, leave before anyone is served.
    for (let i = 0; i < n; i++) if (i < 2 || i % 2 === 0) (controllers[i] as AbortController).abort();
    const stay = Array.from({ length: n }, (_, i) => i).filter((i) => !(i < 2 || i % 2 === 0));
    expect(gate.waiting).toBe(stay.length);
    await clock.runAll();
    await Promise.all(outcomes);
    // Class 0 (every third) first, then class 1, each in its order of arrival.
    expect(served).toEqual([...stay.filter((i) => i % 3 === 0), ...stay.filter((i) => i % 3 !== 0)]);
    expect(grants.length).toBe(1 + stay.length);
    expect(gate.waiting).toBe(0);
    // Once all left, the queues hold no one: the next request goes at once.
    const last = new AbortController();
    const p = gate.acquire(1, last.signal) as Promise<unknown>;
    last.abort();
    await p.catch(() => undefined);
    expect(gate.waiting).toBe(0);
    await clock.advance(1);
    const before = grants.length;
    expect(gate.acquire(0, undefined)).toBe(before + 1);
  });

  it('an abort takes the waiter out of its place: the others keep their order, the timer stays for them', async () => {
    const { clock, gate, grants } = logged(10);
    gate.acquire(0, undefined);
    const controllers = [0, 1, 2, 3].map(() => new AbortController());
    const order: number[] = [];
    const outcomes = controllers.map((c, i) =>
      (gate.acquire(0, c.signal) as Promise<unknown>).then(
        () => order.push(i),
        (reason: unknown) => reason,
      ),
    );
    expect(gate.waiting).toBe(4);
    const reason = new Error('second one gives up');
    (controllers[1] as AbortController).abort(reason);
    expect(await outcomes[1]).toBe(reason);
    expect(gate.waiting).toBe(3);
    expect(clock.pending).toBe(1);
    await clock.runAll();
    await Promise.all(outcomes);
    expect(order).toEqual([0, 2, 3]);
    expect(grants.map(([t]) => t)).toEqual([0, 10, 20, 30]);
    // An abort after the grant changes nothing.
    (controllers[0] as AbortController).abort(new Error('late'));
    expect(gate.waiting).toBe(0);
    await clock.advance(10);
    expect(gate.acquire(0, undefined)).toBe(5);
  });

  it('aborting the only waiter leaves no timer; aborting one of two keeps it', async () => {
    const { clock, gate } = logged(100);
    gate.acquire(0, undefined);
    const a = new AbortController();
    const b = new AbortController();
    const pa = (gate.acquire(0, a.signal) as Promise<unknown>).catch(() => 'a aborted');
    const pb = (gate.acquire(0, b.signal) as Promise<unknown>).catch(() => 'b aborted');
    a.abort();
    expect(await pa).toBe('a aborted');
    expect(clock.pending).toBe(1);
    b.abort();
    expect(await pb).toBe('b aborted');
    expect(gate.waiting).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('keeps one wake-up for the earliest turn: a later waiter does not re-arm it, a poke to an earlier turn does', async () => {
    const clock = virtualClock();
    let next = 50;
    const sleeps: number[] = [];
    const gate = new Gate(
      {
        now: () => clock.now(),
        sleep: (ms, signal) => {
          sleeps.push(ms);
          return clock.sleep(ms, signal);
        },
      },
      1,
      {
        waitMs: (now) => next - now,
        grant: (now) => {
          next = now + 50;
          return now;
        },
      },
    );
    const first = gate.acquire(0, undefined) as Promise<unknown>;
    const second = gate.acquire(0, undefined) as Promise<unknown>;
    expect(sleeps).toEqual([50]);
    expect(clock.pending).toBe(1);
    await clock.advance(10);
    next = 30; // the policy now lets the head go at 30
    gate.poke();
    expect(sleeps).toEqual([50, 20]);
    expect(clock.pending).toBe(1);
    await clock.runAll();
    expect([await first, await second]).toEqual([30, 80]);
  });

  it('a poke grants every waiter the policy now allows, in order, and with nobody waiting does nothing', async () => {
    const clock = virtualClock();
    let open = false;
    const grants: number[] = [];
    const gate = new Gate(clock, 2, {
      waitMs: () => (open ? 0 : 1000),
      grant: (_now, woken) => {
        grants.push(woken ? 1 : 0);
        return grants.length;
      },
    });
    gate.poke();
    expect(grants).toEqual([]);
    const all = [1, 0, 1, 0].map((cls) => gate.acquire(cls, undefined) as Promise<unknown>);
    expect(gate.waiting).toBe(4);
    open = true;
    gate.poke();
    expect(gate.waiting).toBe(0);
    expect(clock.pending).toBe(0);
    // Class 0 first: the 2nd and 4th requests got tickets 1 and 2.
    expect(await Promise.all(all)).toEqual([3, 1, 4, 2]);
    expect(grants).toEqual([1, 1, 1, 1]);
  });

  it('stays FIFO when waiters abort while its queue compacts (over 1024 served)', async () => {
    const { clock, gate } = logged(1);
    gate.acquire(0, undefined);
    const order: number[] = [];
    const controllers: AbortController[] = [];
    const all: Promise<unknown>[] = [];
    for (let i = 0; i < 2100; i++) {
      const c = new AbortController();
      controllers.push(c);
      all.push(
        (gate.acquire(0, c.signal) as Promise<unknown>).then(
          () => order.push(i),
          () => undefined,
        ),
      );
    }
    await clock.advance(1100); // about 1100 served: the queue has compacted once
    for (let i = 1500; i < 2100; i += 7) (controllers[i] as AbortController).abort();
    await clock.runAll();
    await Promise.all(all);
    const expected = Array.from({ length: 2100 }, (_, i) => i).filter((i) => i < 1500 || (i - 1500) % 7 !== 0);
    expect(order).toEqual(expected);
    expect(gate.waiting).toBe(0);
    expect(clock.pending).toBe(0);
  });
});

describe('Gate: listeners, the head’s abort and a policy that opened without a poke', () => {
  it('leaves no abort listener on a signal, whether the wait was granted or aborted', async () => {
    const { clock, gate } = logged(10);
    gate.acquire(0, undefined);
    const shared = new AbortController();
    const granted = gate.acquire(0, shared.signal) as Promise<unknown>;
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
    await clock.runAll();
    await granted;
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    const aborted = new AbortController();
    const p = (gate.acquire(0, aborted.signal) as Promise<unknown>).catch(() => 'aborted');
    aborted.abort();
    expect(await p).toBe('aborted');
    expect(getEventListeners(aborted.signal, 'abort')).toHaveLength(0);
  });

  it('an abort of the head waiter gives its turn to the next one, and no grant to the aborted one', async () => {
    const { clock, gate, grants } = logged(10);
    gate.acquire(0, undefined);
    const head = new AbortController();
    const first = (gate.acquire(0, head.signal) as Promise<unknown>).catch(() => 'aborted');
    const second = gate.acquire(0, undefined) as Promise<unknown>;
    head.abort();
    expect(await first).toBe('aborted');
    expect(gate.waiting).toBe(1);
    await clock.runAll();
    expect(await second).toBe(2);
    expect(grants).toEqual([
      [0, false],
      [10, true],
    ]);
    expect(gate.waiting).toBe(0);
  });

  it('a newcomer finding the policy already open (no poke) wakes the queue at once, not later', async () => {
    const clock = virtualClock();
    let next = 1000;
    const gate = new Gate(clock, 1, {
      waitMs: (now) => next - now,
      grant: (now) => {
        next = now; // everyone may go now
        return now;
      },
    });
    const first = gate.acquire(0, undefined) as Promise<unknown>;
    await clock.advance(100);
    next = 50; // the policy opened at 50 ms, nobody poked the gate
    const second = gate.acquire(0, undefined) as Promise<unknown>;
    await clock.advance(0);
    expect(await first).toBe(100);
    expect(await second).toBe(100);
    expect(clock.pending).toBe(0);
  });
});
