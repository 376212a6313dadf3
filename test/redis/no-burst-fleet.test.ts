// Against nginx's default limit_req — no burst: a request closer than 1 / rate to the last one it
// accepted is refused — a fleet that shares one rate must do at least as well as the same
// processes each with its own adaptiveRate. Six Node.js processes with one sharedRate (time
// division: each member sends in its turns of the fleet's rate, on the Redis server's clock) and,
// at the same time against a second nginx with the same limit, six with an adaptiveRate each, both
// starting at the limit in all; two settings, 10 and 30 r/s. Figures from second 4 to the end;
// docs/redis.md has the measured table (bench/figures/redis-no-burst.mjs).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { available, type Limiter, startLimiter } from '../rate/support/limiters.mjs';
import { type FleetSummary, runRateFleet, summarize } from './support/rate-fleet.mjs';
import { haveRedis, type RedisServer, startRedis } from './support/redis-server.js';

const enabled = haveRedis() && available().found.includes('nginx');
const PROCESSES = 6;
const SECONDS = 18;
const FROM_S = 4;

describe.skipIf(!enabled)('nginx limit_req without burst: one shared rate against independent controllers', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  for (const limit of [10, 30]) {
    it(`${limit} r/s: the shared fleet accepts more than six adaptiveRates, with fewer 429s`, async () => {
      const limiters: Limiter[] = [];
      try {
        const [forShared, forLocal] = await Promise.all([
          startLimiter('nginx', { ratePerSecond: limit, burst: 0 }),
          startLimiter('nginx', { ratePerSecond: limit, burst: 0 }),
        ]);
        limiters.push(forShared as Limiter, forLocal as Limiter);
        const members = Array.from({ length: PROCESSES }, () => ({ atS: 0, seconds: SECONDS }));
        const [shared, local] = await Promise.all([
          runRateFleet({
            url: (forShared as Limiter).url('/full'),
            redisUrl: redis.url,
            name: `no-burst-${limit}`,
            kind: 'shared',
            members,
            clients: 4,
            initialRatePerSecond: limit,
          }),
          runRateFleet({
            url: (forLocal as Limiter).url('/full'),
            name: 'local',
            kind: 'local',
            members,
            clients: 4,
            initialRatePerSecond: limit / PROCESSES,
          }),
        ]);
        const s = summarize(shared, limit, { from: FROM_S, to: SECONDS });
        const l = summarize(local, limit, { from: FROM_S, to: SECONDS });
        const line = (name: string, x: FleetSummary) =>
          `${name}: ${x.acceptedPerSecond.toFixed(1)} r/s accepted (${(100 * x.ofLimit).toFixed(0)} % of ${limit}), ${(100 * x.throttledShare).toFixed(1)} % 429s; ok/s ${JSON.stringify(x.ok)}`;
        console.info(`${line('shared', s)}\n${line('independent', l)}`);
        for (const r of [...shared, ...local]) expect(r.outcome.errors).toEqual({});
        // Measured (docs/redis.md): the shared fleet about twice the independent ones' accepted
        // rate, with a tenth of their 429s or less. Asserted with margins for a loaded machine.
        expect(s.acceptedPerSecond).toBeGreaterThanOrEqual(1.2 * l.acceptedPerSecond);
        expect(s.throttledShare).toBeLessThanOrEqual(0.5 * l.throttledShare);
        expect(s.throttledShare).toBeLessThanOrEqual(0.05);
      } finally {
        for (const x of limiters) await x.stop();
      }
    }, 90_000);
  }
});
