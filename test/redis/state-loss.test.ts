// The fleet's state lost under live processes — FLUSHALL, a restart without persistence, a
// failover to a replica that lagged — against real redis-servers. Each shared structure carries a
// generation written with its state; a reply whose generation differs from the one a process last
// heard (or whose epoch went back) means the state it knew is gone: the process restarts its epoch
// bookkeeping, hears throttles at once, seeds the new state from its own last good view (not from
// a cold start) and says so with a 'state-lost' event.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisScripts } from '../../packages/ebb/src/redis/client.js';
import {
  type SharedEvent,
  type SharedRate,
  sharedRate,
  sharedRatioBudget,
  sharedTokenBudget,
} from '../../packages/ebb/src/redis/index.js';
import { haveRedis, type RedisServer, startRedis } from './support/redis-server.js';

const enabled = haveRedis();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function connect(url: string): Promise<Redis> {
  const c = new Redis(url, { maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => 50 });
  c.on('error', () => {});
  await new Promise((resolve) => c.once('ready', resolve));
  return c;
}

/** 30 successes, then one throttle: the fleet's first cut (100 → 50 r/s here, blind). */
async function firstCut(rate: SharedRate): Promise<void> {
  for (let i = 0; i < 30; i++) rate.record('success', await rate.acquire());
  rate.record('throttled', await rate.acquire());
  for (let i = 0; i < 40 && rate.epoch < 1; i++) await sleep(25);
}

/** `n` requests, each throttled, 50 ms apart: what a process sees while its service refuses it. */
async function throttled(rate: SharedRate, n = 30): Promise<void> {
  for (let i = 0; i < n; i++) {
    rate.record('throttled', await rate.acquire());
    await sleep(50);
  }
}

