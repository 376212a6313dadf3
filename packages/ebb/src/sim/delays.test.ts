import { describe, expect, it } from 'vitest';
import { presets } from '../backoff/presets.js';
import { delayDistribution } from './delays.js';

describe('delayDistribution', () => {
  it('samples the real policy: every wait within the exact bounds, means within 2 %', () => {
    for (const backoff of [presets.googleHttpClient, presets.default, presets.ethernet, presets.googleDrive]) {
      const rows = delayDistribution(backoff, { runs: 20_000, rows: 6, seed: 4 });
      for (const r of rows) {
        expect(r.sampledMinMs).toBeGreaterThanOrEqual(r.minMs);
        expect(r.sampledMaxMs).toBeLessThanOrEqual(r.maxMs);
        expect(Math.abs(r.sampledMeanMs - r.meanMs)).toBeLessThanOrEqual(0.02 * r.meanMs);
        expect(r.p05Ms).toBeLessThanOrEqual(r.p50Ms);
        expect(r.p50Ms).toBeLessThanOrEqual(r.p95Ms);
      }
    }
  });

  it("places Google's ±50 % quantiles where the uniform puts them", () => {
    const [first] = delayDistribution(presets.googleHttpClient, { runs: 40_000, rows: 1 });
    expect(first?.p05Ms).toBeCloseTo(250 + 0.05 * 500, -1);
    expect(first?.p95Ms).toBeCloseTo(250 + 0.95 * 500, -1);
  });

  it('ends rows where the policy stops, and rejects bad options', () => {
    expect(delayDistribution(presets.awsStandard, { runs: 10, rows: 10 })).toHaveLength(2);
    expect(() => delayDistribution({} as never)).toThrow(/`backoff`/);
    expect(() => delayDistribution(presets.default, { runs: 0 })).toThrow(/`runs`/);
  });
});
