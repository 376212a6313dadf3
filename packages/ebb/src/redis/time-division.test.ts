// The time division's arithmetic (pure): a member's turns from the fleet's grid, the switch from
// one grid to the next at one instant, and the server clock's offset from the leases.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ServerClock, slotAtOrAfter, turnsOf } from './time-division.js';

const grid = (rate: number, members: number) => ({ rate, members });

describe('slotAtOrAfter', () => {
  it('is exactly phase + j × period, the first at or after t, for whole numbers of ms up to 2^40', () => {
    // (t − phase) / period is then a quotient of integers below 2^41 by one up to 1e6, which is
    // never within a double's rounding of a whole number unless it is one: the slot is exact.
    const ms = fc.integer({ min: -(2 ** 40), max: 2 ** 40 });
    fc.assert(
      fc.property(ms, ms, fc.integer({ min: 1, max: 1e6 }), (t, phase, period) => {
        const x = slotAtOrAfter(t, phase, period);
        expect(Math.abs((x - phase) % period)).toBe(0);
        expect(x).toBeGreaterThanOrEqual(t);
        expect(x - period).toBeLessThan(t);
      }),
    );
  });

  it('is the first instant phase + j × period at or after t, within rounding, for any phase, period and t', () => {
    // The slot a double can hold is the exact one rounded: off by up to half a unit in the last
    // place of the larger of t and phase (0.001 ms at 1e13), which is up to 1e-3 of a 1-ms period.
    // Every comparison allows a millionth of that magnitude, and `j` is taken from the slot.
    fc.assert(
      fc.property(
        fc.double({ min: -1e13, max: 1e13, noNaN: true }),
        fc.double({ min: -1e13, max: 1e13, noNaN: true }),
        fc.double({ min: 1, max: 1e6, noNaN: true }),
        (t, phase, period) => {
          const x = slotAtOrAfter(t, phase, period);
          const tolerance = 1e-6 * Math.max(1, Math.abs(t), Math.abs(phase));
          expect(x).toBeGreaterThanOrEqual(t - tolerance);
          expect(x - period).toBeLessThan(t + tolerance);
          const j = Math.round((x - phase) / period);
          expect(Math.abs(x - (phase + j * period))).toBeLessThanOrEqual(tolerance);
        },
      ),
    );
  });

  it('holds where t and phase are large and close, where the slot cannot be held exactly', () => {
    // Drawn once by the property above (its earlier form asked j itself to be within 1e-6 of a
    // whole number, which rounding at 1e13 cannot give for a period of 14.6 ms).
    const [t, phase, period] = [9999999999999.977, 9999999999999.97, 14.59809075102523];
    const x = slotAtOrAfter(t, phase, period);
    expect(x).toBeGreaterThanOrEqual(t);
    expect(x - period).toBeLessThan(t);
    expect(Math.abs(x - (phase + period))).toBeLessThanOrEqual(2 ** -9); // one unit in the last place at 1e13
  });
});

