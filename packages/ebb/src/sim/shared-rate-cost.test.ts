import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { simulateSharedRateCost } from './shared-rate-cost.js';

describe('simulateSharedRateCost', () => {
  it('a fleet that is always busy renews every lease: exactly processes × 1000 / leaseMs a second, plus the first leases', () => {
    const r = simulateSharedRateCost({
      processes: 1000,
      requestsPerSecond: 1e7,
      eventsPerMinute: 0,
      durationMs: 60_000,
    });
    expect(r.renewalsPerSecond).toBe(2000);
    expect(r.resyncsPerSecond).toBeCloseTo(1000 / 60, 9);
    expect(r.throttleReportsPerSecond).toBe(0);
    expect(r.meanLiveLeases).toBe(1000);
    expect(r.commandsPerRequest).toBeCloseTo((2000 + 1000 / 60) / 1e7, 15);
  });

  it('no traffic, no commands', () => {
    const r = simulateSharedRateCost({ requestsPerSecond: 0, eventsPerMinute: 0 });
    expect([r.commandsPerSecond, r.commandsPerRequest, r.meanLiveLeases]).toEqual([0, 0, 0]);
  });

  it('matches the protocol’s expectation for Poisson arrivals: renewals 1 − e^(−3λ), lapsed-lease asks e^(−3λ)(1 − e^(−λ)) per process and period', () => {
    for (const requestsPerSecond of [200, 1000, 4000]) {
      const processes = 1000;
      const leaseMs = 500;
      const lambda = (requestsPerSecond / processes) * (leaseMs / 1000);
      const periodsPerSecond = 1000 / leaseMs;
      const r = simulateSharedRateCost({
        processes,
        requestsPerSecond,
        leaseMs,
        eventsPerMinute: 0,
        durationMs: 120_000,
        seed: 7,
      });
      const renewals = processes * periodsPerSecond * (1 - Math.exp(-3 * lambda));
      // Plus every process's first lease, once in the 120 s.
      const asks = processes * periodsPerSecond * Math.exp(-3 * lambda) * (1 - Math.exp(-lambda)) + processes / 120;
      expect(r.renewalsPerSecond).toBeGreaterThan(renewals * 0.97);
      expect(r.renewalsPerSecond).toBeLessThan(renewals * 1.03);
      expect(r.resyncsPerSecond).toBeGreaterThan(asks * 0.9 - 1);
      expect(r.resyncsPerSecond).toBeLessThan(asks * 1.1 + 1);
    }
  });

  it('counts one throttle report per process and event', () => {
    const r = simulateSharedRateCost({
      processes: 1,
      requestsPerSecond: 1000,
      eventsPerMinute: 60,
      throttlesPerEvent: 50,
    });
    // One process: 50 429s an event are one report; one event a second.
    expect(r.throttleReportsPerSecond).toBe(1);
    const many = simulateSharedRateCost({
      processes: 100_000,
      requestsPerSecond: 1,
      eventsPerMinute: 60,
      throttlesPerEvent: 5,
      durationMs: 1000,
    });
    expect(many.throttleReportsPerSecond).toBe(5); // distinct processes, almost surely (1 in 10^4 collides)
  });

  it('is reproducible from its seed', () => {
    const a = simulateSharedRateCost({ requestsPerSecond: 500, seed: 3, durationMs: 10_000 });
    const b = simulateSharedRateCost({ requestsPerSecond: 500, seed: 3, durationMs: 10_000 });
    expect(a).toEqual(b);
  });

  it('refuses bad and oversized options at the call, naming the option', () => {
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ requestsPerSecond: Number.NaN }, /`requestsPerSecond`/],
      [{}, /`requestsPerSecond`/],
      [{ requestsPerSecond: 1, processes: 0 }, /`processes`/],
      [{ requestsPerSecond: 1, processes: 2 ** 53 }, /`processes`/],
      [{ requestsPerSecond: 1, leaseMs: 1 }, /`leaseMs`/],
      [{ requestsPerSecond: 1, durationMs: 1e308 }, /`durationMs`/],
      [{ requestsPerSecond: 1, durationMs: 10 }, /`durationMs`/],
      [{ requestsPerSecond: 1, processes: 1_000_000, durationMs: 86_400_000 }, /`durationMs`/],
      [{ requestsPerSecond: 1, throttlesPerEvent: -1 }, /`throttlesPerEvent`/],
      [{ requestsPerSecond: 1, eventsPerMinute: Number.POSITIVE_INFINITY }, /`eventsPerMinute`/],
      [{ requestsPerSecond: 1, seed: 0.5 }, /`seed`/],
      [{ requestsPerSecond: 1, lease: 500 }, /unknown option `lease`/],
    ];
    for (const [o, message] of bad) expect(() => simulateSharedRateCost(o as never)).toThrow(message);
    fc.assert(
      fc.property(fc.anything(), (x) => {
        try {
          simulateSharedRateCost({ requestsPerSecond: x as number, durationMs: 1000, processes: 10 });
        } catch (error) {
          expect(error instanceof TypeError || error instanceof RangeError).toBe(true);
          return;
        }
        expect(typeof x === 'number' && x >= 0 && Number.isFinite(x)).toBe(true);
      }),
    );
  });
});
