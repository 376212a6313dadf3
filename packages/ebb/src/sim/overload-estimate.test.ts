import { describe, expect, it } from 'vitest';
import type { BackoffPolicy } from '../backoff/backoff.js';
import { presets } from '../backoff/presets.js';
import { brookerStrategies } from './contention.js';
import { estimateOverloadRequests, type OverloadOptions, simulateOverload } from './overload.js';

const strategies = brookerStrategies({ baseMs: 100, capMs: 10_000 });

describe('estimateOverloadRequests', () => {
  // The estimate sizes a run before it starts (the CLI warns on long runs and draws its progress
  // from it): it must be near the simulated count across policies that behave very differently.
  it.each<[string, OverloadOptions]>([
    ['full jitter, 1,000 clients', { clients: 1_000, backoff: strategies.full }],
    ['full jitter, 4,000 clients (served over 40 s)', { clients: 4_000, backoff: strategies.full }],
    ['no jitter, 2,000 clients (lockstep waves)', { clients: 2_000, backoff: strategies.exponential }],
    ['equal jitter, no outage', { clients: 3_000, outageMs: 0, backoff: strategies.equal }],
    ['decorrelated jitter', { clients: 2_000, backoff: strategies.decorrelated }],
    ['no backoff at all, 100 clients', { clients: 100, backoff: strategies.none }],
    ['the default policy: 5 attempts, all spent in the outage', { clients: 2_000 }],
    ["Google's HTTP client, a 15-minute budget", { clients: 2_000, backoff: presets.googleHttpClient }],
    ['a short horizon cuts the run', { clients: 4_000, backoff: strategies.exponential, horizonMs: 60_000 }],
  ])('%s: within 0.75–1.4 × of the requests the simulation sends', async (_, options) => {
    const estimate = estimateOverloadRequests(options);
    const { requests } = await simulateOverload(options);
    expect(requests / estimate).toBeGreaterThan(0.75);
    expect(requests / estimate).toBeLessThan(1.4);
  });

  it('grows much faster than the crowd once the crowd outlasts the outage (10 × the clients, over 30 × the requests): the cost a long run warns of', () => {
    const at = (clients: number) => estimateOverloadRequests({ clients, backoff: strategies.full });
    expect(at(50_000) / at(5_000)).toBeGreaterThan(30);
    expect(at(50_000)).toBeGreaterThan(2_000_000);
  });

  it('is deterministic for its options, up to the largest crowd accepted', () => {
    const options = { clients: 1_000_000, backoff: strategies.full, seed: 4 };
    expect(estimateOverloadRequests(options)).toBe(estimateOverloadRequests(options));
    expect(estimateOverloadRequests(options)).not.toBe(estimateOverloadRequests({ ...options, clients: 999_999 }));
  });

  it('checks its options as simulateOverload does, naming itself', () => {
    expect(() => estimateOverloadRequests({ clients: 0 })).toThrow(/^estimateOverloadRequests\(\): .*`clients`/);
    expect(() => estimateOverloadRequests({ capacityPerSecond: 0 })).toThrow(RangeError);
    expect(() => estimateOverloadRequests({ bogus: 1 } as never)).toThrow(/bogus/);
    expect(() => estimateOverloadRequests({ network: { meanMs: -1 } })).toThrow(/network\.meanMs/);
  });

  it('a policy that throws or answers NaN: one request a client, as far as the estimate can tell', () => {
    const throwing: BackoffPolicy = {
      maxElapsedMs: Infinity,
      start: () => {
        throw new Error('policy bug');
      },
    };
    expect(estimateOverloadRequests({ clients: 10, backoff: throwing })).toBe(10);
    const nan: BackoffPolicy = { maxElapsedMs: Infinity, start: () => ({ next: () => Number.NaN }) };
    expect(estimateOverloadRequests({ clients: 10, backoff: nan })).toBe(10);
  });
});

describe('simulateOverload reports progress in requests', () => {
  it('first (0, the estimate) before anything runs; then requests so far; last (requests, requests); a few hundred reports', async () => {
    const options = { clients: 2_000, backoff: strategies.full, seed: 2 };
    const reports: [number, number][] = [];
    const r = await simulateOverload({ ...options, onProgress: (done, total) => reports.push([done, total]) });
    expect(reports[0]).toEqual([0, estimateOverloadRequests(options)]);
    expect(reports.at(-1)).toEqual([r.requests, r.requests]);
    expect(reports.length).toBeGreaterThan(20);
    expect(reports.length).toBeLessThanOrEqual(300);
    for (let i = 1; i < reports.length; i++) {
      const [done, total] = reports[i] as [number, number];
      expect(done).toBeGreaterThanOrEqual((reports[i - 1] as [number, number])[0]);
      expect(total).toBeGreaterThanOrEqual(done);
    }
    // The progress callback observes; it changes nothing.
    expect(await simulateOverload(options)).toEqual(r);
  });
});