describe('turnsOf', () => {
  it('n members of one grid take turns 1000 / R apart on the server clock, whatever each one’s offset', () => {
    // 5 members, 20 r/s: each every 250 ms, rank k at k × 50 ms; each on a clock of its own.
    const offsets = [0, 1234.5, -987.25, 5e6, -3.75];
    const sent: number[] = [];
    for (const [rank, offset] of offsets.entries()) {
      const turns = turnsOf({ before: grid(20, 5), after: grid(20, 5), fromMs: -1e300 }, rank, 4, offset);
      expect(turns).toBeDefined();
      let t = 1_000_000 - offset;
      for (let j = 0; j < 20; j++) {
        const turn = (turns as NonNullable<typeof turns>).next(t);
        sent.push(turn + offset); // on the server's clock
        t = turn + 1;
      }
    }
    sent.sort((a, b) => a - b);
    for (let i = 1; i < sent.length; i++) expect((sent[i] as number) - (sent[i - 1] as number)).toBeCloseTo(50, 6);
  });

  it('every member turns to the new grid at the same server instant; a rise reaches all at once', () => {
    // 3 members go from 12 r/s to 15 r/s at server time 10,000.
    const grids = { before: grid(12, 3), after: grid(15, 3), fromMs: 10_000 };
    const sent: number[] = [];
    for (const rank of [0, 1, 2]) {
      // Shares as each member heard them: 4 r/s (before its renewal) or 5 (after): the same turns.
      const turns = turnsOf(grids, rank, rank === 1 ? 4 : 5, 0) as NonNullable<ReturnType<typeof turnsOf>>;
      let t = 8000;
      while (t < 12_000) {
        const turn = turns.next(t);
        sent.push(turn);
        t = turn + 1;
      }
    }
    sent.sort((a, b) => a - b);
    const gaps = sent.slice(1).map((x, i) => x - (sent[i] as number));
    // 83.3 ms apart before, 66.7 after; never closer than the new spacing, across the switch too.
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1000 / 15 - 1e-6);
    expect(gaps.filter((g) => Math.abs(g - 1000 / 12) < 1e-6).length).toBeGreaterThan(20);
    expect(gaps.filter((g) => Math.abs(g - 1000 / 15) < 1e-6).length).toBeGreaterThan(20);
  });

  it('no turns for a member not in the grid, an unlimited grid, a grid of one, or a share above the equal part after the switch', () => {
    const at = (g: ReturnType<typeof grid>, rank = 0, share = 1) =>
      turnsOf({ before: g, after: g, fromMs: -1e300 }, rank, share, 0);
    expect(at(grid(20, 4), 4)).toBeUndefined();
    expect(at(grid(1e300, 4))).toBeUndefined();
    expect(at(grid(20, 1))).toBeUndefined();
    // A share above the part: no turns once the grid holds (the turn is t itself, the period 0).
    expect(at(grid(20, 4), 0, 5.1)?.next(5000)).toBe(5000);
    expect(at(grid(20, 4), 0, 5.1)?.periodMs(5000)).toBe(0);
    expect(at(grid(20, 4), 0, 5)?.periodMs(5000)).toBe(200);
    // Before a switch, a share above the old grid's part still takes the old turns.
    const t = turnsOf({ before: grid(20, 4), after: grid(30, 4), fromMs: 1000 }, 0, 7.5, 0);
    expect(t?.periodMs(0)).toBeCloseTo(200, 9);
    expect(t?.periodMs(1000)).toBeCloseTo(400 / 3, 9);
    expect(t?.lateMs(0)).toBeCloseTo(25, 9);
    expect(t?.lateMs(1000)).toBeCloseTo(50 / 3, 9);
    // Without a grid at t, the turn is t itself (the member paces at its share alone).
    const none = turnsOf({ before: grid(20, 4), after: grid(20, 4), fromMs: 1000 }, 0, 9, 0);
    expect(none?.next(5000)).toBe(5000);
  });
});

describe('ServerClock', () => {
  it('keeps the offset of the shortest round trip among the last 16, within half of it', () => {
    const clock = new ServerClock();
    expect(clock.offset).toBeUndefined();
    // The server runs 1,000 ms ahead; the script runs at a random point of each round trip.
    const samples = [
      [0, 30, 0.4],
      [100, 5, 0.9],
      [200, 0.8, 0.5],
      [300, 12, 0.1],
    ] as const;
    for (const [sent, rtt, at] of samples) clock.add(sent, sent + 1000 + rtt * at, sent + rtt);
    // The 0.8-ms sample: the server answered 0.4 ms after its midpoint's estimate ... within 0.4 ms.
    expect(Math.abs((clock.offset as number) - 1000)).toBeLessThanOrEqual(0.4 + 1e-9);
    expect(clock.uncertaintyMs).toBeCloseTo(0.4, 9);
    // Samples age out: 16 later ones with a 10-ms round trip replace it.
    for (let i = 0; i < 16; i++) clock.add(1000 + i, 1000 + i + 1000 + 5, 1000 + i + 10);
    expect(clock.offset).toBeCloseTo(1000, 9);
    expect(clock.uncertaintyMs).toBe(5);
    // Nonsense is ignored.
    clock.add(5000, Number.NaN, 5001);
    clock.add(5000, 6000, 4999);
    expect(clock.offset).toBeCloseTo(1000, 9);
  });
});
