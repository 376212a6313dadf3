// The shared budget and the shared rate on a local 3-master Redis Cluster:
// three redis-server processes with --cluster-enabled yes on free 127.0.0.1 ports, joined by
// `redis-cli --cluster create`, used through node-redis's createCluster and ioredis's Cluster.
// Keys carry a hash tag, EVALSHA/EVAL name the key, so each call goes to the node owning the slot.
import { execFile } from 'node:child_process';
import { Cluster } from 'ioredis';
import { createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedRate, sharedTokenBudget } from '../../packages/ebb/src/redis/index.js';
import { freeClusterPort, haveRedis, REDIS_CLI, type RedisServer, startRedis } from './support/redis-server.js';

const enabled = haveRedis();
const cli = (args: string[]) =>
  new Promise<string>((resolve, reject) =>
    execFile(REDIS_CLI, args, { timeout: 30_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
    ),
  );

describe.skipIf(!enabled)('shared budgets on a 3-master Redis Cluster (real redis-server ×3)', () => {
  const nodes: RedisServer[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 3; i++) {
      const port = await freeClusterPort();
      nodes.push(
        await startRedis(
          ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '5000'],
          port,
        ),
      );
    }
    await cli([
      '--cluster',
      'create',
      ...nodes.map((n) => `127.0.0.1:${n.port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    // Bounded: every node reports cluster_state:ok within 100 × 100 ms.
    for (let i = 0; i < 100; i++) {
      const states = await Promise.all(nodes.map((n) => cli(['-p', String(n.port), 'cluster', 'info'])));
      if (states.every((s) => s.includes('cluster_state:ok'))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 60_000);
  afterAll(async () => {
    for (const n of nodes) await n.stop();
  });

  it('both clients share one bucket a name, on the node owning its slot; names spread over the masters', async () => {
    const node = createCluster({ rootNodes: [{ url: nodes[0]?.url as string }] });
    node.on('error', () => {});
    await node.connect();
    const io = new Cluster([{ host: '127.0.0.1', port: nodes[1]?.port as number }], {
      redisOptions: { maxRetriesPerRequest: 0 },
    });
    io.on('error', () => {});
    await new Promise((resolve) => io.once('ready', resolve));

    const names = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'];
    const owners = new Set<number>();
    for (const name of names) {
      const a = sharedTokenBudget({ client: node, name, maxTokens: 10 });
      const b = sharedTokenBudget({ client: io, name, maxTokens: 10 });
      await Promise.all([a.ready(), b.ready()]);
      expect([a.mode, b.mode]).toEqual(['shared', 'shared']);
      for (let i = 0; i < 3; i++) a.recordFailure();
      await a.flush();
      b.recordFailure();
      await b.flush();
      expect(b.tokens).toBe(6); // a's three failures and b's one, in one bucket
      // The key lives where the cluster says its slot is: ask each master directly (no -c).
      const found = await Promise.all(nodes.map((n) => cli(['-p', String(n.port), 'exists', a.key])));
      const at = found.map((s) => s.trim() === '1');
      expect(at.filter(Boolean)).toHaveLength(1);
      owners.add(at.indexOf(true));
      const before = b.stats.commands;
      b.recordFailure();
      await b.flush();
      expect(b.stats.commands - before).toBe(1); // EVALSHA found the script on that node
      expect(b.stats.errors + a.stats.errors).toBe(0);
      await Promise.all([a.close(), b.close()]);
    }
    expect(owners.size).toBeGreaterThanOrEqual(2);
    await node.close();
    io.disconnect();
  }, 60_000);
  it('the shared rate: both clients lease one fleet rate a name, its four keys on the node owning the slot', async () => {
    const node = createCluster({ rootNodes: [{ url: nodes[2]?.url as string }] });
    node.on('error', () => {});
    await node.connect();
    const io = new Cluster([{ host: '127.0.0.1', port: nodes[0]?.port as number }], {
      redisOptions: { maxRetriesPerRequest: 0 },
    });
    io.on('error', () => {});
    await new Promise((resolve) => io.once('ready', resolve));
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

    const names = ['golf', 'hotel', 'india', 'juliett', 'kilo', 'lima'];
    const owners = new Set<number>();
    for (const name of names) {
      // maxRatePerSecond 40: the fleet's rate may not rise while the test waits for the halves.
      const options = { name, initialRatePerSecond: 40, maxRatePerSecond: 40, leaseMs: 50, commandTimeoutMs: 1000 };
      const a = sharedRate({ client: node, ...options });
      const b = sharedRate({ client: io, ...options });
      await Promise.all([a.ready(), b.ready()]);
      expect([a.mode, b.mode]).toEqual(['shared', 'shared']);
      // Traffic keeps both leases alive; within a few renewals each holds half of the fleet's 40.
      // (Within 1e-9: the shares come from sums over the leases kept in Redis as doubles, where a
      // lease added and later subtracted can leave 19.999999999999996.)
      const half = (x: number) => Math.abs(x - 20) < 1e-9;
      for (let i = 0; i < 40 && !(half(a.ratePerSecond) && half(b.ratePerSecond)); i++) {
        a.record('success', await a.acquire());
        b.record('success', await b.acquire());
        await sleep(10);
      }
      expect(a.ratePerSecond).toBeCloseTo(20, 9);
      expect(b.ratePerSecond).toBeCloseTo(20, 9);
      expect([a.members, b.members]).toEqual([2, 2]);
      // A throttle reported through one client is the fleet's event: the other sees the new epoch.
      const epoch = a.epoch;
      a.record('throttled', await a.acquire());
      for (let i = 0; i < 40 && b.epoch === epoch; i++) {
        b.record('success', await b.acquire());
        await sleep(10);
      }
      expect([a.epoch, b.epoch]).toEqual([epoch + 1, epoch + 1]);
      // The state, the leases, their expiries and the join order share one slot: all on one master, asked directly.
      const keys = [a.key, `${a.key}-members`, `${a.key}-leases`, `${a.key}-order`];
      const found = await Promise.all(
        nodes.map(async (n) => (await cli(['-p', String(n.port), 'exists', ...keys])).trim()),
      );
      // The owner answers 4; the other masters refuse keys of a slot they do not serve (MOVED).
      expect(found.filter((f) => f === '4')).toHaveLength(1);
      expect(found.filter((f) => f === '0')).toHaveLength(0);
      owners.add(found.indexOf('4'));
      expect(a.stats.errors + b.stats.errors).toBe(0);
      await Promise.all([a.close(), b.close()]);
    }
    expect(owners.size).toBeGreaterThanOrEqual(2);
    await node.close();
    io.disconnect();
  }, 60_000);
});
