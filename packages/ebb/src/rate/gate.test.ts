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
