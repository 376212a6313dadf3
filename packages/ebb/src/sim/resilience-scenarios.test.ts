import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exponential } from '../backoff/exponential.js';
import { equalJitter } from '../backoff/jitter-equal.js';
import { ratioBudget } from '../rate/index.js';
import {
  aimd,
  bdp,
  circuitBreaker,
  concurrencyLimit,
  gradient2,
  hedging,
  type LimitAlgorithm,
  vegas,
} from '../resilience/index.js';
import { simulateBreakerOutage } from './breaker-outage.js';
import { simulateBrownout } from './brownout.js';
import type { SimEnvironment } from './overload.js';
import { simulateSlowTail } from './slow-tail.js';

// The breaker of bench/figures/resilience.mjs: 5 failures, 1 s doubling to 8 s, equal jitter.
const openBackoff = exponential({ initialDelayMs: 1_000, maxDelayMs: 8_000, jitter: equalJitter });
const breaker = ({ clock, random }: SimEnvironment) => circuitBreaker({ clock, random, openBackoff });

describe('simulateBreakerOutage', () => {
  it('the breaker lets one probe per open period reach the dead service, and restores traffic within two periods', async () => {
    const plain = await simulateBreakerOutage({ seed: 4 });
    const guarded = await simulateBreakerOutage({ seed: 4, breaker });
    // Without a breaker the workers keep calling the dead service: thousands of requests.
    expect(plain.deadRequests).toBeGreaterThan(5_000);
    expect(plain.openPeriods).toEqual([]);
    // With it: the calls in flight when it opened, then one probe per open period.
    const inOutage = guarded.openPeriods.filter((p) => p.atMs < guarded.outageStartMs + guarded.outageMs);
    expect(inOutage.length).toBeGreaterThanOrEqual(5);
    for (const p of guarded.openPeriods) expect(p.sent).toBeLessThanOrEqual(1);
    expect(guarded.deadRequests).toBeLessThanOrEqual(2 * 10 + inOutage.length);
    expect(guarded.deadRequests * 100).toBeLessThan(plain.deadRequests);
    // Every period lies in its backoff step's [d/2, d), d = 1, 2, 4, 8, 8, … s.
    guarded.openPeriods.forEach((p, i) => {
      const d = Math.min(1_000 * 2 ** i, 8_000);
      expect(p.openMs).toBeGreaterThanOrEqual(d / 2);
      expect(p.openMs).toBeLessThan(d);
    });
    // Full traffic back within two open periods of the recovery.
    expect(guarded.openAtRecoveryMs).not.toBeNull();
    expect(guarded.fullTrafficAfterMs).not.toBeNull();
    expect(guarded.fullTrafficAfterMs as number).toBeLessThanOrEqual(2 * (guarded.openAtRecoveryMs as number));
    // And the service sees it: the last seconds carry as many successes as before the outage.
    const rate = (r: typeof plain, fromMs: number, toMs: number) => {
      const bins = r.series.filter((b) => b.startMs >= fromMs && b.startMs < toMs);
      return bins.reduce((sum, b) => sum + b.successesPerSecond, 0) / bins.length;
    };
    const before = rate(guarded, 1_000, 5_000);
    expect(before).toBeGreaterThan(200);
    expect(rate(guarded, 50_000, 60_000)).toBeGreaterThan(0.9 * before);
    expect(rate(plain, 50_000, 60_000)).toBeGreaterThan(0.9 * before);
  });

  it('is deterministic by seed, and the seed matters', async () => {
    const a = await simulateBreakerOutage({ seed: 7, breaker, durationMs: 20_000, outageMs: 10_000 });
    const b = await simulateBreakerOutage({ seed: 7, breaker, durationMs: 20_000, outageMs: 10_000 });
    const c = await simulateBreakerOutage({ seed: 8, breaker, durationMs: 20_000, outageMs: 10_000 });
    expect(b).toEqual(a);
    expect(c.openPeriods.map((p) => p.openMs)).not.toEqual(a.openPeriods.map((p) => p.openMs));
    // The series adds up to the totals, but for the last calls, answered after the duration.
    expect(a.series.length).toBe(20);
    const requests = a.series.reduce((s, x) => s + x.requestsPerSecond, 0);
    const successes = a.series.reduce((s, x) => s + x.successesPerSecond, 0);
    expect(requests).toBeLessThanOrEqual(a.requests);
    expect(requests).toBeGreaterThanOrEqual(a.requests - 10);
    expect(successes).toBeLessThanOrEqual(a.succeeded);
    expect(successes).toBeGreaterThanOrEqual(a.succeeded - 10);
  });

  it('rejects hostile options, naming them', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('workers', 'thinkMs', 'outageMs', 'binMs', 'seed'),
        fc.constantFrom(Number.NaN, -1, Number.NEGATIVE_INFINITY, -0.5, '5', null),
        async (name, value) => {
          await expect(simulateBreakerOutage({ [name]: value })).rejects.toThrow(name);
        },
      ),
      { numRuns: 40 },
    );
    await expect(simulateBreakerOutage({ workers: 1e308 })).rejects.toThrow('workers');
    await expect(simulateBreakerOutage({ seed: 0.5 })).rejects.toThrow('seed');
    await expect(simulateBreakerOutage({ thinkMs: 0, serviceMs: 0 })).rejects.toThrow('thinkMs');
    await expect(simulateBreakerOutage({ breaker: 5 as never })).rejects.toThrow('breaker');
    await expect(simulateBreakerOutage({ bogus: 1 } as never)).rejects.toThrow('bogus');
  });
});

