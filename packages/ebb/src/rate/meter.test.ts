// The delivered-rate meter (rate/meter.ts) that adaptiveRate and a sharedRate member both read:
// events in 100-ms slots over 3 s, read over the last second, longer until the span holds enough.
import { describe, expect, it } from 'vitest';
import { SlotCounter } from './meter.js';

/** A counter holding one event every `everyMs` from `from` to before `to`. */
function counted(from: number, to: number, everyMs: number): SlotCounter {
  const c = new SlotCounter();
  for (let t = from; t < to; t += everyMs) c.add(t);
  return c;
}

describe('SlotCounter.span: the span a rate is read over', () => {
  it('50 r/s holds 10 events within the last second: the span is one second, 11 slots', () => {
    const c = counted(0, 10_000, 20);
    // At 10 050 ms: slots 100 (empty so far) back to 90, which starts 1 050 ms before: 10 × 5 events.
    expect(c.span(10_050, 0, 10)).toEqual({ count: 50, covered: 1050, spanMs: 1050, slots: 11 });
  });

  it('2 r/s lengthens the span until it holds 10 events, and stops at 3 s', () => {
    const c = counted(0, 10_000, 500);
    // Six events over the last 3 s (9 999 − 7 000 + 1 slot): the whole ring, 30 slots.
    expect(c.span(9_999, 0, 10)).toEqual({ count: 6, covered: 2999, spanMs: 2999, slots: 30 });
    expect(c.rate(9_999, 0, 10, 1000)).toBeCloseTo(6000 / 2999, 12);
  });

  it('never reaches before `since`; under a slot covered, a rate divides by one slot', () => {
    const c = counted(5_000, 5_500, 25);
    expect(c.span(5_500, 5_000, 10)).toEqual({ count: 20, covered: 500, spanMs: 500, slots: 6 });
    expect(c.rate(5_500, 5_000, 10, 1000)).toBe(-1);
    expect(c.rate(5_500, 5_000, 10, 0)).toBe(40);
    expect(counted(5_000, 5_030, 25).span(5_030, 5_000, 10)).toEqual({ count: 2, covered: 30, spanMs: 100, slots: 1 });
  });

  it('time a server asked to pause is left out of the time covered, and the span grows to make up for it', () => {
    const c = counted(0, 10_000, 100);
    const paused = (from: number, to: number) => Math.max(0, Math.min(to, 9_800) - Math.max(from, 9_300));
    // 500 ms paused: a second of unpaused time reaches back to 8 500 ms (15 slots, 15 events).
    expect(c.span(10_000, 0, 10, paused)).toEqual({ count: 15, covered: 1000, spanMs: 1000, slots: 16 });
  });

  it('marked counts the slots, among the last n, that hold an event (throttles in half the span: refused)', () => {
    const c = new SlotCounter();
    for (const t of [9_950, 9_960, 9_750, 9_000]) c.add(t);
    expect(c.marked(9_999, 1)).toBe(1);
    expect(c.marked(9_999, 3)).toBe(2);
    expect(c.marked(9_999, 9)).toBe(2);
    expect(c.marked(9_999, 10)).toBe(3);
    // 3 s later, the ring holds none of them (slot 129 reuses slot 99's entry).
    c.add(12_950);
    expect(c.marked(12_999, 30)).toBe(1);
  });
});
