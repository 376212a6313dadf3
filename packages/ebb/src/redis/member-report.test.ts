// What a sharedRate member reports of itself: its sent rate is counted over 10 grants at least
// (up to 3 s), so a member sending a couple of requests a second reports its rate, not a count of
// one or two; the first second (a blind first cut's measure) is the span since its first grant.
import { describe, expect, it } from 'vitest';
import { SlotCounter } from '../rate/meter.js';
import { memberReport } from './member-report.js';

describe('memberReport', () => {
  it('a member sending 1.5 r/s reports 1.5 within 0.25 at every phase (a one-second count says 1 or 2)', () => {
    for (let phase = 0; phase < 667; phase += 37) {
      const granted = new SlotCounter();
      const delivered = new SlotCounter();
      const throttled = new SlotCounter();
      const start = 1_000_000 + phase;
      for (let t = start; t < start + 10_000; t += 1000 / 1.5) {
        granted.add(t);
        delivered.add(t);
      }
      const now = start + 10_000;
      const { used, accepted } = memberReport(granted, delivered, throttled, now, start);
      expect(Math.abs(used - 1.5)).toBeLessThanOrEqual(0.25);
      expect(Math.abs(accepted - 1.5)).toBeLessThanOrEqual(0.25);
    }
  });

  it('in its first second, the rate since its first grant (what a blind first cut reads)', () => {
    const granted = new SlotCounter();
    const start = 5000;
    for (let i = 0; i < 20; i++) granted.add(start + i * 25); // 40 r/s for half a second
    const { used, accepted } = memberReport(granted, new SlotCounter(), new SlotCounter(), start + 500, start);
    expect(used).toBeCloseTo(40, 6);
    expect(accepted).toBe(-1); // under a second covered: not measured
  });
});
