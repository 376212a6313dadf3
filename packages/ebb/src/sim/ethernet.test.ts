import { describe, expect, it } from 'vitest';
import { exponential } from '../backoff/exponential.js';
import { presets } from '../backoff/presets.js';
import { expectedBackoff } from './analytic.js';
import { type EthernetResult, ethernetCeilingSweep, simulateEthernet } from './ethernet.js';

describe('simulateEthernet', () => {
  it('draws, after the c-th collision, a mean backoff within 2 % of E(c) = (2^c − 1)/2', () => {
    const r = simulateEthernet({ stations: 32, slots: 1_500_000, seed: 11 });
    // 10,000 draws put the sampled mean within 3 standard errors of 1.7 % of a uniform window's mean.
    const rows = r.backoffByCollisions.filter((b) => b.samples >= 10_000);
    expect(rows.map((b) => b.collisions)).toEqual(expect.arrayContaining([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]));
    for (const b of rows) {
      expect(b.expectedSlots).toBeCloseTo(expectedBackoff(b.collisions, 10), 9);
      // E(1) = 0.5 slot: compare absolutely where the relative error of a small mean is noise.
      expect(Math.abs(b.meanSlots - b.expectedSlots), `c = ${b.collisions}`).toBeLessThan(
        Math.max(0.02 * b.expectedSlots, 0.01),
      );
    }
  });

  it('the ceiling sweep: collisions fall and the latency spread grows with every step of the ceiling', () => {
    const sweep = ethernetCeilingSweep({ stations: 32, thinkSlots: 32, slots: 150_000, seed: 3 });
    expect(sweep.map((r) => r.ceiling)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    for (let i = 1; i < sweep.length; i++) {
      const [a, b] = [sweep[i - 1], sweep[i]] as [EthernetResult, EthernetResult];
      const at = `ceiling ${b.ceiling}`;
      // Each step: no rise beyond sampling noise (the curve flattens above 12, where windows
      // that wide are rarely reached) …
      expect(b.collisionProbability, at).toBeLessThanOrEqual(a.collisionProbability + 0.005);
      expect(b.latencyStdDevSlots, at).toBeGreaterThanOrEqual(a.latencyStdDevSlots * 0.97);
      expect(b.maxLatencySlots, at).toBeGreaterThanOrEqual(a.maxLatencySlots * 0.9);
    }
    // … and over the range, a strong trend.
    const [c3, c10, c16] = [sweep[2], sweep[9], sweep[15]] as [EthernetResult, EthernetResult, EthernetResult];
    expect(c16.collisionProbability).toBeLessThan(c3.collisionProbability - 0.3);
    expect(c16.latencyStdDevSlots).toBeGreaterThan(10 * c3.latencyStdDevSlots);
    expect(c16.maxLatencySlots).toBeGreaterThan(4 * c10.maxLatencySlots);
    // Fewer collisions also means fewer frames dropped at the attempt limit.
    expect(c16.framesDropped).toBeLessThan(c3.framesDropped / 100);
  }, 30_000); // 16 runs of 150,000 slots: seconds on a busy machine

  it('a think time ends saturation: stations are idle between frames', () => {
    const saturated = simulateEthernet({ stations: 8, slots: 100_000 });
    const thinking = simulateEthernet({ stations: 8, slots: 100_000, thinkSlots: 100 });
    expect(thinking.thinkSlots).toBe(100);
    expect(thinking.successes).toBeLessThan(saturated.successes / 4);
    // Each station offers about one frame per 101 slots: 8 stations fill about 8 % of the slots.
    expect(thinking.throughput).toBeGreaterThan(0.06);
    expect(thinking.throughput).toBeLessThan(0.085);
    expect(() => simulateEthernet({ thinkSlots: -1 })).toThrow(/`thinkSlots`/);
  });

  it('a think time so long that thinkSlots / (1 + thinkSlots) rounds to 1 still works (2^53, 1e300)', () => {
    // Found by the option fuzzer: log(2^53 / (2^53 + 1)) is log(1) = 0 in doubles, and every idle
    // time became log(u) / 0 = -Infinity slots (RangeError: Invalid typed array length: Infinity).
    for (const thinkSlots of [2 ** 53, 1e300]) {
      const r = simulateEthernet({ stations: 4, slots: 10_000, thinkSlots });
      expect(r.thinkSlots).toBe(thinkSlots);
      // Each station sends its first frame, then idles for ~thinkSlots slots: far past the run.
      expect(r.successes).toBe(4);
      expect(r.collisions).toBeGreaterThan(0);
      expect(Number.isFinite(r.throughput)).toBe(true);
    }
  });

  it('drops a frame after maxAttempts transmissions', () => {
    const once = simulateEthernet({ stations: 4, slots: 10_000, maxAttempts: 1 });
    expect(once.framesDropped).toBe(once.transmissions - once.successes);
    expect(once.backoffByCollisions).toEqual([]);
    const patient = simulateEthernet({ stations: 4, slots: 10_000, maxAttempts: Infinity });
    expect(patient.framesDropped).toBe(0);
    expect(patient.maxAttempts).toBeNull();
  });

  it('frames of several slots keep the channel busy longer and make more stations defer', () => {
    const short = simulateEthernet({ stations: 8, slots: 200_000 });
    const before = JSON.stringify(short);
    const long = simulateEthernet({ stations: 8, slots: 200_000, frameSlots: 24 });
    // The first result is the caller's: the second run must not change it. Node 24.21's
    // Maglev (escape analysis with OSR) did, here, without the copy in detached.ts (see there).
    expect(JSON.stringify(short)).toBe(before);
    expect(long.successes).toBeLessThan(short.successes / 5);
    expect(long.collisionProbability).toBeGreaterThan(short.collisionProbability);
  });

  it('takes another slotted policy, is deterministic, and rejects bad options', () => {
    const a = simulateEthernet({ stations: 6, slots: 20_000, backoff: presets.ethernet, seed: 2 });
    expect(a.ceiling).toBeNull();
    expect(a.slotMs).toBe(0.0512);
    expect(simulateEthernet({ stations: 6, slots: 20_000, backoff: presets.ethernet, seed: 2 })).toEqual(a);
    expect(simulateEthernet({ stations: 6, slots: 20_000, seed: 9 })).not.toEqual(a);
    expect(() => simulateEthernet({ backoff: exponential({ initialDelayMs: 1 }) })).toThrow(/slotted policy/);
    expect(() => simulateEthernet({ ceiling: 31 })).toThrow(/`ceiling` to be at most 30/);
    expect(() => simulateEthernet({ ceiling: 5, backoff: presets.ethernet })).toThrow(/replaces/);
    expect(() => simulateEthernet({ frameSlots: 0 })).toThrow(/`frameSlots`/);
    expect(() => ethernetCeilingSweep({}, [])).toThrow(/non-empty array/);
  });
});
