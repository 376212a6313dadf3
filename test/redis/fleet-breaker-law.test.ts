// The fleet circuit breaker's rule, twice: the pure TypeScript step (breaker-law.ts, which the
// member's local fallback and the fleet simulation run) and the Lua a real redis-server runs
// (breaker-script.ts). Random traces of reports from several members, with the server's clock
// replaced by the trace's own so both see the same `now`, must give the same reply at every step.
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  BREAKER,
  boundOpen,
  type FleetKey,
  type FleetRule,
  type KeyReport,
  PROBE_OPS,
  replyOf,
  seeded,
  stepKey,
} from '../../packages/ebb/src/redis/breaker-law.js';
import { BREAKER_SCRIPT } from '../../packages/ebb/src/redis/breaker-script.js';
import { replyValues, reportArgs } from '../../packages/ebb/src/redis/breaker-wire.js';
import { haveRedis, type RedisServer, startRedis } from './support/redis-server.js';

const enabled = haveRedis();
const CLOCK_LINE = "local t = redis.call('TIME')";
/** The script with the server's clock replaced by the last ARGV entry (ms): the one line changed. */
const SCRIPT = BREAKER_SCRIPT.replace(
  CLOCK_LINE,
  'local t = { tostring(math.floor(tonumber(ARGV[#ARGV]) / 1000)), tostring((tonumber(ARGV[#ARGV]) % 1000) * 1000) }',
);
const T0 = 1_800_000_000_000;
const MEMBERS = ['a', 'b', 'c', 'd'];

const keysOf = (k: string) => [
  `t:{fleet}:breaker:${k}`,
  `t:{fleet}:breaker:${k}:members`,
  `t:{fleet}:breaker:${k}:lapses`,
];

interface Step {
  member: number;
  dt: number;
  calls: number;
  failRatio: number;
  op: number;
  /** 0: the member's last heard generation and epoch; 1: one epoch behind; 2: another generation. */
  stale: number;
  /** 0: a new sequence number; 1: the same as its last (a report sent again). */
  repeat: number;
}

const ruleArb = fc.record({
  failureRate: fc.constantFrom(0.25, 0.5, 1),
  minCalls: fc.integer({ min: 1, max: 30 }),
  minMembers: fc.integer({ min: 1, max: 3 }),
  windowMs: fc.integer({ min: 500, max: 5000 }),
  maxHalfOpenProbes: fc.integer({ min: 1, max: 3 }),
  successesToClose: fc.integer({ min: 1, max: 2 }),
  probeTimeoutMs: fc.constantFrom(0, 300, 5000),
  memberFailureRate: fc.constantFrom(0, 0.5, 0.75, 0.9),
});
const stepArb = fc.record({
  /** -1: the member of the step before (a prober reporting its probe's result soon after its claim). */
  member: fc.integer({ min: -1, max: MEMBERS.length - 1 }),
  dt: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 4000 })),
  calls: fc.integer({ min: 0, max: 20 }),
  failRatio: fc.constantFrom(0, 0.3, 1),
  op: fc.constantFrom(0, 0, 1, 1, 2, 2, 3, 4),
  stale: fc.constantFrom(0, 0, 0, 0, 1, 2),
  repeat: fc.constantFrom(0, 0, 0, 1),
});
const periodsArb = fc.array(fc.integer({ min: 50, max: 1500 }), { minLength: 1, maxLength: 4 });

/** The rule of the exact traces: small enough that a few reports open and close the breaker. */
const TRACE_RULE = {
  failureRate: 0.5,
  minCalls: 4,
  minMembers: 2,
  windowMs: 1000,
  maxHalfOpenProbes: 1,
  successesToClose: 1,
  probeTimeoutMs: 0,
  memberFailureRate: 0.5,
};

