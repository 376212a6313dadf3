import { describe, expect, it } from 'vitest';
import { describePolicy as schedule } from '../backoff/describe.js';
import { presets } from '../backoff/presets.js';
import { brookerStrategies, simulateContention } from './contention.js';

describe('brookerStrategies', () => {
  it("are the post's formulas: min(cap, base·2^n) from n = 1, and decorrelated from U[base, 3·base]", () => {
    const s = brookerStrategies();
    expect(schedule(s.exponential, 10).rows.map((r) => r.delayMs)).toEqual([
      10, 20, 40, 80, 160, 320, 640, 1280, 2000, 2000,
    ]);
    expect(schedule(s.full, 2).rows.map((r) => [r.minDelayMs, r.maxDelayMs])).toEqual([
      [0, 10],
      [0, 20],
    ]);
    expect(schedule(s.equal, 2).rows.map((r) => [r.minDelayMs, r.maxDelayMs])).toEqual([
      [5, 10],
      [10, 20],
    ]);
    expect(schedule(s.decorrelated, 1).rows.map((r) => [r.minDelayMs, r.maxDelayMs])).toEqual([[5, 15]]);
    expect(schedule(s.none, 3).rows.map((r) => r.maxDelayMs)).toEqual([0, 0, 0]);
    expect(schedule(brookerStrategies({ baseMs: 100, capMs: 300 }).exponential, 3).rows.map((r) => r.delayMs)).toEqual([
      200, 300, 300,
    ]);
  });
});

describe('simulateContention', () => {
  it("reproduces the post's ordering at 50 clients", () => {
    const results = simulateContention({ clients: 50, runs: 100, seed: 7 });
    const by = Object.fromEntries(results.map((r) => [r.strategy, r]));
    const [expo, full, equal, decorrelated] = [by.exponential, by.full, by.equal, by.decorrelated].map((r) => {
      if (!r) throw new Error('missing strategy');
      return r;
    }) as [(typeof results)[0], (typeof results)[0], (typeof results)[0], (typeof results)[0]];
    // Full and decorrelated jitter: a fraction of un-jittered exponential's time, with fewer calls.
    for (const jittered of [full, decorrelated]) {
      expect(jittered.timeMs).toBeLessThan(expo.timeMs / 5);
      expect(jittered.calls).toBeLessThan(expo.calls * 0.75);
    }
    // Equal jitter in between: slower than both, faster than un-jittered; more calls than full.
    expect(equal.timeMs).toBeGreaterThan(Math.max(full.timeMs, decorrelated.timeMs));
    expect(equal.timeMs).toBeLessThan(expo.timeMs);
    expect(equal.calls).toBeGreaterThan(full.calls);
    expect(equal.calls).toBeLessThan(expo.calls);
    // Every client made at least one write; no strategy gives up.
    for (const r of results) {
      expect(r.calls).toBeGreaterThanOrEqual(50);
      expect(r.gaveUp).toBe(0);
    }
  });

  it('counts clients whose policy gives up, and is deterministic for a seed', () => {
    const opts = { clients: 20, runs: 5, strategies: { aws: presets.awsStandard } };
    const [aws] = simulateContention(opts);
    expect(aws?.gaveUp).toBeGreaterThan(0);
    expect(aws?.calls).toBeLessThanOrEqual(20 * 3);
    expect(simulateContention(opts)).toEqual([aws]);
    expect(simulateContention({ ...opts, seed: 2 })).not.toEqual([aws]);
  });

  it('takes the network model and rejects bad options', () => {
    const slow = simulateContention({
      clients: 5,
      runs: 10,
      strategies: { none: brookerStrategies().none },
      network: { meanMs: 100, sdMs: 0 },
    });
    // One read, one reply, one write, one reply at 100 ms each: at least 400 ms.
    expect(slow[0]?.timeMs).toBeGreaterThanOrEqual(400);
    expect(() => simulateContention({ clients: 0 })).toThrow(/`clients`/);
    expect(() => simulateContention({ strategies: {} })).toThrow(/at least one policy/);
    expect(() => simulateContention({ strategies: { x: 1 as never } })).toThrow(/`strategies.x`/);
    expect(() => simulateContention({ network: { meanMs: -1 } })).toThrow(/`network.meanMs`/);
  });
});
