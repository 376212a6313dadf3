import { describe, expect, it } from 'vitest';
import { simulateContention } from './contention.js';
import { ethernetCeilingSweep, simulateEthernet } from './ethernet.js';
import { simulateOverload } from './overload.js';
import { simulateWifi } from './wifi.js';

/**
 * A result returned to the caller must not change when the simulator runs again (see
 * detached.ts: on Node 24.21, Maglev's escape analysis, in code entered by on-stack replacement,
 * let consecutive results of the ethernet simulator share their number fields). The ethernet case
 * is the regression test of that engine bug: without the copy in detached.ts it fails on Node
 * 24.21 with --no-turbofan in 4 runs of 4 (0 of 4 with --no-maglev). The same property for the other simulators, each
 * called directly and repeatedly so that the engine optimizes them.
 */
describe('simulator results are the caller’s: a later run never changes them', () => {
  it('ethernet (the V8 Maglev escape-analysis bug behind detached.ts)', () => {
    // The reproducing sequence of ethernet.test.ts: runs with and without a think time first.
    simulateEthernet({ stations: 32, slots: 1_500_000, seed: 11 });
    ethernetCeilingSweep({ stations: 32, thinkSlots: 32, slots: 150_000, seed: 3 });
    simulateEthernet({ stations: 8, slots: 100_000, thinkSlots: 100 });
    for (let i = 0; i < 3; i++) {
      const first = simulateEthernet({ stations: 8, slots: 200_000, seed: i });
      const before = JSON.stringify(first);
      simulateEthernet({ stations: 8, slots: 200_000, frameSlots: 24, seed: i });
      expect(JSON.stringify(first)).toBe(before);
    }
  }, 30_000); // about 2 s on a quiet machine: 4 million simulated slots

  it('wifi', () => {
    for (let i = 0; i < 6; i++) {
      const first = simulateWifi({ stations: 5, slots: 100_000, seed: i });
      const before = JSON.stringify(first);
      simulateWifi({ stations: 50, slots: 100_000, seed: i });
      expect(JSON.stringify(first)).toBe(before);
    }
  });

  it('contention', () => {
    for (let i = 0; i < 4; i++) {
      const first = simulateContention({ clients: 10, runs: 5, seed: i });
      const before = JSON.stringify(first);
      simulateContention({ clients: 20, runs: 5, seed: i });
      expect(JSON.stringify(first)).toBe(before);
    }
  });

  it('overload', () => {
    for (let i = 0; i < 3; i++) {
      const first = simulateOverload({ clients: 50, outageMs: 500, seed: i });
      const before = JSON.stringify(first);
      simulateOverload({ clients: 50, outageMs: 2_000, seed: i });
      expect(JSON.stringify(first)).toBe(before);
    }
  });
});
