// The fleet-breaker simulation: the real sharedCircuitBreaker members against the model of Redis,
// beside one local circuitBreaker per process, in virtual time.
import { describe, expect, it } from 'vitest';
import { exponential } from '../backoff/exponential.js';
import { noJitter } from '../backoff/jitter-none.js';
import { simulateFleetBreaker } from './fleet-breaker.js';

const openBackoff = exponential({
  initialDelayMs: 1000,
  multiplier: 2,
  maxDelayMs: 4000,
  jitter: noJitter,
  maxAttempts: Infinity,
});

describe('simulateFleetBreaker', () => {
  it('100 processes, a 10-s outage, one partitioned: one probe per open period for the fleet, against one per process for local breakers; the partition opens nothing', async () => {
    const r = await simulateFleetBreaker({ processes: 100, callsPerSecond: 20, durationMs: 25_000, openBackoff });
    console.log('fleet breaker simulation:', JSON.stringify(r));
    // Periods of 1, 2, 4, 4 s: at most 4 period ends in the rest of the outage after opening.
    expect(r.shared.reachedAfterOpen).toBeLessThanOrEqual(4);
    expect(r.local.reachedAfterOpen).toBeGreaterThanOrEqual(99);
    expect(r.shared.refusedWhileUp).toBe(0);
    expect(r.shared.partitionedRefused).toBeGreaterThan(0);
    // The partitioned member, whose own breaker opened long before the fleet's, leaves the probes
    // to the others: the first success within the open period then running (4 s at most) and a
    // report period.
    expect(r.shared.firstSuccessAfterMs).toBeLessThanOrEqual(4000 + 1000);
    expect(r.shared.commandsPerCall).toBeLessThanOrEqual(0.1);
  }, 60_000);

  it('100 processes, 2 and 3 partitioned (minMembers or more, far from a majority): no healthy call refused before the outage; after it, the first success within one open period, the partitioned members leaving the probe to the others', async () => {
    for (const partitioned of [2, 3]) {
      const r = await simulateFleetBreaker({ processes: 100, partitioned, durationMs: 25_000, openBackoff });
      console.log(`fleet breaker simulation, ${partitioned} partitioned:`, JSON.stringify(r.shared));
      expect(r.shared.refusedWhileUp).toBe(0);
      expect(r.shared.partitionedRefused).toBeGreaterThan(0);
      // The fleet still opens for the real outage: one probe per open period after it did.
      expect(r.shared.openedAfterMs).toBeLessThan(10_000);
      expect(r.shared.reachedAfterOpen).toBeLessThanOrEqual(4);
      // The open period then running (4 s at most) and a report period.
      expect(r.shared.firstSuccessAfterMs).toBeLessThanOrEqual(4000 + 1000);
    }
  }, 60_000);

  it('equal seeds give equal runs, another seed other open periods (their jitter draws from the seed)', async () => {
    const o = { processes: 20, durationMs: 25_000 };
    const a = await simulateFleetBreaker({ ...o, seed: 2 });
    expect(await simulateFleetBreaker({ ...o, seed: 2 })).toEqual(a);
    expect(await simulateFleetBreaker({ ...o, seed: 3 })).not.toEqual(a);
    await expect(simulateFleetBreaker({ seed: 1.5 })).rejects.toThrow(/seed/);
  }, 60_000);

  it('refuses more processes than it can run, with the option and the fix', async () => {
    await expect(simulateFleetBreaker({ processes: 5000 })).rejects.toThrow(/processes/);
    await expect(simulateFleetBreaker({ processes: 2, partitioned: 2 })).rejects.toThrow(/partitioned/);
  });
});
