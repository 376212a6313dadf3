// The shared budgets against a real redis-server, with both clients (node-redis 6, ioredis 6).
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedAwsRetryQuota, sharedRatioBudget, sharedTokenBudget } from '../../packages/ebb/src/redis/index.js';
import { haveRedis, type RedisServer, startRedis } from './support/redis-server.js';

const enabled = haveRedis();
let server: RedisServer;
type Client = {
  kind: string;
  client: unknown;
  /** A budget's level as stored (the `l` field of its hash). */
  get(key: string): Promise<string | null>;
  quit(): Promise<void>;
  flushScripts(): Promise<void>;
};
const clients: Client[] = [];

async function nodeRedis(url: string): Promise<Client> {
  const c = createClient({ url });
  c.on('error', () => {});
  await c.connect();
  return {
    kind: 'node-redis',
    client: c,
    get: async (key) => (await c.hGet(key, 'l')) ?? null,
    flushScripts: async () => void (await c.scriptFlush()),
    quit: async () => c.destroy(),
  };
}
async function ioredis(url: string): Promise<Client> {
  const c = new Redis(url, { maxRetriesPerRequest: 0 });
  await new Promise((resolve) => c.once('ready', resolve));
  return {
    kind: 'ioredis',
    client: c,
    get: (key) => c.hget(key, 'l'),
    flushScripts: async () => void (await c.script('FLUSH')),
    quit: async () => c.disconnect(),
  };
}

describe.skipIf(!enabled)('ebb/redis budgets on a real redis-server', () => {
  beforeAll(async () => {
    server = await startRedis();
    clients.push(await nodeRedis(server.url), await ioredis(server.url));
  });
  afterAll(async () => {
    for (const c of clients) await c.quit();
    await server?.stop();
  });

  for (const kind of ['node-redis', 'ioredis']) {
    const pick = () => clients.find((c) => c.kind === kind) as Client;

    it(`${kind}: two budgets with one name share one bucket; a third name is separate`, async () => {
      const { client, get } = pick();
      const name = `tb-${kind}`;
      const a = sharedTokenBudget({ client, name, maxTokens: 10 });
      const b = sharedTokenBudget({ client, name, maxTokens: 10 });
      const other = sharedTokenBudget({ client, name: `${name}-other`, maxTokens: 10 });
      expect(a.tryAcquireRetry()).toBe(false); // refused until the first sync
      await Promise.all([a.ready(), b.ready(), other.ready()]);
      expect([a.mode, b.mode]).toEqual(['shared', 'shared']);
      expect(a.key).toBe(`ebb:{${name}}:token-budget`);
      for (let i = 0; i < 3; i++) a.recordFailure();
      await a.flush();
      expect(await get(a.key)).toBe('7000');
      expect(a.tokens).toBe(7);
      // b learns the fleet's level on its next send: its own failure plus a's three.
      b.recordFailure();
      await b.flush();
      expect(b.tokens).toBe(6);
      expect(b.tryAcquireRetry()).toBe(true);
      b.recordFailure();
      await b.flush();
      expect(b.tokens).toBe(5);
      expect(b.tryAcquireRetry()).toBe(false); // not above half: gRPC's rule, fleet-wide
      // successes are batched: none sent until flush
      const sent = b.stats.commands;
      for (let i = 0; i < 10; i++) b.recordSuccess({ attempt: 1, lastError: undefined });
      expect(b.stats.commands).toBe(sent);
      expect(await get(b.key)).toBe('5000');
      await b.flush();
      expect(b.stats.commands).toBe(sent + 1);
      expect(await get(b.key)).toBe('6000');
      expect(other.tokens).toBe(10);
      await Promise.all([a.close(), b.close(), other.close()]);
    });

    it(`${kind}: a flushed script cache (NOSCRIPT) is reloaded and the call still counts`, async () => {
      const { client, get, flushScripts } = pick();
      const budget = sharedTokenBudget({ client, name: `noscript-${kind}` });
      await budget.ready();
      await flushScripts();
      budget.recordFailure();
      await budget.flush();
      expect(budget.mode).toBe('shared');
      expect(budget.stats.errors).toBe(0);
      expect(await get(budget.key)).toBe('9000');
      await budget.close();
    });

    it(`${kind}: awsRetryQuota and ratioBudget share their state too`, async () => {
      const { client } = pick();
      const q1 = sharedAwsRetryQuota({ client, name: `aws-${kind}`, capacity: 30 });
      const q2 = sharedAwsRetryQuota({ client, name: `aws-${kind}`, capacity: 30 });
      await Promise.all([q1.ready(), q2.ready()]);
      const transient = new Error('503');
      expect(q1.tryAcquireRetry(transient)).toBe(true); // 30 - 14
      await q1.flush();
      await q2.flush(); // nothing pending: q2 still holds its first answer
      expect(q2.tryAcquireRetry(transient)).toBe(true); // q2's view 30 → 16; Redis 16 - 14 = 2
      await q2.flush();
      expect(q2.available).toBe(2);
      expect(q2.tryAcquireRetry(transient)).toBe(false);

      const r1 = sharedRatioBudget({ client, name: `ratio-${kind}`, percentCanRetry: 0.5, minRetriesPerSecond: 0 });
      const r2 = sharedRatioBudget({ client, name: `ratio-${kind}`, percentCanRetry: 0.5, minRetriesPerSecond: 0 });
      await Promise.all([r1.ready(), r2.ready()]);
      expect(r2.tryAcquireRetry(undefined)).toBe(false);
      for (let i = 0; i < 4; i++) r1.recordRequest(); // 4 requests at 50 %: 2 retries for the fleet
      await r1.flush();
      r2.recordRequest(); // one more: 2.5 retries
      await r2.flush();
      expect(r2.balance).toBe(2);
      expect(r2.tryAcquireRetry(undefined)).toBe(true);
      expect(r2.tryAcquireRetry(undefined)).toBe(true);
      expect(r2.tryAcquireRetry(undefined)).toBe(false);
      await r2.flush();
      r1.recordRequest();
      await r1.flush();
      expect(r1.balance).toBe(1); // 6 requests × 0.5 − 2 retries taken by r2
      await Promise.all([q1.close(), q2.close(), r1.close(), r2.close()]);
    });
  }
});
