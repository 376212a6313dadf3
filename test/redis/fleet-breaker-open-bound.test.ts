// A fleet breaker state written by hand, open for 23 hours with every field sound, against a real
// redis-server. The script bounds it by the reporting member's longest open period: the time left,
// the period and the probe lease are shortened in place (same generation and epoch), the reply
// names the field, inspect() lists what it would shorten, and a state within the bound is left
// byte for byte as it was. First the Lua alone with the server's clock replaced (exact times),
// then live members on the server's own clock.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { exponential } from '../../packages/ebb/src/backoff/exponential.js';
import { noJitter } from '../../packages/ebb/src/backoff/jitter-none.js';
import { type FleetRule, type KeyReport, PROBE_OPS } from '../../packages/ebb/src/redis/breaker-law.js';
import { BREAKER_SCRIPT } from '../../packages/ebb/src/redis/breaker-script.js';
import { parseInspection, reportArgs } from '../../packages/ebb/src/redis/breaker-wire.js';
import { type SharedEvent, sharedCircuitBreaker } from '../../packages/ebb/src/redis/index.js';
import { haveRedis, type RedisServer, startRedis } from './support/redis-server.js';

const enabled = haveRedis();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The script with the server's clock replaced by the last ARGV entry (ms). */
const SCRIPT = BREAKER_SCRIPT.replace(
  "local t = redis.call('TIME')",
  'local t = { tostring(math.floor(tonumber(ARGV[#ARGV]) / 1000)), tostring((tonumber(ARGV[#ARGV]) % 1000) * 1000) }',
);
const T0 = 1_800_000_000_000;
const HOUR = 3_600_000;
const KEYS = ['ebb:{brk}:breaker', 'ebb:{brk}:breaker:members', 'ebb:{brk}:breaker:lapses'];
const RULE: FleetRule = {
  failureRate: 0.5,
  minCalls: 10,
  minMembers: 2,
  windowMs: 2000,
  maxHalfOpenProbes: 1,
  successesToClose: 1,
  probeTimeoutMs: 0,
  memberFailureRate: 0.5,
};

/** A report of no calls by a member whose open periods are 1 s doubling to 30 s (or `longestMs`). */
function report(op = 0, leaseId = 0, longestMs = 30_000): KeyReport {
  return {
    generation: 5,
    epoch: 1,
    calls: 0,
    failures: 0,
    op: op as KeyReport['op'],
    leaseId,
    seed: { s: 0, n: 0, remainingMs: 0, om: 0 },
    periods: [1000, 2000, 4000, 8000, 16_000, 30_000],
    longestMs,
  };
}

/** The state as a member would have written it: open since T0 for `openMs`, its first opening. */
function openState(openMs: number): Record<string, string> {
  return {
    v: '1',
    g: '5',
    s: '1',
    n: '1',
    ou: String(T0 + openMs),
    om: String(openMs),
    ps: '0',
    e: '1',
    k: '0',
    r: '1',
    rt: String(T0),
    C: '0',
    F: '0',
    M: '0',
    l: '',
  };
}

