// The SRE adaptive throttle shared through a real redis-server, with both clients: a process that starts while the backend
// refuses the fleet rejects locally from its first request; the window slides on the server's
// clock; a Redis that stops answering never fails or delays a decision, and resyncs.
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seeded } from '../../packages/ebb/src/core/random.js';
import { adaptiveThrottle, LocalThrottleError } from '../../packages/ebb/src/rate/adaptive-throttle.js';
import { sharedAdaptiveThrottle } from '../../packages/ebb/src/redis/index.js';
import { haveRedis, type RedisServer, startRedis } from './support/redis-server.js';

const enabled = haveRedis();

describe.skipIf(!enabled)('sharedAdaptiveThrottle on a real redis-server', () => {
  let server: RedisServer;
  let nodeRedis: ReturnType<typeof createClient>;
  let io: Redis;
  beforeAll(async () => {
    server = await startRedis();
    nodeRedis = createClient({ url: server.url, disableOfflineQueue: true });
    nodeRedis.on('error', () => {});
    await nodeRedis.connect();
    io = new Redis(server.url, { maxRetriesPerRequest: 0, enableOfflineQueue: false });
    io.on('error', () => {});
    await new Promise((resolve) => io.once('ready', resolve));
  });
  afterAll(async () => {
    nodeRedis?.destroy();
    io?.disconnect();
    await server?.stop();
  });

  /** Asks `n` requests of a throttle, recording each as `outcome`; returns how many it rejected locally. */
  const drive = (
    t: { acquire(): unknown; record(o: 'success' | 'throttled'): void },
    n: number,
    outcome: 'success' | 'throttled',
  ) => {
    let rejected = 0;
    for (let i = 0; i < n; i++) {
      try {
        t.acquire();
        t.record(outcome);
      } catch (error) {
        expect(error).toBeInstanceOf(LocalThrottleError);
        rejected++;
      }
    }
    return rejected;
  };

  it('a new process draws on the fleet’s counts: rejects from its first request where a local throttle would send all', async () => {
    const name = 'sre-new';
    // One process (node-redis) saw 100 requests refused by the backend, none accepted.
    const a = sharedAdaptiveThrottle({ client: nodeRedis, name, random: seeded(1) });
    await a.ready();
    expect(a.mode).toBe('shared');
    const localRejects = drive(a, 100, 'throttled');
    await a.flush();
    expect([a.requests, a.accepts]).toEqual([100, 0]);
    // A process started now (ioredis): the fleet's 100 requests, 0 accepts, from its first sync.
    const b = sharedAdaptiveThrottle({ client: io, name, random: seeded(2) });
    await b.ready();
    expect([b.requests, b.accepts]).toEqual([100, 0]);
    expect(b.rejectionProbability).toBeCloseTo(100 / 101, 12);
    const shared = drive(b, 20, 'throttled');
    // Its local twin, new too, lets the first requests through (probability 0, then rising).
    const fresh = adaptiveThrottle({ random: seeded(2) });
    const local = drive(fresh, 20, 'throttled');
    expect(shared).toBeGreaterThanOrEqual(17);
    expect(local).toBeLessThan(shared);
    expect(localRejects).toBeGreaterThan(0);
    // Accepts count against the rejections fleet-wide, as K · accepts in the SRE book's formula: b
    // records 5, a one more; a's next sync brings the fleet's 120 requests (b's 20 asked for,
    // rejected or not) and 6 accepts.
    for (let i = 0; i < 5; i++) b.record('success');
    await b.flush();
    a.record('success');
    await a.flush();
    expect([a.requests, a.accepts]).toEqual([120, 6]);
    expect(a.rejectionProbability).toBeCloseTo((120 - 2 * 6) / 121, 12);
    await Promise.all([a.close(), b.close()]);
  });

  it('the window slides on the server’s clock: counts older than windowMs are forgotten', async () => {
    const t = sharedAdaptiveThrottle({ client: io, name: 'sre-window', windowMs: 600, random: seeded(3) });
    await t.ready();
    drive(t, 10, 'throttled');
    await t.flush();
    expect(t.requests).toBe(10);
    await new Promise((r) => setTimeout(r, 700));
    // One accept, sent: the window now holds only it.
    t.record('success');
    await t.flush();
    expect([t.requests, t.accepts]).toEqual([0, 1]);
    await t.close();
  });

  it('Redis paused: decisions never wait, the throttle goes on locally from the fleet’s counts, and resyncs', async () => {
    const name = 'sre-fault';
    const events: string[] = [];
    const t = sharedAdaptiveThrottle({
      client: io,
      name,
      commandTimeoutMs: 100,
      random: seeded(4),
      onEvent: (e) => events.push(e.type),
    });
    await t.ready();
    drive(t, 30, 'throttled');
    await t.flush();
    server.signal('SIGSTOP');
    try {
      // 30 decisions without a Redis answer: each made synchronously (a value or a throw, never a
      // promise to wait on), so none waits for Redis.
      for (let i = 0; i < 30; i++) {
        try {
          expect(t.acquire()).toBeUndefined();
          t.record('throttled');
        } catch (error) {
          expect(error).toBeInstanceOf(LocalThrottleError);
        }
      }
      await t.flush();
      expect(t.mode).toBe('local');
      expect(events).toEqual(['fallback']);
      // The fleet's 30 plus the 30 since: the counts went on locally.
      expect(t.requests).toBe(60);
      // One fallback of the throttle, counted once in its stats as in its events (its two
      // windows fall back each).
      expect(t.stats.fallbacks).toBe(1);
    } finally {
      server.signal('SIGCONT');
    }
    // Bounded: the reconnect backoff tries within 2 s; wait at most 5 s for the resync.
    for (let i = 0; i < 50 && t.mode !== 'shared'; i++) {
      drive(t, 1, 'success');
      await t.flush();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(t.mode).toBe('shared');
    expect(events).toContain('resync');
    expect(t.stats.resyncs).toBe(events.filter((e) => e === 'resync').length);
    expect(t.stats.fallbacks).toBe(events.filter((e) => e === 'fallback').length);
    await t.close();
  });
});
