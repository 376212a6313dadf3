import { describe, expect, it } from 'vitest';
import { algorithmFrom, brownoutModel, outageModel, slowTailModel } from './simulate-resilience.js';

const io = { out: () => {}, progress: { isTTY: false, write: () => true } };

describe('ebb simulate outage', () => {
  it('runs none and the breaker on one seed; the table and the JSON carry the same figures', async () => {
    const flags = { duration: '20s', outage: '10s', outageStart: '2s', seed: '3' };
    const sim = await outageModel(flags, io);
    const [none, breaker] = sim.doc.results as {
      subject: string;
      deadRequests: number;
      openPeriods: { sent: number; openMs: number }[];
    }[];
    expect(none?.subject).toBe('none');
    expect(breaker?.subject).toBe('breaker');
    expect(breaker?.openPeriods.length).toBeGreaterThan(2);
    expect(Math.max(...(breaker?.openPeriods ?? []).map((p) => p.sent))).toBe(1);
    expect((breaker?.deadRequests ?? 0) * 50).toBeLessThan(none?.deadRequests ?? 0);
    expect(sim.text).toContain(`${none?.deadRequests}`);
    expect(sim.text).toContain(`${breaker?.deadRequests}`);
    // --open and --open-max reach the breaker: a 2 s first period draws from [1 s, 2 s).
    const slow = await outageModel({ ...flags, open: '2s', openMax: '2s' }, io);
    const periods = (slow.doc.results as { openPeriods: { openMs: number }[] }[])[1]?.openPeriods ?? [];
    for (const p of periods) expect(p.openMs).toBeGreaterThanOrEqual(1_000);
    for (const p of periods) expect(p.openMs).toBeLessThan(2_000);
    // Same seed, same document.
    expect((await outageModel(flags, io)).doc).toEqual(sim.doc);
    await expect(outageModel({ open: '2s', openMax: '1s' }, io)).rejects.toThrow(/--open-max/);
    await expect(outageModel({ workers: '0' }, io)).rejects.toThrow(/--workers/);
  });
});

describe('ebb simulate brownout', () => {
  it('runs unloaded, none and each algorithm', async () => {
    const sim = await brownoutModel({ duration: '5s', algorithms: 'aimd,gradient2' }, io);
    const results = sim.doc.results as { subject: string; offeredPerSecond: number; peakInServer: number }[];
    expect(results.map((r) => r.subject)).toEqual(['unloaded', 'none', 'aimd', 'gradient2']);
    expect(results.map((r) => r.offeredPerSecond)).toEqual([40, 120, 120, 120]);
    expect(results[2]?.peakInServer).toBeLessThan(results[1]?.peakInServer ?? 0);
    expect(sim.text).toMatch(/gradient2 +120\/s/);
    await expect(brownoutModel({ algorithms: 'bbr' }, io)).rejects.toThrow(/unknown algorithm "bbr"/);
    await expect(brownoutModel({ maxLimit: '2' }, io)).rejects.toThrow(/--max-limit \(2\) must be at least/);
    // --max-limit reaches the algorithm: a cap at the server's thrash point (2 × capacity).
    const capped = await brownoutModel({ duration: '5s', algorithms: 'vegas', maxLimit: '16' }, io);
    const vegasRun = (capped.doc.results as { subject: string; finalLimit: number; peakInServer: number }[])[2];
    expect(vegasRun?.finalLimit).toBeLessThanOrEqual(16);
    expect(vegasRun?.peakInServer).toBeLessThanOrEqual(16);
    expect(() => algorithmFrom('AIMD', 100, 4)).toThrow(/aimd, vegas, gradient2/);
  });
});

describe('ebb simulate slow-tail', () => {
  it('runs none, hedged and the all-slow overload; --delay and --budget reach the hedger', async () => {
    const sim = await slowTailModel({ duration: '10s', delay: '20ms', budget: '0.1' }, io);
    const results = sim.doc.results as {
      subject: string;
      calls: number;
      p99Ms: number;
      extraRequests: number;
      hedgeDelayMs: number | null;
    }[];
    expect(results.map((r) => r.subject)).toEqual([
      'none',
      'hedged (20 ms, budget 10.0 %)',
      'overload (all slow), hedged',
    ]);
    expect(results[1]?.hedgeDelayMs).toBe(20);
    expect(results[1]?.p99Ms).toBeLessThan(results[0]?.p99Ms ?? 0);
    // The all-slow overload: the budget's share (10 %) plus 1 a second.
    const overload = results[2] as (typeof results)[number];
    expect(overload.extraRequests).toBeLessThanOrEqual(0.1 + 10 / overload.calls);
    expect(results[2]?.extraRequests).toBeGreaterThan(0.05);
    expect(sim.doc).not.toHaveProperty('results.0.latenciesMs');
    await expect(slowTailModel({ budget: '1.5' }, io)).rejects.toThrow(/--budget expects a share/);
    await expect(slowTailModel({ percentile: 'x' }, io)).rejects.toThrow(/--percentile/);
  });

  it('--spread draws the fast responses log-normal around --service', async () => {
    const narrow = await slowTailModel({ duration: '10s', delay: '20ms' }, io);
    const spread = await slowTailModel({ duration: '10s', delay: '20ms', spread: '1' }, io);
    expect(narrow.doc.serviceSigma).toBe(0);
    expect(spread.doc.serviceSigma).toBe(1);
    const p50 = (sim: typeof narrow) => (sim.doc.results as { p50Ms: number }[])[0]?.p50Ms as number;
    const p95 = (sim: typeof narrow) => (sim.doc.results as { p95Ms: number }[])[0]?.p95Ms as number;
    // The median stays near the 10 ms service time (plus 2 ms of network). The p95 of a 5 %
    // tail 20 × slower: on the narrow server a fast response (12 ms) or a slow one (202 ms); with
    // σ = 1 about 9.5 × the median (docs/resilience.md), between the two.
    expect(p50(spread)).toBeGreaterThan(8);
    expect(p50(spread)).toBeLessThan(16);
    expect(p95(spread)).toBeGreaterThan(40);
    expect(p95(spread)).toBeLessThan(180);
    expect(p95(narrow) < 40 || p95(narrow) > 180).toBe(true);
    expect(spread.text).toContain('log-normal, σ 1');
    await expect(slowTailModel({ spread: 'x' }, io)).rejects.toThrow(/--spread/);
  });
});

describe('a zero service time', () => {
  it('brownout and slow-tail refuse --service 0ms before estimating the run, so nothing else is printed', async () => {
    const written: string[] = [];
    const recording = { out: () => {}, progress: { isTTY: false, write: (t: string) => written.push(t) } };
    await expect(brownoutModel({ service: '0ms' }, recording)).rejects.toThrow(
      /^--service must be longer than 0, got "0ms": such as 100ms$/,
    );
    await expect(slowTailModel({ service: '0ms', duration: '0ms' }, recording)).rejects.toThrow(
      /^--service must be longer than 0, got "0ms": such as 10ms$/,
    );
    expect(written).toEqual([]);
  });
});
