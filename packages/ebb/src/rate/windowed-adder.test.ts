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

describe('WindowedAdder at its boundaries', () => {
  it('cuts a range that slices do not divide into floor(range / slices) ms, moving on at exactly that', () => {
    // 1000 ms in 3 slices: 333 ms each, the current one and 2 older ones.
    let now = 0;
    const w = new WindowedAdder(1000, 3, () => now);
    w.add(1);
    const seen: [number, number][] = [];
    const at = (t: number) => {
      now = t;
      seen.push([t, w.sum()]);
    };
    at(332);
    at(333);
    now = 665;
    w.add(2);
    at(665);
    at(666);
    at(998);
    at(999);
    at(1331);
    at(1332);
    expect(seen).toEqual([
      [332, 1],
      [333, 1],
      [665, 3],
      [666, 3],
      [998, 3],
      [999, 2], // the slice holding the 1 (moved on at 333, 666, 999) drops out
      [1331, 2],
      [1332, 0],
    ]);
  });

  it('after an idle gap zeroes only the slices skipped, keeping the one just closed', () => {
    let now = 0;
    const w = new WindowedAdder(1000, 3, () => now);
    w.add(5);
    now = 666; // two slice lengths: the slice holding 5 closes, one empty slice is skipped
    expect(w.sum()).toBe(5);
    now = 998;
    expect(w.sum()).toBe(5);
    now = 999; // one more move: the 5 is the oldest and drops out
    expect(w.sum()).toBe(0);

    const v = new WindowedAdder(1000, 3, () => now);
    now = 1000;
    v.add(5);
    now = 1000 + 4 * 333; // four slice lengths idle: everything goes
    expect(v.sum()).toBe(0);
    v.add(7);
    now += 333;
    expect(v.sum()).toBe(7);
    now += 333;
    expect(v.sum()).toBe(7);
    now += 333;
    expect(v.sum()).toBe(0);
  });

  it('keeps a one-slice-long window for ten slices, slice by slice (rangeMs 10, 10 slices of 1 ms)', () => {
    let now = 0;
    const w = new WindowedAdder(10, 10, () => now);
    const sums: number[] = [];
    for (let t = 0; t < 12; t++) {
      now = t;
      w.add(t + 1);
      sums.push(w.sum());
    }
    // Slice t holds t + 1; the window holds the last ten.
    expect(sums).toEqual([1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 65, 75]);
  });
});
