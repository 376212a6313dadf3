import { describe, expect, it } from 'vitest';
import { describePolicy as schedule } from '../backoff/describe.js';
import { slotted } from '../backoff/slotted.js';
import { bianchi } from './bianchi.js';
import { dcfBackoff, simulateWifi } from './wifi.js';

describe('simulateWifi against Bianchi', () => {
  for (const [cwMin, stages] of [
    [31, 5],
    [15, 6],
  ] as const) {
    it(`CWmin ${cwMin}, m = ${stages}: p within 3 %, τ within 5 %, throughput and delay within 2 %`, () => {
      for (const stations of [5, 10, 20, 50]) {
        const sim = simulateWifi({ stations, cwMin, stages, slots: 1_000_000, seed: 42 });
        const model = bianchi({ stations, cwMin, stages });
        const rel = (a: number, b: number) => Math.abs(a / b - 1);
        expect(rel(sim.collisionProbability, model.collisionProbability), `p at n = ${stations}`).toBeLessThan(0.03);
        expect(rel(sim.transmitProbability, model.transmitProbability), `τ at n = ${stations}`).toBeLessThan(0.05);
        expect(rel(sim.throughput, model.throughput), `S at n = ${stations}`).toBeLessThan(0.02);
        expect(rel(sim.meanDelayMs, model.meanDelayMs), `delay at n = ${stations}`).toBeLessThan(0.02);
        expect(sim.framesDropped).toBe(0);
      }
    }, 30_000); // four runs of a million slots: seconds on a busy machine
  }
});

describe('simulateWifi', () => {
  it('is deterministic for a seed, and the seed matters', () => {
    const a = simulateWifi({ stations: 8, slots: 50_000, seed: 5 });
    expect(simulateWifi({ stations: 8, slots: 50_000, seed: 5 })).toEqual(a);
    expect(simulateWifi({ stations: 8, slots: 50_000, seed: 6 }).transmissions).not.toBe(a.transmissions);
  });

  it('counts every slot once: empty, success or collision', () => {
    const r = simulateWifi({ stations: 12, slots: 200_000, seed: 1 });
    const busy = Math.round(r.busyProbability * r.slots);
    expect(busy).toBe(r.successes + r.collisions);
    expect(r.transmissions).toBeGreaterThanOrEqual(r.successes + 2 * r.collisions);
    expect(r.transmitProbability).toBe(r.transmissions / (12 * 200_000));
  });

  it('drops frames at the retry limit, and takes another policy', () => {
    const limited = simulateWifi({ stations: 30, cwMin: 7, stages: 3, retryLimit: 2, slots: 100_000 });
    expect(limited.framesDropped).toBeGreaterThan(0);
    // A window of one slot: every station transmits in every slot, and nothing ever succeeds.
    const stuck = simulateWifi({ stations: 3, backoff: slotted({ slotMs: 0.05, cwMin: 0, cwMax: 0 }), slots: 1_000 });
    expect(stuck.successes).toBe(0);
    expect(stuck.collisionProbability).toBe(1);
    expect(stuck.transmitProbability).toBe(1);
  });

  it('reports progress up to the total', () => {
    const seen: number[] = [];
    simulateWifi({ stations: 5, slots: 100_000, onProgress: (done, total) => seen.push(done / total) });
    expect(seen.length).toBeGreaterThan(10);
    expect(seen.at(-1)).toBe(1);
  });

  it('rejects bad options naming them', () => {
    expect(() => simulateWifi({ stations: 0 })).toThrow(/`stations`/);
    expect(() => simulateWifi({ slots: -1 })).toThrow(/`slots`/);
    expect(() => simulateWifi({ cwMin: 3, backoff: dcfBackoff() })).toThrow(/`backoff` replaces/);
    expect(() => simulateWifi({ onProgress: 1 as never })).toThrow(/`onProgress`/);
    expect(() => simulateWifi({ stages: 40 })).toThrow(/`stages`/);
  });
});

describe('dcfBackoff', () => {
  it('draws the initial backoff from CWmin, then doubles m times', () => {
    const rows = schedule(dcfBackoff({ cwMin: 15, stages: 6, slotMs: 1 }), 9).rows;
    expect(rows.map((r) => r.maxDelayMs)).toEqual([15, 31, 63, 127, 255, 511, 1023, 1023, 1023]);
    const limited = schedule(dcfBackoff({ cwMin: 31, retryLimit: 7, slotMs: 1 }), 20);
    expect(limited.rows).toHaveLength(7);
  });
});