describe.skipIf(!enabled)('the fleet’s state lost under live processes (real redis-server)', () => {
  let server: RedisServer;
  let c: Redis;
  beforeAll(async () => {
    server = await startRedis();
    c = await connect(server.url);
  });
  afterAll(async () => {
    c?.disconnect();
    await server?.stop();
  });

  it('sharedRate after FLUSHALL: hears the next throttles at once, cuts, and says the state was lost', async () => {
    const events: SharedEvent[] = [];
    const rate = sharedRate({
      client: c,
      name: 'flushed',
      initialRatePerSecond: 100,
      // No cut goes below 20 r/s: no request of the test waits longer than 50 ms for its turn.
      minRatePerSecond: 20,
      leaseMs: 100,
      onEvent: (e) => events.push(e),
    });
    await rate.ready();
    await firstCut(rate);
    expect(rate.epoch).toBe(1);
    const before = rate.fleetRatePerSecond;
    expect(before).toBe(50);
    await c.flushall();
    await throttled(rate);
    // Before the fix: the process kept the epoch it had heard, dropped every throttle whose epoch
    // was at or below it, sent none, and the fleet's rate rose from the seed.
    expect(rate.stats.throttlesSent).toBeGreaterThanOrEqual(3);
    expect(rate.fleetRatePerSecond).toBeLessThan(before);
    expect(rate.stats.stateLosses).toBe(1);
    expect(events.filter((e) => e.type === 'state-lost')).toHaveLength(1);
    expect(events.find((e) => e.type === 'state-lost')).toMatchObject({ key: 'ebb:{flushed}:rate' });
    await rate.close();
  });

  it('sharedRate after a restart without persistence: the new state starts from the rate the fleet had learned, and throttles are heard', async () => {
    const events: SharedEvent[] = [];
    const rate = sharedRate({
      client: c,
      name: 'restarted',
      initialRatePerSecond: 100,
      // No cut goes below 20 r/s: no request of the test waits longer than 50 ms for its turn.
      minRatePerSecond: 20,
      leaseMs: 100,
      onEvent: (e) => events.push(e),
    });
    await rate.ready();
    await firstCut(rate);
    expect(rate.fleetRatePerSecond).toBe(50);
    await server.kill();
    await sleep(300);
    await server.start();
    for (let i = 0; i < 100 && !(rate.mode === 'shared' && rate.stats.resyncs > 0); i++) {
      rate.record('success', await rate.acquire());
      await sleep(50);
    }
    expect(rate.mode).toBe('shared');
    // Seeded from the process's last good view (50), not from initialRatePerSecond (100).
    expect(Number(await c.hget('ebb:{restarted}:rate', 'r'))).toBe(50);
    await throttled(rate);
    expect(rate.stats.throttlesSent).toBeGreaterThanOrEqual(3);
    expect(rate.fleetRatePerSecond).toBeLessThan(50);
    expect(rate.stats.stateLosses).toBe(1);
    await rate.close();
  });

  it('sharedRate after a failover to a replica that lagged: the epoch went back, and throttles are heard', async () => {
    // Without the 5-s wait before a diskless full sync (Redis's default), the replica follows at once.
    await c.config('SET', 'repl-diskless-sync-delay', '0');
    const replica = await startRedis(['--replicaof', '127.0.0.1', String(server.port)]);
    const r = await connect(replica.url);
    try {
      // The client as a failover-aware wrapper would be: its target switches to the promoted replica.
      let target = c;
      const scripts: RedisScripts = {
        evalSha: (sha, keys, args) => target.evalsha(sha, keys.length, ...keys, ...args),
        eval: (source, keys, args) => target.eval(source, keys.length, ...keys, ...args),
      };
      const events: SharedEvent[] = [];
      const rate = sharedRate({
        client: scripts,
        name: 'failover',
        initialRatePerSecond: 100,
        minRatePerSecond: 20,
        leaseMs: 100,
        onEvent: (e) => events.push(e),
      });
      await rate.ready();
      await firstCut(rate);
      // The replica has epoch 1; then it stops following and the master moves on.
      for (let i = 0; i < 100 && (await r.hget('ebb:{failover}:rate', 'e')) !== '1'; i++) await sleep(20);
      expect(await r.hget('ebb:{failover}:rate', 'e')).toBe('1');
      await r.replicaof('NO', 'ONE');
      await throttled(rate);
      const heard = rate.epoch;
      expect(heard).toBeGreaterThan(1);
      target = r;
      const sentBefore = rate.stats.throttlesSent;
      await throttled(rate);
      expect(rate.stats.throttlesSent).toBeGreaterThanOrEqual(sentBefore + 2);
      expect(Number(await r.hget('ebb:{failover}:rate', 'e'))).toBeGreaterThan(1);
      expect(events.filter((e) => e.type === 'state-lost').map((e) => e.field)).toEqual(['epoch']);
      await rate.close();
    } finally {
      r.disconnect();
      await replica.stop();
    }
  });

  it('a token budget after FLUSHALL starts from the level it last heard, not full', async () => {
    const events: SharedEvent[] = [];
    const budget = sharedTokenBudget({ client: c, name: 'flushed-budget', onEvent: (e) => events.push(e) });
    await budget.ready();
    for (let i = 0; i < 4; i++) budget.recordFailure();
    await budget.flush();
    expect(budget.tokens).toBe(6);
    await c.flushall();
    budget.recordFailure();
    await budget.flush();
    // Before the fix: the flushed key started full again (10 − 1 = 9 tokens).
    expect(budget.tokens).toBe(5);
    expect(await c.hget(budget.key, 'l')).toBe('5000');
    expect(budget.stats.stateLosses).toBe(1);
    expect(events.map((e) => e.type)).toEqual(['state-lost']);
    await budget.close();
  });

  it('a ratio budget after FLUSHALL keeps the deposits it last heard (a window is seeded, not emptied)', async () => {
    const budget = sharedRatioBudget({
      client: c,
      name: 'flushed-ratio',
      percentCanRetry: 0.5,
      minRetriesPerSecond: 0,
    });
    await budget.ready();
    for (let i = 0; i < 10; i++) budget.recordRequest();
    await budget.flush();
    expect(budget.balance).toBe(5);
    await c.flushall();
    budget.recordRequest();
    await budget.flush();
    // Before the fix: an empty window, 0.5 retries' worth.
    expect(budget.balance).toBe(5);
    expect(budget.stats.stateLosses).toBe(1);
    await budget.close();
  });
});