describe.skipIf(!enabled)("the fleet breaker's Lua and its TypeScript step agree", () => {
  let server: RedisServer;
  let c: Redis;
  beforeAll(async () => {
    server = await startRedis();
    c = new Redis(server.url, { lazyConnect: false, maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    c?.disconnect();
    await server?.stop();
  });
  beforeEach(async () => {
    await c.flushall();
  });

  let run = 0;
  /** The fields a step shortened, so the traces of differing options are known to reach the bound. */
  const shortened = new Set<string>();
  /** How often each reason of a change was seen, so the traces are known to reach every rule. */
  const seen = new Map<number, number>();
  /**
   * Runs one trace on a fresh key through both, comparing every reply: `periods` are every
   * member's proposals, or each member's own (a fleet whose options differ).
   */
  async function trace(rule: FleetRule, periods: number[] | number[][], steps: readonly Step[]): Promise<number[]> {
    const states: number[] = [];
    run++;
    const key = `k${run}`;
    const KEYS = keysOf(key);
    const generation = 1000 + run;
    let now = T0;
    let model: FleetKey | undefined;
    const heard = MEMBERS.map(() => ({ g: 0, e: -1, seq: 0, lease: -1, nextLease: 1 }));
    let previous = 0;
    for (const [i, s] of steps.entries()) {
      now += s.dt;
      const who = s.member < 0 ? previous : s.member;
      previous = who;
      const m = heard[who] as (typeof heard)[number];
      const member = MEMBERS[who] as string;
      if (s.repeat === 0 || m.seq === 0) m.seq++;
      const failures = Math.round(s.calls * s.failRatio);
      // A claim asks with a new lease id; a result or a release names the lease it holds (or an old one).
      let leaseId = m.lease >= 0 ? m.lease : m.nextLease - 1;
      if (s.op === PROBE_OPS.claim) leaseId = m.nextLease++;
      const proposed = (Array.isArray(periods[0]) ? periods[who] : periods) as number[];
      const report: KeyReport = {
        generation: s.stale === 2 ? m.g + 7 : m.g,
        epoch: s.stale === 1 ? m.e - 1 : m.e,
        calls: s.calls,
        failures,
        op: s.op as KeyReport['op'],
        leaseId,
        seed: { s: 0, n: 0, remainingMs: 0, om: 0 },
        periods: proposed,
        longestMs: Math.max(...proposed),
      };
      const args = [...reportArgs('', member, String(generation), rule, 86_400_000, m.seq, [report]), String(now)];
      const lua = (
        (await c.evalsha(await sha(), 3, ...KEYS, ...args).catch(async (e: Error) => {
          if (!String(e.message).startsWith('NOSCRIPT')) throw e;
          return c.eval(SCRIPT, 3, ...KEYS, ...args);
        })) as string[]
      ).slice();
      model ??= { state: seeded(report.seed, generation, now), members: new Map() };
      // The fields the step shortens (none while every member proposes the same periods): the
      // reply names the first.
      const cut = boundOpen(structuredClone(model.state), rule, report.longestMs, now);
      const ts = stepKey(rule, model, member, m.seq, report, now);
      const first = cut[0];
      expect(lua.slice(14), `step ${i}: what was shortened`).toEqual(
        first ? [KEYS[0], first.field, first.value] : ['', '', ''],
      );
      for (const b of cut) shortened.add(b.field);
      expect(lua.slice(0, 14).map(Number), `step ${i} (${member} at +${now - T0} ms)`).toEqual(replyValues(ts));
      if (ts.epoch !== m.e) seen.set(ts.reason, (seen.get(ts.reason) ?? 0) + 1);
      states.push(ts.state);
      m.g = ts.generation;
      m.e = ts.epoch;
      m.lease = ts.lease;
    }
    // The reply that changes nothing agrees too.
    if (model) expect(replyValues(replyOf(model, 'a', now)).length).toBe(14);
    // The roster as Redis holds it: one snapshot per member, as the step holds them.
    const held = await c.hgetall(KEYS[1] as string);
    expect(
      Object.entries(held)
        .map(([m, v]) => [m, v.split(',').slice(0, 3).map(Number)])
        .sort(),
    ).toEqual([...(model?.members ?? [])].map(([m, x]) => [m, [x.seq, x.c, x.f]]).sort());
    return states;
  }

  it('the test replaced exactly the server clock line, and the constants are the table’s', () => {
    expect(BREAKER_SCRIPT.split(CLOCK_LINE)).toHaveLength(2);
    expect(SCRIPT).not.toContain(CLOCK_LINE);
    expect(BREAKER_SCRIPT).toContain(
      `local MAXPRUNED, MAXPROBES, HEAD, PER = ${BREAKER.maxPruned}, ${BREAKER.maxProbes}`,
    );
  });

  it('every reply is the same along a trace through each change: open, probe failed, probes succeeded, probe lapsed', async () => {
    const rule = TRACE_RULE;
    const step = (member: number, dt: number, op: number, calls = 0, failRatio = 0): Step => ({
      member,
      dt,
      calls,
      failRatio,
      op,
      stale: 0,
      repeat: 0,
    });
    seen.clear();
    await trace(
      rule,
      [100, 200],
      [
        // Each member hears the state first: a report counts only in the generation and epoch it names.
        step(0, 0, 0),
        step(1, 0, 0),
        step(2, 0, 0),
        step(3, 0, 0),
        step(0, 0, 0, 4, 1), // one member failing: not enough members
        step(1, 10, 0, 4, 1), // a second one: two of four, no majority
        step(2, 10, 0, 4, 1), // a third one: open (period 100)
        step(0, 150, 1), // half-open: a claims the lease
        step(1, 5, 1), // b is refused: one probe
        step(0, 10, 3), // a's probe failed: open again (period 200)
        step(1, 250, 1), // b claims
        step(1, 10, 2), // b's probe succeeded: closed
        step(2, 0, 0), // c and d hear the closing
        step(3, 0, 0),
        step(2, 10, 0, 6, 1),
        step(3, 10, 0, 6, 1), // two of the four on the roster
        step(1, 10, 0, 6, 1), // b, which closed it, a third: open again
        step(2, 150, 1), // c claims and goes silent
        step(3, 300, 0), // the lease lapsed: open again, as of its lapse
      ],
    );
    for (const reason of [1, 2, 3, 4]) expect(seen.get(reason) ?? 0, `reason ${reason}`).toBeGreaterThan(0);
  });

  it('every reply is the same along a trace of partitioned members: old news puts members on the roster, a change of state zeroes their snapshots and keeps them', async () => {
    const rule = TRACE_RULE;
    const step = (member: number, dt: number, op: number, calls = 0, failRatio = 0, stale = 0): Step => ({
      member,
      dt,
      calls,
      failRatio,
      op,
      stale,
      repeat: 0,
    });
    const states = await trace(
      rule,
      [100],
      [
        // Four first reports, each naming no generation: on the roster, no calls counted.
        step(0, 0, 0, 8, 1),
        step(1, 0, 0, 8, 1),
        step(2, 0, 0, 5, 0),
        step(3, 0, 0, 5, 0),
        step(0, 10, 0, 8, 1), // a and b fail: two of four is no majority
        step(1, 10, 0, 8, 1),
        step(2, 10, 0, 6, 1), // c too (a real outage spreading): open
        step(3, 10, 0, 5, 0, 1), // d, one epoch behind: old news while open
        step(3, 150, 1), // half-open: d claims
        step(3, 10, 2), // and its probe succeeds: closed, snapshots zeroed
        step(0, 10, 0, 8, 1, 1), // a, not yet heard the closing: old news, no calls
        step(0, 10, 0, 8, 1), // a and b in the new epoch: two of four again
        step(1, 10, 0, 8, 1),
        step(1, 900, 0, 8, 1), // c and d lapse from the roster: a and b are the fleet, open
      ],
    );
    expect(states).toEqual([0, 0, 0, 0, 0, 0, 1, 1, 2, 0, 0, 0, 0, 1]);
  });

  it('every reply is the same for random traces of several members (claims, results, stale and repeated reports)', async () => {
    seen.clear();
    // Random traces reach openings and lapsed leases by themselves, though not in every batch of
    // 80: a lapse needs a long gap before a member's next report. Batches run until both were
    // seen, at most five (400 traces; every batch is compared in full all the same).
    for (let batch = 0; batch < 5 && !(seen.get(1) && seen.get(3)); batch++) {
      await fc.assert(
        fc.asyncProperty(
          ruleArb,
          periodsArb,
          fc.array(stepArb, { minLength: 5, maxLength: 80 }),
          async (rule, periods, steps) => {
            await trace(rule, periods, steps);
          },
        ),
        { numRuns: 80 },
      );
    }
    for (const reason of [1, 3]) expect(seen.get(reason) ?? 0, `reason ${reason}`).toBeGreaterThan(0);
  });

  it('every reply is the same when members propose different periods (a rolling deploy): the same open states shortened, the same field named', async () => {
    const step = (member: number, dt: number, op: number, calls = 0, failRatio = 0): Step => ({
      member,
      dt,
      calls,
      failRatio,
      op,
      stale: 0,
      repeat: 0,
    });
    shortened.clear();
    // a and b propose 1 s at most, c and d up to 3 s; the rule's lease is the open period.
    const states = await trace(
      TRACE_RULE,
      [[500], [1000], [3000], [2000, 3000]],
      [
        step(0, 0, 0),
        step(1, 0, 0),
        step(2, 0, 0),
        step(3, 0, 0),
        step(2, 10, 0, 4, 1),
        step(3, 10, 0, 4, 1),
        step(1, 10, 0, 4, 1), // b is a third: open for b's 1 s
        step(2, 100, 0), // c (3 s) leaves it as it is
        step(3, 900, 1), // half-open: d claims, a lease as long as the 1-s period
        step(3, 10, 3), // d's probe failed: open for d's 3 s (opening 2)
        step(0, 100, 0), // a (0.5 s) shortens it: 0.5 s left, a 0.5-s period
        step(2, 100, 0), // c leaves it
        step(2, 400, 1), // half-open: c claims, a 0.5-s lease
        step(0, 600, 0), // the lease lapsed: open for a's 0.5 s (opening 3)
        step(3, 10, 0), // d leaves it
        step(2, 400, 1), // half-open: c claims
        step(2, 10, 3), // c's probe failed: open for c's 3 s (opening 4)
        step(3, 3000, 1), // half-open: d claims, a 3-s lease
        step(0, 100, 0), // a shortens the period and d's lease to 0.5 s
        step(1, 600, 0), // the lease lapsed: open for b's 1 s (opening 5)
      ],
    );
    expect(states).toEqual([0, 0, 0, 0, 0, 0, 1, 1, 2, 1, 1, 1, 2, 1, 1, 2, 1, 2, 2, 1]);
    expect([...shortened].sort()).toEqual(['l', 'om', 'ou']);
  });

  it('every reply is the same for random traces of members whose periods differ', async () => {
    shortened.clear();
    await fc.assert(
      fc.asyncProperty(
        ruleArb,
        fc.array(periodsArb, { minLength: MEMBERS.length, maxLength: MEMBERS.length }),
        fc.array(stepArb, { minLength: 5, maxLength: 80 }),
        async (rule, periods, steps) => {
          await trace(rule, periods, steps);
        },
      ),
      { numRuns: 80 },
    );
    expect(shortened.has('ou')).toBe(true);
  });

  let cachedSha: string | undefined;
  async function sha(): Promise<string> {
    if (!cachedSha) {
      const d = await crypto.subtle.digest('SHA-1', new TextEncoder().encode(SCRIPT));
      cachedSha = Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, '0')).join('');
    }
    return cachedSha;
  }
});
