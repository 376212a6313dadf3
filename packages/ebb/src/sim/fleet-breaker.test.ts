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
    // The partitioned member may win the first probe after recovery and fail it; it then leaves
    // the next one to the others: two open periods (4 s each) and a report period at most.
    expect(r.shared.firstSuccessAfterMs).toBeLessThanOrEqual(2 * 4000 + 1000);
    expect(r.shared.commandsPerCall).toBeLessThanOrEqual(0.1);
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