describe.skipIf(!enabled)('a fleet breaker state open longer than the member would choose (real redis-server)', () => {
  let server: RedisServer;
  let c: Redis;
  beforeAll(async () => {
    server = await startRedis();
    c = new Redis(server.url, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    c?.disconnect();
    await server?.stop();
  });
  beforeEach(async () => {
    await c.flushall();
  });

  /** The script at `now` (server ms): a report of member `a`, or an inspection. */
  const run = (now: number, mode: '' | 'inspect', r: KeyReport, seq = 1) =>
    c.eval(SCRIPT, 3, ...KEYS, ...reportArgs(mode, 'a', '99', RULE, 600_000, seq, [r]), String(now)) as Promise<
      unknown[]
    >;

  it('23 h open, a member whose longest period is 30 s: inspect() lists ou and om, the first report shortens both to 30 s and names ou, the probe is granted at +30 s', async () => {
    await c.hset(KEYS[0] as string, openState(23 * HOUR));
    const before = parseInspection('t', KEYS[0] as string, await run(T0, 'inspect', report()));
    expect(before).toMatchObject({ state: 'open', remainingMs: 23 * HOUR, openMs: 23 * HOUR, generation: 5 });
    expect(before.problems).toEqual([
      { key: KEYS[0], field: 'ou', value: String(T0 + 23 * HOUR) },
      { key: KEYS[0], field: 'om', value: String(23 * HOUR) },
    ]);
    expect(await c.hgetall(KEYS[0] as string)).toEqual(openState(23 * HOUR));

    const reply = (await run(T0, '', report())).map(String);
    // state, openings, remaining, period, epoch, closings, generation, lease, …, the field shortened.
    expect(reply.slice(0, 8)).toEqual(['1', '1', '30000', '30000', '1', '0', '5', '-1']);
    expect(reply.slice(14)).toEqual([KEYS[0], 'ou', String(T0 + 23 * HOUR)]);
    expect(await c.hgetall(KEYS[0] as string)).toEqual({
      ...openState(23 * HOUR),
      ou: String(T0 + 30_000),
      om: '30000',
    });

    const early = (await run(T0 + 29_999, '', report(PROBE_OPS.claim, 1), 2)).map(String);
    expect(early.slice(0, 3)).toEqual(['1', '1', '1']);
    expect(early[7]).toBe('-1');
    const probe = (await run(T0 + 30_000, '', report(PROBE_OPS.claim, 2), 3)).map(String);
    expect([probe[0], probe[7], probe[8]]).toEqual(['2', '2', '30000']);
    const after = parseInspection('t', KEYS[0] as string, await run(T0 + 30_000, 'inspect', report()));
    expect(after).toMatchObject({
      state: 'half-open',
      openMs: 30_000,
      generation: 5,
      epoch: 1,
      probes: 1,
      problems: [],
    });
  });

  it('a state within the bound is left byte for byte: 20 s open against 30 s, and 23 h from a member that proposes nothing (a day bounds)', async () => {
    await c.hset(KEYS[0] as string, openState(20_000));
    const reply = (await run(T0, '', report())).map(String);
    expect(reply.slice(0, 4)).toEqual(['1', '1', '20000', '20000']);
    expect(reply.slice(14)).toEqual(['', '', '']);
    expect(await c.hgetall(KEYS[0] as string)).toEqual(openState(20_000));

    await c.flushall();
    await c.hset(KEYS[0] as string, openState(23 * HOUR));
    const unbounded = (await run(T0, '', report(0, 0, 0))).map(String);
    expect(unbounded.slice(0, 4)).toEqual(['1', '1', String(23 * HOUR), String(23 * HOUR)]);
    expect(unbounded.slice(14)).toEqual(['', '', '']);
    expect(await c.hgetall(KEYS[0] as string)).toEqual(openState(23 * HOUR));
  });

  it('four live members, periods capped at 300 ms, and the state written open for 23 h: the first report shortens it to 300 ms, a probe then closes the fleet: one repair event, the same generation', async () => {
    const capped = exponential({
      initialDelayMs: 100,
      multiplier: 2,
      maxDelayMs: 300,
      jitter: noJitter,
      maxAttempts: Infinity,
    });
    const events: SharedEvent[] = [];
    const options = {
      client: c,
      name: 'brk',
      minCalls: 10,
      windowMs: 2000,
      reportMs: 50,
      openBackoff: capped,
      onEvent: (e: SharedEvent) => events.push(e),
    };
    const members = [0, 1, 2, 3].map(() => sharedCircuitBreaker(options));
    const call = async (m: (typeof members)[number]) => {
      try {
        m.record('success', await m.acquire());
        return 'ok';
      } catch {
        return 'refused';
      }
    };
    expect(await Promise.all(members.map(call))).toEqual(['ok', 'ok', 'ok', 'ok']);
    for (const m of members) await m.flush();
    const made = await c.hgetall(KEYS[0] as string);
    const [sec = 0, usec = 0] = (await c.time()).map(Number);
    const now = sec * 1000 + Math.floor(usec / 1000);
    await c.hset(KEYS[0] as string, {
      s: '1',
      n: '1',
      ou: String(now + 23 * HOUR),
      om: String(23 * HOUR),
      e: String(Number(made.e) + 1),
      r: '1',
      rt: String(now),
    });
    // An admin instance of the same options sees what the next report will shorten.
    const admin = sharedCircuitBreaker({ client: c, name: 'brk', openBackoff: capped });
    const seen = await admin.inspect();
    expect(seen).toMatchObject({ state: 'open', openMs: 23 * HOUR, generation: Number(made.g) });
    expect(seen.problems.map((p) => p.field)).toEqual(['ou', 'om']);

    const start = performance.now();
    let refused = 0;
    let closedAfterMs = -1;
    while (performance.now() - start < 3000) {
      const results = await Promise.all(members.map(call));
      refused += results.filter((r) => r === 'refused').length;
      if (refused > 0 && results.every((r) => r === 'ok')) {
        closedAfterMs = performance.now() - start;
        break;
      }
      await sleep(10);
    }
    // 300 ms from the first report after the write (50 ms at most), and the reports that carry
    // the probe's success and the closing to the others (50 ms each) — under load, some more.
    expect(refused).toBeGreaterThan(0);
    expect(closedAfterMs).toBeGreaterThan(300);
    expect(closedAfterMs).toBeLessThan(1500);
    const after = await admin.inspect();
    expect(after).toMatchObject({ state: 'closed', reason: 'probes-succeeded', generation: Number(made.g) });
    expect(after.problems).toEqual([]);
    expect(events.map((e) => [e.type, e.key, e.field, e.value])).toEqual([
      ['repair', KEYS[0], 'ou', String(now + 23 * HOUR)],
    ]);
    console.log(`closed ${Math.round(closedAfterMs)} ms after the write; ${refused} calls refused`);
    for (const m of members) await m.close();
    await admin.close();
  });
});