const limited = (algorithm: (env: SimEnvironment) => LimitAlgorithm) => (env: SimEnvironment) =>
  concurrencyLimit({ algorithm: algorithm(env), maxQueue: 16, maxWaitMs: 200, clock: env.clock });

describe('simulateBrownout', () => {
  const run = { durationMs: 20_000, seed: 2 };

  it('without a limit the overloaded server collapses; a limit keeps it serving', async () => {
    const unloaded = await simulateBrownout({ ...run, load: 0.5 });
    const none = await simulateBrownout(run);
    // Half the capacity: everything served fast, goodput = the offered half.
    expect(unloaded.failed).toBe(0);
    expect(unloaded.goodput).toBeGreaterThan(0.45);
    expect(unloaded.goodput).toBeLessThan(0.55);
    expect(unloaded.p99Ms as number).toBeLessThan(2 * 100 + 40);
    // 1.5 × capacity: the queue grows, the server thrashes, nearly everything times out.
    expect(none.goodput).toBeLessThan(0.1);
    expect(none.peakInServer).toBeGreaterThan(100);
    expect(none.failed).toBeGreaterThan(0.9 * none.calls);
    const algorithms = {
      aimd: () => aimd({ initialLimit: 4, minLimit: 1, slowCallMs: 300 }),
      vegas: ({ random }: SimEnvironment) => vegas({ initialLimit: 4, random }),
      gradient2: () => gradient2({ initialLimit: 4, minLimit: 1, maxLimit: 100 }),
    };
    for (const algorithm of Object.values(algorithms)) {
      const r = await simulateBrownout({ ...run, limit: limited(algorithm) });
      // The limit bounds what reaches the server and serves more than twice what no limit does.
      expect(r.peakInServer).toBeLessThan(none.peakInServer / 3);
      expect(r.goodput).toBeGreaterThan(2 * none.goodput);
      expect(r.refused).toBeGreaterThan(0);
      expect(r.series.every((b) => b.limit !== null)).toBe(true);
    }
  });

  it('bdp meets the target where the others overshoot: goodput ≥ 90 % of capacity, p99 ≤ 2 × unloaded', async () => {
    // No queue at the limit, as in the benchmark (a full queue of 16 alone adds 16 ÷ 80/s = 200 ms
    // to every call it admits).
    const short = (algorithm: (env: SimEnvironment) => LimitAlgorithm) => (env: SimEnvironment) =>
      concurrencyLimit({ algorithm: algorithm(env), clock: env.clock });
    for (const seed of [2, 3]) {
      const unloaded = await simulateBrownout({ ...run, seed, load: 0.5 });
      const r = await simulateBrownout({ ...run, seed, limit: short(() => bdp({ initialLimit: 4 })) });
      const over = await simulateBrownout({ ...run, seed, limit: short(() => bdp({ initialLimit: 4, gain: 2 })) });
      const g2 = await simulateBrownout({
        ...run,
        seed,
        limit: short(() => gradient2({ initialLimit: 4, minLimit: 1, maxLimit: 100 })),
      });
      expect(r.goodput).toBeGreaterThanOrEqual(0.9);
      expect(r.p99Ms as number).toBeLessThanOrEqual(2 * (unloaded.p99Ms as number));
      // It never lets the server's queue pass its thrash point (more than 8 waiting behind 8).
      expect(r.peakInServer).toBeLessThanOrEqual(16);
      expect(r.failed).toBe(0);
      // Twice the product overshoots into the thrash, and so does Gradient2 with the same queue.
      expect(over.peakInServer).toBeGreaterThan(16);
      expect(over.goodput).toBeLessThan(0.9);
      expect(g2.goodput).toBeLessThan(0.9);
    }
  });

  it('is deterministic by seed, and the seed matters', async () => {
    const lim = limited(({ random }) => vegas({ initialLimit: 4, random }));
    const a = await simulateBrownout({ ...run, durationMs: 5_000, limit: lim });
    const b = await simulateBrownout({ ...run, durationMs: 5_000, limit: lim });
    const c = await simulateBrownout({ ...run, durationMs: 5_000, limit: lim, seed: 3 });
    expect(b).toEqual(a);
    expect(c.calls).not.toBe(a.calls);
    expect(a.succeeded + a.refused + a.failed).toBe(a.calls);
  });

  it('rejects hostile options, naming them', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('capacity', 'serviceMs', 'slowdown', 'load', 'durationMs', 'binMs', 'seed'),
        fc.constantFrom(Number.NaN, -1, Number.NEGATIVE_INFINITY, -0.5, 'x', null),
        async (name, value) => {
          await expect(simulateBrownout({ durationMs: 10, [name]: value })).rejects.toThrow(name);
        },
      ),
      { numRuns: 60 },
    );
    for (const [name, value] of [
      ['capacity', 1.5],
      ['serviceMs', 0],
      ['slowdown', 0.5],
      ['load', 0],
      ['seed', 1e308],
      ['attemptTimeoutMs', Number.NaN],
    ] as const) {
      await expect(simulateBrownout({ durationMs: 10, [name]: value })).rejects.toThrow(name);
    }
    await expect(simulateBrownout({ limit: 'vegas' as never })).rejects.toThrow('limit');
  });
});

