// A shared budget bounds retries across process lifetimes. 200 short-lived
// processes (at most 20 alive at once) each make 5 requests with up to 3 attempts against a real
// node:http server that answers 503 to everything (a total outage). With its own tokenBudget every
// process starts with a full bucket and retries; with the shared one, the fleet drains one bucket
// in Redis once and retries stop for everybody.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveRedis, type RedisServer, startRedis } from './support/redis-server.js';

const CHILD = fileURLToPath(new URL('./support/short-lived.mjs', import.meta.url));
const enabled = haveRedis();

interface ChildResult {
  requests: number;
  attempts: number;
  gaveUpForBudget: number;
  stats?: { mode: string; commands: number; errors: number };
}

function child(args: string[]): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CHILD, ...args], { timeout: 150_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as ChildResult),
    );
  });
}

/** Runs `count` children, at most `alive` at once, and returns their results. */
async function fleet(count: number, alive: number, argsOf: (i: number) => string[]): Promise<ChildResult[]> {
  const results: ChildResult[] = [];
  let next = 0;
  let peak = 0;
  let running = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      running++;
      peak = Math.max(peak, running);
      try {
        results.push(await child(argsOf(i)));
      } finally {
        running--;
      }
    }
  };
  await Promise.all(Array.from({ length: alive }, worker));
  expect(peak).toBeLessThanOrEqual(alive);
  return results;
}

const amplification = (rs: ChildResult[]) =>
  rs.reduce((s, r) => s + r.attempts, 0) / rs.reduce((s, r) => s + r.requests, 0);

describe.skipIf(!enabled)('a shared tokenBudget across 200 short-lived processes (real redis-server)', () => {
  let redis: RedisServer;
  let http: Server;
  let url = '';
  let received = 0;
  beforeAll(async () => {
    redis = await startRedis();
    http = createServer((_req, res) => {
      received++;
      res.writeHead(503).end('outage');
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(http.address() as { port: number }).port}/`;
  });
  afterAll(async () => {
    await new Promise((resolve) => http?.close(resolve));
    await redis?.stop();
  });

  it('retries per request ≤ 1.1× with the shared budget, against the per-process amplification measured here', async () => {
    // Per-process budgets: every process is alike (each starts full), so 20 processes measure it.
    const local = await fleet(20, 20, () => [url, redis.url, 'local', 'none', 'unused', '5']);
    const localAmp = amplification(local);

    received = 0;
    const shared = await fleet(200, 20, (i) => [
      url,
      redis.url,
      'shared',
      i % 2 ? 'ioredis' : 'node-redis',
      'lifetimes',
      '5',
    ]);
    const sharedAmp = amplification(shared);
    const attempts = shared.reduce((s, r) => s + r.attempts, 0);
    // The server saw exactly what the processes counted.
    expect(received).toBe(attempts);
    expect(shared.every((r) => r.stats?.mode === 'shared' && r.stats.errors === 0)).toBe(true);
    console.info(
      `total outage, 5 requests × 3 attempts a process: per-process tokenBudget ${localAmp.toFixed(3)}×, ` +
        `shared ${sharedAmp.toFixed(3)}× (${attempts} attempts for ${shared.length * 5} requests)`,
    );
    expect(sharedAmp).toBeLessThanOrEqual(1.1);
    expect(localAmp).toBeGreaterThan(1.1);
  }, 600_000);
});
