import { describe, expect, it } from 'vitest';
import { seeded } from '../core/random.js';
import { DecorrelatedMeans, decorrelatedJitter } from './decorrelated.js';
import { describePolicy, describeRow } from './describe.js';
import { exponential } from './exponential.js';

/** E[Xₖ] without a cap: (b + m·E[Xₖ₋₁]) / 2 from E[X₀] = b. */
function uncapped(b: number, m: number, k: number): number {
  let e = b;
  for (let i = 0; i < k; i++) e = (b + m * e) / 2;
  return e;
}

/** Monte Carlo means of rows 1..k of the chain, from n runs. */
function simulate(b: number, m: number, cap: number, k: number, n: number): number[] {
  const random = seeded(2024);
  const sums = new Array<number>(k).fill(0);
  for (let run = 0; run < n; run++) {
    let x = b;
    for (let i = 0; i < k; i++) {
      x = Math.min(cap, b + random() * (x * m - b));
      sums[i] = (sums[i] as number) + x;
    }
  }
  return sums.map((s) => s / n);
}

describe('decorrelated jitter means', () => {
  it('are exact while the cap does not bind', () => {
    const means = new DecorrelatedMeans(5, 3, 1e9);
    for (let k = 1; k <= 12; k++) expect(means.mean(k)).toBeCloseTo(uncapped(5, 3, k), 6);
  });

  it('match a million-run simulation within 0.3 % once the cap binds (the AWS blog: 5 ms, ×3, 2 s)', () => {
    const mc = simulate(5, 3, 2_000, 30, 1_000_000);
    const b = exponential({ initialDelayMs: 5, multiplier: 3, maxDelayMs: 2_000, jitter: decorrelatedJitter });
    const rows = describePolicy(b, 30).rows;
    rows.forEach((r, i) => {
      expect(Math.abs(r.meanDelayMs - (mc[i] as number)) / (mc[i] as number)).toBeLessThan(0.003);
    });
  });

  it('settle to the stationary mean, so far rows are computed at once', () => {
    const b = exponential({ initialDelayMs: 10, multiplier: 2.5, maxDelayMs: 1_000, jitter: decorrelatedJitter });
    const far = describeRow(b, Number.MAX_SAFE_INTEGER).meanDelayMs;
    expect(far).toBeCloseTo(describeRow(b, 500).meanDelayMs, 9);
    const mc = simulate(10, 2.5, 1_000, 200, 200_000);
    expect(Math.abs(far - (mc[199] as number)) / far).toBeLessThan(0.005);
  });

  it('keep their accuracy for tiny initial delays (computed in units of the initial delay)', () => {
    const tiny = new DecorrelatedMeans(1e-200, 1.5, 1e-190);
    const unit = new DecorrelatedMeans(1, 1.5, 1e10);
    for (const k of [1, 5, 50]) expect(tiny.mean(k) / 1e-200).toBeCloseTo(unit.mean(k), 9);
  });

  it('match the executor’s own draws where the cap binds (the clamp comes after the draw)', () => {
    // A policy whose cap binds from row 2: the draw min(cap, U[b, prev·m]) puts mass on the cap.
    const b = exponential({ initialDelayMs: 100, multiplier: 10, maxDelayMs: 2_000, jitter: decorrelatedJitter });
    const random = seeded(31);
    const n = 400_000;
    const sums = [0, 0, 0];
    let atCap = 0;
    for (let i = 0; i < n; i++) {
      const run = b.start(random);
      for (let k = 0; k < 3; k++) {
        const d = run.next();
        sums[k] = (sums[k] as number) + d;
        if (k === 2 && d === 2_000) atCap++;
      }
    }
    sums.forEach((sum, k) => {
      const mean = describeRow(b, k + 1).meanDelayMs;
      expect(Math.abs(sum / n - mean) / mean).toBeLessThan(0.005);
    });
    // Row 3 draws from U[100, 10·prev] with prev mostly above 200: a large share lands on the cap.
    expect(atCap / n).toBeGreaterThan(0.4);
  });

  it('match the closed form of row 2 where the cap binds (b 10, ×3, cap 50)', () => {
    // X₁ ~ U[10, 30]. Given X₁ = x, X₂ = min(50, U[10, 3x]): mean (10 + 3x)/2 for x <= 50/3, else
    // 50 − 800/(3x − 10). Integrated over x with density 1/20:
    // E[X₂] = (166.67 + 666.67 − (800/3)·ln 2) / 20 = 32.4247…
    const exact = (500 / 3 + 2000 / 3 - (800 / 3) * Math.log(2)) / 20;
    const means = new DecorrelatedMeans(10, 3, 50);
    expect(means.mean(1)).toBeCloseTo(20, 9);
    expect(Math.abs(means.mean(2) - exact) / exact).toBeLessThan(1e-5);
    // Asked for in another order, the same values (rows are computed once and kept).
    const again = new DecorrelatedMeans(10, 3, 50);
    expect(again.mean(2)).toBe(means.mean(2));
    expect(again.mean(1)).toBe(means.mean(1));
    // Scaled by b: the chain in units of b is the same.
    expect(new DecorrelatedMeans(1, 3, 5).mean(2) * 10).toBeCloseTo(means.mean(2), 9);
  });

  it('match the closed form of row 2 to 2e-5 for caps 20 to 1000 times the initial delay (cells 2 % wide)', () => {
    // b = 1: X₁ ~ U[1, m]; X₂ | x = min(C, U[1, m·x]), whose mean is (1 + m·x)/2 for x <= C/m and
    // C − (C − 1)² / (2(m·x − 1)) above. Integrated over x with density 1/(m − 1):
    for (const [m, cap] of [
      [1_000, 1e5],
      [100, 5e3],
      [1e4, 1e7],
      [50, 1e3],
    ] as const) {
      const k = cap / m;
      const below = (k - 1) / 2 + (m / 4) * (k * k - 1);
      const above = cap * (m - k) - ((cap - 1) ** 2 / (2 * m)) * Math.log((m * m - 1) / (m * k - 1));
      const exact = (below + above) / (m - 1);
      expect(Math.abs(new DecorrelatedMeans(1, m, cap).mean(2) - exact) / exact).toBeLessThan(2e-5);
    }
  });

  it('row 1 with a cap inside [b, m·b]: a uniform part and an atom at the cap', () => {
    // X₁ = min(25, U[10, 30]): 3/4 uniform on [10, 25] (mean 17.5), 1/4 at 25 → 19.375.
    expect(new DecorrelatedMeans(10, 3, 25).mean(1)).toBeCloseTo(19.375, 9);
    // The cap exactly at b·m: no atom.
    expect(new DecorrelatedMeans(10, 3, 30).mean(1)).toBeCloseTo(20, 9);
  });

  it('degenerate chains: a cap at or below the initial delay, and multiplier 1', () => {
    expect(new DecorrelatedMeans(10, 3, 5).mean(4)).toBe(5);
    expect(new DecorrelatedMeans(10, 3, 10).mean(1)).toBe(10);
    expect(new DecorrelatedMeans(10, 1, 50).mean(4)).toBe(10);
  });

  it('throw rather than guess where the mean has not settled within the work budget', () => {
    // With the budget lowered to 20 rows: a chain that needs ~50 rows to reach its cap.
    const slow = new DecorrelatedMeans(1, 2, 1e15, 20);
    expect(slow.mean(20)).toBeCloseTo(uncapped(1, 2, 20), 6);
    expect(() => slow.mean(21)).toThrow(
      new RangeError(
        'describePolicy(): the mean of decorrelated jitter (initial 1 ms, multiplier 2, cap 1000000000000000 ms) has not settled after 20 rows, so row 21 is not computed; rows up to 20 are.',
      ),
    );
    // A chain that settles answers any row, however far, with the settled mean.
    const quick = new DecorrelatedMeans(1, 2, 4, 50);
    expect(quick.mean(1_000_000)).toBe(quick.mean(50));
  });

  it('give up after the work budget, 5e7 cell-steps, over the cell count (cells 2 % wide, 256 to 20,000)', () => {
    // Cap 100 × b: ln 100 / ln 1.02 = 232.6 cells, raised to the minimum of 256.
    expect(new DecorrelatedMeans(1, 2, 100).maxSteps).toBe(Math.floor(5e7 / 256));
    // Cap 1e10 × b (b 3 ms): ln 1e10 / ln 1.02 = 1162.8, so 1163 cells; 5e7 / 1163 = 42,992.3.
    expect(new DecorrelatedMeans(3, 2, 3e10).maxSteps).toBe(42_992);
    // Cap 1e300 × b: 34,880 cells wanted, capped at 20,000.
    expect(new DecorrelatedMeans(1, 2, 1e300).maxSteps).toBe(2_500);
    // A budget given (the tests lower it) is kept as given.
    expect(new DecorrelatedMeans(1, 2, 100, 7).maxSteps).toBe(7);
  });
});
