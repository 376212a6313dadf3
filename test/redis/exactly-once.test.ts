// Each change applied exactly once: three Node.js processes (node-redis, ioredis, node-redis)
// change a token budget, an AWS retry quota, a ratio budget and the SRE throttle's two windows
// every 20 ms for 4 s, while Redis is stopped (SIGSTOP) for 1.5 s — fifteen times the 100-ms
// timeout. The calls that timed out are still on live connections, and Redis runs them when it is
// continued; the calls sent after them carry the same changes again. What Redis holds afterwards,
// read directly, must equal what the processes recorded, exactly. The same fleet on a second
// redis-server without the pause is the control. Both run at once.
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMembers } from './support/members.mjs';
import { haveRedis, type RedisServer, startRedis } from './support/redis-server.js';

const enabled = haveRedis();
const MEMBER = fileURLToPath(new URL('./support/budget-process.mjs', import.meta.url));
const LIBRARIES = ['node-redis', 'ioredis', 'node-redis'] as const;
const SECONDS = 4;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Report {
  counts: {
    failures: number;
    quotaTaken: number;
    requests: number;
    retries: number;
    asked: number;
    accepted: number;
    rejectedLocally: number;
  };
  stats: Record<string, { fallbacks: number; resyncs: number; errors: number; repairs: number }>;
  events: { type: string; key?: string; field?: string }[];
}

/** A clamped level as stored: a hash's `l` (or, in an older layout, the string itself). */
async function level(c: Redis, key: string): Promise<number> {
  return Number((await c.type(key)) === 'string' ? await c.get(key) : await c.hget(key, 'l'));
}

/** A window's sum as stored: every slice of the hash (fields named by a slice number). */
async function windowSum(c: Redis, key: string): Promise<number> {
  const h = await c.hgetall(key);
  return Object.entries(h)
    .filter(([k]) => /^-?\d+$/.test(k))
    .reduce((a, [, v]) => a + Number(v), 0);
}

async function audit(server: RedisServer, name: string, reports: Report[]) {
  const c = new Redis(server.url, { maxRetriesPerRequest: 0 });
  try {
    const sum = (k: keyof Report['counts']) => reports.reduce((a, r) => a + r.counts[k], 0);
    return {
      recorded: {
        token: 1_000_000 - 1000 * sum('failures'),
        quota: 100_000 - 14 * sum('quotaTaken'),
        // Finagle's arithmetic: a deposit of 1,000 a request; a retry at 50 % withdraws 2,000.
        ratio: 1000 * sum('requests') - 2000 * sum('retries'),
        requests: sum('asked'),
        accepts: sum('accepted'),
      },
      applied: {
        token: await level(c, `ebb:{${name}}:token-budget`),
        quota: await level(c, `ebb:{${name}}:aws-retry-quota`),
        ratio: await windowSum(c, `ebb:{${name}}:ratio-budget`),
        requests: await windowSum(c, `ebb:{${name}}:throttle-requests`),
        accepts: await windowSum(c, `ebb:{${name}}:throttle-accepts`),
      },
    };
  } finally {
    c.disconnect();
  }
}

describe.skipIf(!enabled)('each change applied exactly once (3 processes, real redis-servers)', () => {
  let stopped: RedisServer;
  let control: RedisServer;
  beforeAll(async () => {
    [stopped, control] = await Promise.all([startRedis(), startRedis()]);
  });
  afterAll(async () => {
    await stopped?.stop();
    await control?.stop();
  });

  it('Redis stopped for 15 × commandTimeoutMs while budgets take changes, then continued: what Redis holds equals what was recorded; the same without the pause', async () => {
    const fleet = (server: RedisServer, name: string, onStart?: (ms: number) => void) =>
      runMembers<Report>(
        MEMBER,
        LIBRARIES.map((library) => [server.url, name, library, SECONDS]),
        { onStart },
      );
    let paused = Promise.resolve();
    const [withPause, without] = await Promise.all([
      fleet(stopped, 'paused', (start) => {
        paused = (async () => {
          await sleep(start - Date.now() + 1200);
          stopped.signal('SIGSTOP');
          await sleep(1500);
          stopped.signal('SIGCONT');
        })();
      }),
      fleet(control, 'control'),
    ]);
    await paused;
    const a = await audit(stopped, 'paused', withPause);
    const b = await audit(control, 'control', without);
    console.info(
      `with the pause: ${JSON.stringify(a)}\n  stats ${JSON.stringify(withPause.map((r) => r.stats))}\ncontrol: ${JSON.stringify(b)}`,
    );
    // The pause really made every process fall back, and come back.
    for (const r of withPause) {
      for (const s of Object.values(r.stats)) {
        expect(s.fallbacks).toBeGreaterThanOrEqual(1);
        expect(s.resyncs).toBeGreaterThanOrEqual(1);
      }
    }
    expect(a.recorded.requests).toBeGreaterThan(300);
    // Every request succeeded: the throttle, deciding from its two windows, never rejects one
    // locally — not while one window is answered and its twin times out or resyncs later.
    for (const r of [...withPause, ...without]) expect(r.counts.rejectedLocally).toBe(0);
    expect(a.recorded.ratio).not.toBe(0);
    // Calls that ran late meet only records their own process wrote: nothing is taken for a fault.
    for (const r of [...withPause, ...without]) {
      expect(r.events.filter((e) => e.type === 'repair')).toEqual([]);
      for (const s of Object.values(r.stats)) expect(s.repairs).toBe(0);
    }
    expect(a.applied).toEqual(a.recorded);
    expect(b.applied).toEqual(b.recorded);
  }, 60_000);
});