describe('simulateSlowTail', () => {
  const run = { durationMs: 20_000, seed: 5 };
  const budget10 = ({ clock }: SimEnvironment) =>
    hedging({ clock, delayMs: 20, budget: ratioBudget({ clock, percentCanRetry: 0.1 }) });

  it('hedging after a delay above the fast responses cuts the p99 for about the slow share in extra requests', async () => {
    const plain = await simulateSlowTail(run);
    const hedged = await simulateSlowTail({ ...run, hedging: budget10 });
    // Without hedging the p99 is a slow response: 20 × 10 ms plus the network.
    expect(plain.p99Ms as number).toBeGreaterThan(200);
    expect(plain.extraRequests).toBe(0);
    expect(plain.cancelled).toBe(0);
    // With it, a slow call ends at the hedge delay plus a fast response: p99 < 40 ms.
    expect(hedged.p99Ms as number).toBeLessThan(40);
    expect(hedged.p99Ms as number).toBeGreaterThanOrEqual(20);
    // Extra requests: about the slow share (every slow call hedged once), never above the budget.
    expect(hedged.extraRequests).toBeGreaterThan(0.04);
    expect(hedged.extraRequests).toBeLessThan(0.1);
    // The losers were aborted and the server stopped them: one per hedge, nearly.
    expect(hedged.cancelled).toBeGreaterThan(0.9 * (hedged.requests - hedged.calls));
    expect(hedged.cancelled).toBeLessThanOrEqual(hedged.requests - hedged.calls);
    expect(hedged.latenciesMs.length).toBe(hedged.calls);
  });

  it('the default 5 % budget cannot hedge a 5 % slow tail away', async () => {
    const learned = await simulateSlowTail({ ...run, hedging: ({ clock }) => hedging({ clock, percentile: 0.9 }) });
    // The learned p90 delay sits in the fast responses' jitter, so fast calls spend the budget too.
    expect(learned.hedgeDelayMs as number).toBeLessThan(20);
    expect(learned.extraRequests).toBeLessThanOrEqual(0.05 + 20 / learned.calls);
    expect(learned.p99Ms as number).toBeGreaterThan(200);
  });

  it('under overload (every response slow) the budget holds hedges to its share', async () => {
    // A fixed 20 ms delay: every call outlives it and asks for a hedge; only the budget says no.
    const r = await simulateSlowTail({ ...run, slowShare: 1, hedging: ({ clock }) => hedging({ clock, delayMs: 20 }) });
    // ratioBudget's default: 5 % of calls plus 1 a second over its 10-s window.
    expect(r.requests - r.calls).toBeLessThanOrEqual(0.05 * r.calls + 10 + 20);
    expect(r.extraRequests).toBeGreaterThan(0.04);
    expect(r.extraRequests).toBeLessThan(0.1);
    expect(r.p50Ms as number).toBeGreaterThan(200);
  });

  it('spread fast responses (log-normal, σ = 1): the defaults cut the p99 to about 1.5 × the p95 for ≤ 5 % extra', async () => {
    // docs/resilience.md, "Slow tail, spread": with every call over the delay d hedged, the p99
    // is where P(T > t) · P(T > t − d) = 1 %, about 1.24 × the p95 here; the 5 % budget, at the
    // edge of the p95 delay's 5 % need, refuses some hedges and costs a few tenths more.
    const spread = { serviceMs: 50, serviceSigma: 1, durationMs: 300_000 };
    for (const seed of [2, 3]) {
      const plain = await simulateSlowTail({ ...spread, seed });
      const free = await simulateSlowTail({
        ...spread,
        seed,
        hedging: ({ clock }) => hedging({ clock, budget: { tryAcquireRetry: () => true, recordSuccess() {} } }),
      });
      const hedged = await simulateSlowTail({ ...spread, seed, hedging: ({ clock }) => hedging({ clock }) });
      const ratio = (r: typeof plain) => (r.p99Ms as number) / (r.p95Ms as number);
      expect(ratio(plain)).toBeGreaterThan(4); // the slow 5 % are the p99
      // Unbounded: every call over the delay hedged, the ratio of the arithmetic.
      expect(ratio(free)).toBeLessThan(1.4);
      expect(free.extraRequests).toBeLessThan(0.065);
      // The defaults: within the budget, and near the target (1.52–1.56 on seeds 1–3).
      expect(hedged.extraRequests).toBeLessThanOrEqual(0.05);
      expect(hedged.extraRequests).toBeGreaterThan(0.04);
      expect(ratio(hedged)).toBeLessThan(1.6);
      expect((hedged.p99Ms as number) / (plain.p95Ms as number)).toBeLessThan(1.5);
    }
    // Six runs of 300 s of virtual traffic: about 1.5 s of CPU alone, past 5 s on a busy machine.
  }, 30_000);

  it('is deterministic by seed, and the seed matters', async () => {
    const h = ({ clock }: SimEnvironment) => hedging({ clock, percentile: 0.9 });
    const a = await simulateSlowTail({ durationMs: 3_000, seed: 1, hedging: h });
    const b = await simulateSlowTail({ durationMs: 3_000, seed: 1, hedging: h });
    const c = await simulateSlowTail({ durationMs: 3_000, seed: 2, hedging: h });
    expect(b).toEqual(a);
    expect(c.latenciesMs).not.toEqual(a.latenciesMs);
  });

  it('rejects hostile options, naming them', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('workers', 'serviceMs', 'serviceSigma', 'slowShare', 'slowFactor', 'durationMs', 'seed'),
        fc.constantFrom(Number.NaN, -1, Number.NEGATIVE_INFINITY, -0.5, 'x', null),
        async (name, value) => {
          await expect(simulateSlowTail({ durationMs: 10, [name]: value })).rejects.toThrow(name);
        },
      ),
      { numRuns: 40 },
    );
    for (const [name, value] of [
      ['workers', 1.5],
      ['seed', 2 ** 53],
      ['slowShare', 1.01],
      ['slowFactor', 0.5],
      ['serviceMs', 0],
      ['serviceSigma', 3.5],
    ] as const) {
      await expect(simulateSlowTail({ durationMs: 10, [name]: value })).rejects.toThrow(name);
    }
    await expect(simulateSlowTail({ hedging: {} as never })).rejects.toThrow('hedging');
  });
});
