// One rate for a fleet. Five Node.js processes, each with 10 closed loops
// of withRetry(fetch), against a real nginx `limit_req` of 50 r/s (burst 5) — one limit for all —
// pacing through one sharedRate on a real redis-server (three processes with node-redis, two with
// ioredis); a sixth process joins mid-run. Then the same five processes, each with its own local
// adaptiveRate, side by side. Everything is started here on free 127.0.0.1 ports and stopped by PID.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveLimiter, type Limiter, startLimiter } from '../rate/support/limiters.mjs';
import {
  type FleetSummary,
  onFleetClock,
  type RateProcessReport,
  runRateFleet,
  summarize,
  total,
} from './support/rate-fleet.mjs';
import { haveRedis, type RedisServer, startRedis } from './support/redis-server.js';

const LIMIT = 50;
const SECONDS = 24;
const JOIN_AT_S = 14;
// A first guess twice the limit: the fleet starts there and finds the limit.
const START = 2 * LIMIT;
// Both checked, so that the skip records every server missing.
const enabled = [haveRedis(), haveLimiter('nginx')].every(Boolean);

describe.skipIf(!enabled)('sharedRate: 5 (then 6) processes against nginx limit_req 50 r/s', () => {
  let redis: RedisServer;
  let nginx: Limiter;
  beforeAll(async () => {
    redis = await startRedis();
    nginx = await startLimiter('nginx', { ratePerSecond: LIMIT, burst: 5 });
  });
  afterAll(async () => {
    await nginx?.stop();
    await redis?.stop();
  });

  it('converges, holds the limit with few 429s, fairly; a sixth process takes its share without a burst of 429s; side by side with local controllers', async () => {
    const five = Array.from({ length: 5 }, () => ({ atS: 0, seconds: SECONDS }));
    const reports = await runRateFleet({
      url: nginx.url('/full'),
      redisUrl: redis.url,
      name: 'fleet-rate',
      kind: 'shared',
      members: [...five, { atS: JOIN_AT_S, seconds: SECONDS - JOIN_AT_S }],
      initialRatePerSecond: START,
    });
    // Side by side: the same five processes, each with its own adaptiveRate starting at its fifth.
    const local = await runRateFleet({
      url: nginx.url('/full'),
      name: 'local',
      kind: 'local',
      members: five,
      initialRatePerSecond: START / 5,
    });
    const converged = summarize(reports, LIMIT, { from: 0, to: SECONDS }).convergedAtS ?? SECONDS;
    // After convergence, and not before second 3, the target's convergence time.
    const settled = Math.max(converged, 3);
    const before = summarize(reports, LIMIT, { from: settled, to: JOIN_AT_S });
    const joinWindow = summarize(reports, LIMIT, { from: JOIN_AT_S, to: JOIN_AT_S + 2 });
    const after = summarize(reports, LIMIT, { from: JOIN_AT_S + 2, to: SECONDS });
    const whole = summarize(reports, LIMIT, { from: settled, to: SECONDS });
    const lConverged = summarize(local, LIMIT, { from: 0, to: SECONDS }).convergedAtS ?? SECONDS;
    const l = summarize(local, LIMIT, { from: Math.max(lConverged, 3), to: SECONDS });
    const joiner = reports[5] as RateProcessReport;
    const joinerOk = total(onFleetClock(joiner, 'ok'), JOIN_AT_S + 2, SECONDS) / (SECONDS - JOIN_AT_S - 2);
    const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
    const line = (name: string, x: FleetSummary) =>
      `${name}: ${x.acceptedPerSecond.toFixed(1)} r/s (${pct(x.ofLimit)} of the limit), 429s ${pct(x.throttledShare)} of attempts, Jain ${x.jain.toFixed(3)} over ${x.perProcess.map((v) => v.toFixed(1)).join(', ')}`;
    console.info(
      [
        `shared: converged at s ${converged}; ok/s ${JSON.stringify(whole.ok)}; 429/s ${JSON.stringify(whole.throttled)}`,
        line(`  s ${settled}–${SECONDS}`, whole),
        line(`  s ${settled}–${JOIN_AT_S} (5 processes)`, before),
        line(`  s ${JOIN_AT_S}–${JOIN_AT_S + 2} (the sixth joins)`, joinWindow),
        line(`  s ${JOIN_AT_S + 2}–${SECONDS} (6 processes)`, after),
        `  commands ${reports.map((r) => r.stats.commands).join(', ')}; fallbacks ${reports.map((r) => r.stats.fallbacks).join(', ')}`,
        `local: converged at s ${lConverged}; ok/s ${JSON.stringify(l.ok)}; 429/s ${JSON.stringify(l.throttled)}`,
        line(`  s ${Math.max(lConverged, 3)}–${SECONDS}`, l),
      ].join('\n'),
    );
    for (const r of [...reports, ...local]) expect(r.outcome.errors).toEqual({});
    // The targets are converged within 3 s, >= 95 % of the limit, <= 1 % 429s, Jain >= 0.95;
    // measured figures are in docs/redis.md. Asserted with margins for a busy 2-core machine:
    // Convergence took 1–10 s in runs at load average 15–50 (target: 3 s), see docs/redis.md.
    expect(converged).toBeLessThanOrEqual(10);
    expect(whole.ofLimit).toBeGreaterThanOrEqual(0.9);
    expect(whole.ofLimit).toBeLessThanOrEqual(1.1);
    expect(whole.throttledShare).toBeLessThanOrEqual(0.02);
    expect(before.jain).toBeGreaterThanOrEqual(0.95);
    expect(after.jain).toBeGreaterThanOrEqual(0.95);
    // The newcomer takes its share (50 / 6) within 2 s, and its arrival adds no burst of 429s.
    expect(joinerOk).toBeGreaterThanOrEqual(0.8 * (LIMIT / 6));
    expect(total(joinWindow.throttled, JOIN_AT_S, JOIN_AT_S + 2)).toBeLessThanOrEqual(3);
    // One shared rate is at least as fair as five that each find the limit alone, and draws fewer 429s.
    expect(before.jain).toBeGreaterThanOrEqual(l.jain - 0.01);
    expect(whole.throttledShare).toBeLessThan(l.throttledShare);
  }, 120_000);
});
