// The shared budget through Redis faults: Redis paused (SIGSTOP) for 5 s, then killed, then
// restarted on the same port, while two "processes" (two budgets, one per client library, each
// with its own connection) keep sending requests to a real node:http server. Every request must
// succeed, none may wait for Redis, each budget must report its fallback, and both must be shared
// again within 5 s of the restart.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { constant, noJitter, retry } from '../../packages/ebb/src/index.js';
import { type SharedEvent, type SharedTokenBudget, sharedTokenBudget } from '../../packages/ebb/src/redis/index.js';
import { connectBoth, expectFellBackWhilePaused, type Phase, pauseKillRestart, quantile } from './support/faults.js';
import { haveRedis, type RedisServer, startRedis } from './support/redis-server.js';

const enabled = haveRedis();
const TIMEOUT_MS = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!enabled)('shared tokenBudget through Redis faults (real redis-server)', () => {
  let redis: RedisServer;
  let http: Server;
  let url = '';
  beforeAll(async () => {
    redis = await startRedis();
    // The first attempt of every 10th operation fails with 503 (its retry succeeds), so failures
    // reach the budget, and Redis, all along; an operation can fail only if its retry is refused.
    const seen = new Set<string>();
    http = createServer((req, res) => {
      const op = req.url ?? '';
      const first = !seen.has(op);
      seen.add(op);
      res.writeHead(first && Number(op.slice(4)) % 10 === 0 ? 503 : 200).end('x');
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(http.address() as { port: number }).port}/`;
  });
  afterAll(async () => {
    http?.closeAllConnections();
    await new Promise((resolve) => http?.close(resolve));
    await redis?.stop();
  });

  it('SIGSTOP 5 s, SIGKILL, restart: 0 requests fail, none waits for Redis, fallback observed, shared again within 5 s', async () => {
    const { nodeClient, ioClient, close } = await connectBoth(redis.url);

    let phase: Phase = 'before';
    const events: Array<SharedEvent & { who: string; phase: Phase }> = [];
    const make = (who: string, client: unknown) =>
      sharedTokenBudget({
        client,
        name: 'faults',
        maxTokens: 100,
        tokenRatio: 0.5,
        commandTimeoutMs: TIMEOUT_MS,
        syncIntervalMs: 200,
        onEvent: (e) => events.push({ ...e, who, phase }),
      });
    const budgets: SharedTokenBudget[] = [make('node-redis', nodeClient), make('ioredis', ioClient)];
    await Promise.all(budgets.map((b) => b.ready()));
    expect(budgets.map((b) => b.mode)).toEqual(['shared', 'shared']);

    const latency: Record<Phase, number[]> = {
      before: [],
      paused: [],
      down: [],
      after: [],
    };
    let failed = 0;
    let nextOp = 0;
    const reasons: string[] = [];
    let ok = 0;
    let stop = false;
    // Five loops per budget, each one request at a time, bounded by `stop` and by 10,000 requests.
    const loop = async (budget: SharedTokenBudget) => {
      for (let i = 0; i < 10_000 && !stop; i++) {
        const op = nextOp++;
        const t0 = performance.now();
        try {
          await retry(
            async () => {
              const res = await fetch(`${url}op/${op}`);
              await res.arrayBuffer();
              if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
            },
            { backoff: constant({ delayMs: 5, maxAttempts: 4, jitter: noJitter }), budget },
          );
          ok++;
        } catch (error) {
          failed++;
          const e = error as { reason?: string; cause?: { message?: string }; message?: string };
          reasons.push(`${phase}: ${e.reason ?? ''} ${e.cause?.message ?? e.message}`);
        }
        latency[phase].push(performance.now() - t0);
        await sleep(10);
      }
    };
    const loops = budgets.flatMap((b) => Array.from({ length: 5 }, () => loop(b)));

    await sleep(1500);
    // Shared again: both budgets back in 'shared' mode.
    const { resyncMs } = await pauseKillRestart(
      redis,
      (p) => {
        phase = p;
      },
      () => budgets.every((b) => b.mode === 'shared'),
    );
    const modes = budgets.map((b) => b.mode);
    await sleep(500);
    stop = true;
    await Promise.all(loops);

    const median = (xs: number[]) => quantile(xs, 0.5);
    const p99 = (xs: number[]) => quantile(xs, 0.99);
    console.info(
      `requests ok ${ok}, failed ${failed}; median/p99 ms — before ${median(latency.before).toFixed(1)}/${p99(latency.before).toFixed(1)}, ` +
        `paused ${median(latency.paused).toFixed(1)}/${p99(latency.paused).toFixed(1)}, down ${median(latency.down).toFixed(1)}/${p99(latency.down).toFixed(1)}; ` +
        `shared again ${resyncMs.toFixed(0)} ms after the restart; stats ${JSON.stringify(budgets.map((b) => b.stats))}`,
    );
    expect(reasons).toEqual([]);
    expect(failed).toBe(0);
    expect(latency.paused.length).toBeGreaterThan(50); // requests went on while Redis was stopped
    expect(latency.down.length).toBeGreaterThan(20);
    // No request waits for Redis: the median while Redis is stopped or gone is within the Redis
    // timeout of the median before (a request never waits even that long: budget calls are synchronous).
    expect(median(latency.paused)).toBeLessThan(median(latency.before) + TIMEOUT_MS);
    expect(median(latency.down)).toBeLessThan(median(latency.before) + TIMEOUT_MS);
    expect(modes).toEqual(['shared', 'shared']);
    expect(resyncMs).toBeLessThan(5000);
    expectFellBackWhilePaused(
      budgets.map((b) => b.stats),
      events,
    );
    for (const b of budgets) await b.close();
    close();
  }, 60_000);
});
