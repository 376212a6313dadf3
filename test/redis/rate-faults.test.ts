// The shared rate through Redis faults: Redis paused (SIGSTOP) for 5 s, then killed, then
// restarted on the same port, while two "processes" (two sharedRates, one per client library, each
// with its own connection and 5 closed loops of withRetry(fetch)) send to a real nginx limit_req
// of 50 r/s. No request may fail, none may wait for Redis longer than the Redis timeout, both must
// fall back to local controllers (seeded with their shares) and keep the fleet near the limit, and
// both must be shared again within 5 s of the restart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SharedEvent, type SharedRate, sharedRate } from '../../packages/ebb/src/redis/index.js';
import { haveLimiter, type Limiter, startLimiter } from '../rate/support/limiters.mjs';
import { connectBoth, expectFellBackWhilePaused, type Phase, pauseKillRestart, quantile } from './support/faults.js';
import { haveRedis, type RedisServer, startRedis } from './support/redis-server.js';

// Both checked, so that the skip records every server missing.
const enabled = [haveRedis(), haveLimiter('nginx')].every(Boolean);
const LIMIT = 50;
const TIMEOUT_MS = 250;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!enabled)('sharedRate through Redis faults (real redis-server, real nginx)', () => {
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

  it('SIGSTOP 5 s, SIGKILL, restart: 0 requests fail, none waits for Redis, the fleet stays near the limit, shared again within 5 s', async () => {
    const { nodeClient, ioClient, close } = await connectBoth(redis.url);

    let phase: Phase = 'before';
    const began = performance.now();
    const events: Array<SharedEvent & { who: string; phase: Phase }> = [];
    const make = (who: string, client: unknown) =>
      sharedRate({
        client,
        name: 'rate-faults',
        initialRatePerSecond: LIMIT,
        commandTimeoutMs: TIMEOUT_MS,
        onEvent: (e) => events.push({ ...e, who, phase }),
      });
    const rates: SharedRate[] = [make('node-redis', nodeClient), make('ioredis', ioClient)];
    await Promise.all(rates.map((r) => r.ready()));
    expect(rates.map((r) => r.mode)).toEqual(['shared', 'shared']);

    // Per request: the time acquire() took beyond the pace — how long a request waited for Redis.
    const acquireMs: Record<Phase, number[]> = { before: [], paused: [], down: [], after: [] };
    const okPerSecond: number[] = [];
    const phaseOf: Phase[] = [];
    const failures: string[] = [];
    let stop = false;
    // Five loops per controller, each one request at a time, bounded by `stop` and by 5,000 requests.
    const loop = async (rate: SharedRate) => {
      for (let i = 0; i < 5000 && !stop; i++) {
        const t0 = performance.now();
        let ticket: unknown;
        try {
          ticket = await rate.acquire();
        } catch (error) {
          failures.push(`${phase}: acquire ${String(error)}`);
          continue;
        }
        const waited = performance.now() - t0;
        acquireMs[phase].push(waited);
        try {
          const res = await fetch(nginx.url('/full'));
          await res.arrayBuffer();
          const s = Math.floor((performance.now() - began) / 1000);
          if (res.status === 200) {
            okPerSecond[s] = (okPerSecond[s] ?? 0) + 1;
            phaseOf[s] = phase;
          }
          rate.record(res.status === 429 ? 'throttled' : res.ok ? 'success' : 'failure', ticket);
        } catch (error) {
          failures.push(`${phase}: fetch ${String(error)}`);
          rate.release?.(ticket);
        }
      }
    };
    const loops = rates.flatMap((r) => Array.from({ length: 5 }, () => loop(r)));

    await sleep(4000);
    let pausedAtS = 0;
    let downEndS = 0;
    const second = () => (performance.now() - began) / 1000;
    // Shared again: both controllers in 'shared' mode.
    const { resyncMs } = await pauseKillRestart(
      redis,
      (p) => {
        if (p === 'paused') pausedAtS = Math.ceil(second());
        // Down for 2 s from now: the restart begins in the second after the last whole one down.
        if (p === 'down') downEndS = Math.floor(second() + 2);
        phase = p;
      },
      () => rates.every((r) => r.mode === 'shared'),
    );
    const modes = rates.map((r) => r.mode);
    await sleep(2000);
    stop = true;
    await Promise.all(loops);

    // The fleet on fallback: whole seconds from one after the pause began (the fallback takes
    // one timeout) to the restart.
    const fallbackSeconds = okPerSecond.slice(pausedAtS + 1, downEndS);
    const fallbackRate = fallbackSeconds.reduce((a, b) => a + (b ?? 0), 0) / fallbackSeconds.length;
    console.info(
      `ok/s ${JSON.stringify(okPerSecond)} (pause from s ${pausedAtS}, restart at s ${downEndS}); on fallback ${fallbackRate.toFixed(1)} r/s; ` +
        `acquire wait p50/p99/max ms — ${(['before', 'paused', 'down', 'after'] as const)
          .map(
            (p) =>
              `${p} ${quantile(acquireMs[p], 0.5).toFixed(0)}/${quantile(acquireMs[p], 0.99).toFixed(0)}/${Math.max(...acquireMs[p]).toFixed(0)}`,
          )
          .join(', ')}; shared again ${resyncMs.toFixed(0)} ms after the restart; ` +
        `stats ${JSON.stringify(rates.map((r) => r.stats))}; events ${JSON.stringify(events.map((e) => [e.who, e.type, e.phase]))}`,
    );
    expect(failures).toEqual([]);
    expect(acquireMs.paused.length).toBeGreaterThan(50); // requests went on while Redis was stopped
    expect(acquireMs.down.length).toBeGreaterThan(20);
    // No request waits for Redis: the pace is 10 loops at 50 r/s (about 200 ms a request); the
    // median wait while Redis is stopped or gone is within the Redis timeout of the one before.
    expect(quantile(acquireMs.paused, 0.5)).toBeLessThan(quantile(acquireMs.before, 0.5) + TIMEOUT_MS);
    expect(quantile(acquireMs.down, 0.5)).toBeLessThan(quantile(acquireMs.before, 0.5) + TIMEOUT_MS);
    // The fleet stays within the limit ± 20 % on its local controllers.
    expect(fallbackRate).toBeGreaterThanOrEqual(0.8 * LIMIT);
    expect(fallbackRate).toBeLessThanOrEqual(1.2 * LIMIT);
    expect(modes).toEqual(['shared', 'shared']);
    expect(resyncMs).toBeLessThan(5000);
    expectFellBackWhilePaused(
      rates.map((r) => r.stats),
      events,
    );
    for (const r of rates) await r.close();
    close();
  }, 60_000);
});
