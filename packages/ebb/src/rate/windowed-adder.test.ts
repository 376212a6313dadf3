import { describe, expect, it } from 'vitest';
import { WindowedAdder } from './windowed-adder.js';

describe('WindowedAdder', () => {
  it('keeps the current slice and nine older ones of range / 10', () => {
    let now = 0;
    const w = new WindowedAdder(1000, 10, () => now);
    for (let t = 0; t < 1000; t += 100) {
      now = t;
      w.add(1);
    }
    expect(w.sum()).toBe(10);
    now = 1000; // the slice added at 0 drops out once ten slices have passed
    expect(w.sum()).toBe(9);
    now = 1950;
    expect(w.sum()).toBe(0);
  });

  it('zeroes the slices skipped while idle, counting from the last move (Finagle’s old = now)', () => {
    let now = 0;
    const w = new WindowedAdder(10_000, 10, () => now);
    w.add(5);
    now = 8999; // 7 slices skipped: the value is kept, and slices now start at 8999
    expect(w.sum()).toBe(5);
    now = 10_000; // only one slice since 8999: still kept
    expect(w.sum()).toBe(5);
    now = 17_999; // eight more: dropped
    expect(w.sum()).toBe(0);
  });

  it('adds negative amounts (withdrawals) that expire the same way', () => {
    let now = 0;
    const w = new WindowedAdder(1000, 10, () => now);
    w.add(10);
    now = 500;
    w.add(-4);
    expect(w.sum()).toBe(6);
    now = 1000;
    expect(w.sum()).toBe(-4);
    now = 1500;
    expect(w.sum()).toBe(0);
  });
});
