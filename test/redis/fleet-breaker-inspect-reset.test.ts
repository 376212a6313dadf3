// An operator's two tools on a shared circuit breaker, against a real redis-server: inspect()
// reads a key's fleet state and changes nothing (no write, no probe lease, no evidence, no key
// kept in the inspecting member), and reset() closes the fleet under live members — each hears
// the new generation at its next report ('state-lost'), closes its local breaker and goes on.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { constant } from '../../packages/ebb/src/backoff/constant.js';
import { noJitter } from '../../packages/ebb/src/backoff/jitter-none.js';
import {
  type SharedCircuitBreaker,
  type SharedCircuitBreakerOptions,
  type SharedEvent,
  sharedCircuitBreaker,
} from '../../packages/ebb/src/redis/index.js';
import { haveRedis, type RedisServer, startRedis } from './support/redis-server.js';

const enabled = haveRedis();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function connect(url: string): Promise<Redis> {
  const c = new Redis(url, { maxRetriesPerRequest: 0, enableOfflineQueue: false });
  c.on('error', () => {});
  await new Promise((resolve) => c.once('ready', resolve));
  return c;
}

/** Writes Redis has applied since it started (INFO persistence): a command that writes moves it. */
async function changes(c: Redis): Promise<number> {
  const info = await c.info('persistence');
  return Number(/rdb_changes_since_last_save:(\d+)/.exec(info)?.[1]);
}

/** One call of `m` that fails (or is refused); true when it was admitted. */
async function failOnce(m: SharedCircuitBreaker): Promise<boolean> {
  let t: unknown;
  try {
    t = await m.acquire();
  } catch {
    return false;
  }
  m.record('failure', t, new Error('ECONNREFUSED'));
  return true;
}

/** Members call and fail, 20 ms apart, until every one is refused by the fleet (at most 5 s). */
async function openFleet(members: SharedCircuitBreaker[]): Promise<void> {
  for (let i = 0; i < 250 && !members.every((m) => m.stats.refusedByFleet > 0); i++) {
    await Promise.all(members.map(failOnce));
    await sleep(20);
  }
  expect(members.map((m) => m.stats.refusedByFleet > 0)).toEqual(members.map(() => true));
}

describe.skipIf(!enabled)('sharedCircuitBreaker inspect() and reset() (real redis-server)', () => {
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

  const rule = (name: string, openMs: number): SharedCircuitBreakerOptions => ({
    client: c,
    name,
    failureRate: 0.5,
    minCalls: 6,
    minMembers: 2,
    windowMs: 2000,
    reportMs: 50,
    openBackoff: constant({ delayMs: openMs, jitter: noJitter, maxAttempts: Infinity }),
  });

  it('inspect() reads the fleet as stored — half-open, its generation, no lease — and writes nothing', async () => {
    const members = [0, 1, 2].map(() => sharedCircuitBreaker(rule('seen', 400)));
    await openFleet(members);
    // The members stop reporting; the open period (400 ms) runs out: half-open by the server's clock.
    for (const m of members) await m.close();
    await sleep(600);
    const admin = sharedCircuitBreaker(rule('seen', 400));
    const stateKey = 'ebb:{seen}:breaker';
    const stored = await c.hgetall(stateKey);
    const before = await changes(c);
    const first = await admin.inspect();
    const second = await admin.inspect();
    expect(await changes(c)).toBe(before);
    expect(await c.hgetall(stateKey)).toEqual(stored);
    expect(first).toEqual(second);
    expect(first).toMatchObject({
      key: stateKey,
      exists: true,
      state: 'half-open',
      openings: 1,
      remainingMs: 0,
      openMs: 400,
      generation: Number(stored.g),
      probes: 0,
      reason: 'failure-rate',
      members: await c.hlen(`${stateKey}:members`),
      fields: stored,
      problems: [],
    });
    // The inspecting member keeps nothing of the key and sent nothing but the two reads.
    expect(admin.stats).toMatchObject({ keys: 0, calls: 0, commands: 2 });
    await admin.close();
  });

  it('inspect() of a missing key and of a corrupt one: exists, problems, and no repair made', async () => {
    const admin = sharedCircuitBreaker(rule('absent', 1000));
    const missing = await admin.inspect('no-such-route');
    expect(missing).toMatchObject({ exists: false, state: undefined, generation: undefined, members: 0 });
    expect(missing.key).toBe('ebb:{absent}:breaker:no-such-route');
    await c.hset('ebb:{absent}:breaker:route', 'v', '1', 's', '7');
    const before = await changes(c);
    const bad = await admin.inspect('route');
    expect(await changes(c)).toBe(before);
    expect(bad.exists).toBe(true);
    expect(bad.state).toBeUndefined();
    expect(bad.fields).toMatchObject({ s: '7' });
    expect(bad.problems.map((p) => p.field)).toContain('s');
    await expect(admin.inspect('{bad}')).rejects.toThrow(/key/);
    await admin.close();
  });

  it('reset() under live members: the fleet closes with a new generation; each member hears state-lost, closes and goes on', async () => {
    const events: SharedEvent[][] = [[], [], []];
    // A 60-s open period: without the reset the fleet would stay open through the whole test.
    const members = events.map((e) => sharedCircuitBreaker({ ...rule('live', 60_000), onEvent: (x) => e.push(x) }));
    await openFleet(members);
    const admin = sharedCircuitBreaker(rule('live', 60_000));
    const open = await admin.inspect();
    expect(open.state).toBe('open');
    await admin.reset();
    const after = await admin.inspect();
    expect(after).toMatchObject({ state: 'closed', openings: 0, reason: 'reset', calls: 0, probes: 0 });
    expect(after.generation).not.toBe(open.generation);
    // The members keep calling (the service is back): each hears the reset at its next report.
    let admitted = [0, 0, 0];
    for (let i = 0; i < 150; i++) {
      admitted = await Promise.all(
        members.map(async (m, j) => {
          try {
            m.record('success', await m.acquire());
            return (admitted[j] as number) + 1;
          } catch {
            return admitted[j] as number;
          }
        }),
      );
      if (members.every((m) => m.stats.stateLosses > 0) && admitted.every((n) => n >= 5)) break;
      await sleep(20);
    }
    for (const [j, m] of members.entries()) {
      expect(events[j]?.some((e) => e.type === 'state-lost' && e.field === 'generation')).toBe(true);
      expect(m.stateOf()).toBe('closed');
      expect(m.mode).toBe('shared');
      expect(admitted[j]).toBeGreaterThanOrEqual(5);
    }
    // The member that reset the fleet goes on from the reset at once: no lost state to it.
    expect(admin.stats.stateLosses).toBe(0);
    expect((await admin.inspect()).generation).toBe(after.generation);
    for (const m of members) await m.close();
    await admin.close();
  });

  it('reset() by a member that is calling: it goes on closed at once, with no state-lost of its own', async () => {
    const events: SharedEvent[] = [];
    const a = sharedCircuitBreaker({ ...rule('self', 60_000), onEvent: (x) => events.push(x) });
    const b = sharedCircuitBreaker(rule('self', 60_000));
    await openFleet([a, b]);
    expect(a.stateOf()).toBe('open');
    await a.reset();
    expect(a.stateOf()).toBe('closed');
    a.record('success', await a.acquire());
    await a.flush();
    expect(events.filter((e) => e.type === 'state-lost')).toEqual([]);
    await a.close();
    await b.close();
  });
});
