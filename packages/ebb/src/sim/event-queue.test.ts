import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventQueue } from './event-queue.js';

describe('EventQueue', () => {
  it('pops in order of time, ties by id, whatever the order of pushes', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 1, maxLength: 64 }), (times) => {
        const q = new EventQueue(times.length);
        for (const [id, t] of times.entries()) q.push(t, id);
        const expected = times.map((t, id) => [t, id] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
        const got: (readonly [number, number])[] = [];
        while (q.size > 0) {
          const t = q.peekTime();
          got.push([t, q.pop()]);
        }
        expect(got).toEqual(expected);
        expect(q.pop()).toBe(-1);
        expect(q.peekTime()).toBe(Infinity);
      }),
    );
  });

  it('interleaves pushes and pops like a sorted list', () => {
    const q = new EventQueue(3);
    q.push(5, 0);
    q.push(1, 1);
    expect(q.pop()).toBe(1);
    q.push(3, 1);
    q.push(3, 2);
    expect([q.pop(), q.pop(), q.pop()]).toEqual([1, 2, 0]);
    q.push(7, 0);
    q.clear();
    expect(q.size).toBe(0);
  });
});
