import { describe, expect, it } from 'vitest';
import { simulateContention } from './contention.js';
import { simulateOverload } from './overload.js';
import { simulateWifi } from './wifi.js';

/**
 * A result returned to the caller must not change when the simulator runs again (see
 * detached.ts: Node 24.21's Turbofan shared number fields between consecutive results of the
 * ethernet simulator; ethernet.test.ts holds the check that reproduced it). The same property for
 * the other simulators, each called directly and repeatedly so that the engine optimizes them.
 */
describe('simulator results are the caller’s: a later run never changes them', () => {
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
