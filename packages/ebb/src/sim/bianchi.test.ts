import { describe, expect, it } from 'vitest';
import { bianchi, bianchiTiming } from './bianchi.js';

/** Eq. 7 of Bianchi (2000) as printed, for p away from 1/2. */
const eq7 = (p: number, w: number, m: number) =>
  (2 * (1 - 2 * p)) / ((1 - 2 * p) * (w + 1) + p * w * (1 - (2 * p) ** m));

describe('bianchi', () => {
  it('solves the fixed point: both equations hold to 1e-12', () => {
    for (const [cwMin, stages] of [
      [31, 5],
      [15, 6],
      [7, 3],
    ] as const) {
      for (const n of [2, 5, 10, 20, 50, 100]) {
        const r = bianchi({ stations: n, cwMin, stages });
        const p = r.collisionProbability;
        expect(Math.abs(p - (1 - (1 - r.transmitProbability) ** (n - 1)))).toBeLessThan(1e-12);
        if (Math.abs(p - 0.5) > 1e-3) expect(r.transmitProbability).toBeCloseTo(eq7(p, cwMin + 1, stages), 12);
      }
    }
  });

  it('has no 0/0 at p = 1/2, where the printed form does', () => {
    // W = 32, m = 5: p crosses 1/2 between 30 and 50 stations.
    const values = Array.from({ length: 40 }, (_, i) => bianchi({ stations: 20 + i }).transmitProbability);
    for (const tau of values) expect(Number.isFinite(tau)).toBe(true);
    for (let i = 1; i < values.length; i++) expect(values[i]).toBeLessThan(values[i - 1] as number);
  });

  it('reduces to the closed forms: one station never collides, m = 0 keeps τ = 2/(W + 1)', () => {
    const one = bianchi({ stations: 1, cwMin: 31 });
    expect(one.collisionProbability).toBe(0);
    expect(one.transmitProbability).toBeCloseTo(2 / 33, 15);
    const flat = bianchi({ stations: 10, cwMin: 15, stages: 0 });
    expect(flat.transmitProbability).toBeCloseTo(2 / 17, 15);
    expect(flat.collisionProbability).toBeCloseTo(1 - (1 - 2 / 17) ** 9, 12);
  });

  it('computes throughput (eq. 13) and delay from the same slot probabilities', () => {
    const r = bianchi({ stations: 10, cwMin: 31, stages: 5 });
    const t = bianchiTiming;
    const tau = r.transmitProbability;
    expect(r.busyProbability).toBeCloseTo(1 - (1 - tau) ** 10, 15);
    expect(r.successProbability).toBeCloseTo((10 * tau * (1 - tau) ** 9) / r.busyProbability, 15);
    const ps = r.busyProbability * r.successProbability;
    const slot = (1 - r.busyProbability) * t.slotUs + ps * t.successUs + (r.busyProbability - ps) * t.collisionUs;
    expect(r.throughput).toBeCloseTo((ps * t.payloadUs) / slot, 12);
    expect(r.meanDelayMs).toBeCloseTo((10 * slot) / ps / 1000, 9);
    // Bianchi's Fig. 6 (basic access, W = 32, m = 5): about 0.8 at 5 stations, falling with n.
    expect(bianchi({ stations: 5 }).throughput).toBeGreaterThan(0.78);
    expect(bianchi({ stations: 50 }).throughput).toBeLessThan(r.throughput);
  });

  it('takes its timing, and rejects bad options naming them', () => {
    const fast = bianchi({ stations: 10, timing: { slotUs: 9, successUs: 300, collisionUs: 250, payloadUs: 200 } });
    expect(fast.throughput).not.toBeCloseTo(bianchi({ stations: 10 }).throughput, 2);
    expect(() => bianchi({ stations: 0 })).toThrow(/`stations` to be a whole number >= 1/);
    expect(() => bianchi({ stations: 5, cwMin: -1 })).toThrow(RangeError);
    expect(() => bianchi({ stations: 5, stages: 1.5 })).toThrow(/`stages`/);
    expect(() => bianchi({ stations: 5, cwmin: 3 } as never)).toThrow(/unknown option `cwmin`. Did you mean `cwMin`/);
    expect(() =>
      bianchi({ stations: 5, timing: { slotUs: 9, successUs: 100, collisionUs: 100, payloadUs: 200 } }),
    ).toThrow(/payloadUs/);
  });
});
