// The fleet breaker's rule (breaker-law.ts) with members cut off from a healthy service: however
// many there are, they open the fleet only when they are more than `memberFailureRate` of the
// members that report, and a real outage, which every member sees, still opens it. Exact
// sequences of reports through the pure step, then fast-check properties over fleets whose
// failing members report four times as often as the healthy ones (as the members do).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type FleetKey,
  type FleetRule,
  type KeyReply,
  type KeyReport,
  PROBE_OPS,
  seeded,
  stepKey,
} from './breaker-law.js';

const RULE: FleetRule = {
  failureRate: 0.5,
  minCalls: 4,
  minMembers: 2,
  windowMs: 1000,
  maxHalfOpenProbes: 1,
  successesToClose: 1,
  probeTimeoutMs: 0,
  memberFailureRate: 0.5,
};
const G = 77;

function fresh(): FleetKey {
  return { state: seeded({ s: 0, n: 0, remainingMs: 0, om: 0 }, G, 0), members: new Map() };
}

/** A report of `calls` calls, `failures` of them failed, in generation `g` and epoch `e`. */
function report(g: number, e: number, calls: number, failures: number, op = 0, leaseId = 0): KeyReport {
  return {
    generation: g,
    epoch: e,
    calls,
    failures,
    op: op as KeyReport['op'],
    leaseId,
    seed: { s: 0, n: 0, remainingMs: 0, om: 0 },
    periods: [100],
    longestMs: 100,
  };
}

const brief = (r: KeyReply) => ({
  state: r.state,
  calls: r.calls,
  failures: r.failures,
  failingMembers: r.failingMembers,
});

describe('the fleet rule with partitioned members', () => {
  it('two failing members of five (minMembers met) do not open it; a third, a majority, does', () => {
    const key = fresh();
    let seq = 0;
    // Each member's first report names no generation: old news, but it puts the member on the roster.
    for (const m of 'abcde')
      expect(brief(stepKey(RULE, key, m, ++seq, report(0, -1, 10, 0), 0))).toEqual({
        state: 0,
        calls: 0,
        failures: 0,
        failingMembers: 0,
      });
    expect(key.members.size).toBe(5);
    // The failing members report first (they report four times as often): their calls are all the fleet has.
    expect(brief(stepKey(RULE, key, 'a', ++seq, report(G, 0, 10, 10), 10))).toEqual({
      state: 0,
      calls: 10,
      failures: 10,
      failingMembers: 1,
    });
    // Two of five: minCalls, failureRate and minMembers are met, 2 > 0.5 × 5 is not.
    expect(brief(stepKey(RULE, key, 'b', ++seq, report(G, 0, 10, 10), 20))).toEqual({
      state: 0,
      calls: 20,
      failures: 20,
      failingMembers: 2,
    });
    const r = stepKey(RULE, key, 'c', ++seq, report(G, 0, 10, 10), 30);
    expect(r.state).toBe(1);
    expect(r.reason).toBe(1); // 'failure-rate'
  });

  it('with memberFailureRate 0 the same two members open it for everyone (the rule before the roster)', () => {
    const key = fresh();
    let seq = 0;
    for (const m of 'abcde') stepKey({ ...RULE, memberFailureRate: 0 }, key, m, ++seq, report(0, -1, 10, 0), 0);
    stepKey({ ...RULE, memberFailureRate: 0 }, key, 'a', ++seq, report(G, 0, 10, 10), 10);
    expect(stepKey({ ...RULE, memberFailureRate: 0 }, key, 'b', ++seq, report(G, 0, 10, 10), 20).state).toBe(1);
  });

  it('a change of state zeroes the snapshots but keeps the roster: after a closing, the partitioned members reporting first still open nothing', () => {
    const key = fresh();
    let seq = 0;
    for (const m of 'abcde') stepKey(RULE, key, m, ++seq, report(0, -1, 10, 0), 0);
    for (const m of 'abc') stepKey(RULE, key, m, ++seq, report(G, 0, 10, 10), 10);
    expect(key.state.s).toBe(1);
    expect([...key.members.values()].map((m) => [m.c, m.f])).toEqual([
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
    ]);
    // Half-open after 100 ms: d probes and succeeds; the fleet closes (epoch 2).
    expect(stepKey(RULE, key, 'd', ++seq, report(G, 1, 0, 0, PROBE_OPS.claim, 1), 120).lease).toBe(1);
    const closed = stepKey(RULE, key, 'd', ++seq, report(G, 1, 0, 0, PROBE_OPS.success, 1), 130);
    expect([closed.state, closed.epoch, closed.reason]).toEqual([0, 2, 4]);
    expect(key.members.size).toBe(5);
    // a and b hear the closing first and report failures in it; the healthy ones have not yet.
    stepKey(RULE, key, 'a', ++seq, report(G, 2, 12, 12), 140);
    expect(brief(stepKey(RULE, key, 'b', ++seq, report(G, 2, 12, 12), 150))).toEqual({
      state: 0,
      calls: 24,
      failures: 24,
      failingMembers: 2,
    });
  });

  it('old news counts no calls, and does not replace a snapshot of the current epoch', () => {
    const key = fresh();
    stepKey(RULE, key, 'a', 1, report(G, 0, 6, 1), 0);
    expect(key.members.get('a')).toEqual({ seq: 1, c: 6, f: 1, exp: 1000 });
    // A later report that names an older epoch (sent before its sender heard the change).
    stepKey(RULE, key, 'a', 2, report(G, -1, 9, 9), 10);
    expect(key.members.get('a')).toEqual({ seq: 1, c: 6, f: 1, exp: 1000 });
    expect(brief(stepKey(RULE, key, 'b', 3, report(G + 1, 0, 9, 9), 20))).toEqual({
      state: 0,
      calls: 6,
      failures: 1,
      failingMembers: 0,
    });
    expect(key.members.get('b')).toEqual({ seq: 3, c: 0, f: 0, exp: 1020 });
  });

  it('members that stop reporting leave the roster after windowMs: the share is of the members that call', () => {
    const key = fresh();
    let seq = 0;
    for (const m of 'abcde') stepKey(RULE, key, m, ++seq, report(0, -1, 10, 0), 0);
    stepKey(RULE, key, 'a', ++seq, report(G, 0, 10, 10), 900);
    expect(stepKey(RULE, key, 'b', ++seq, report(G, 0, 10, 10), 950).state).toBe(0);
    // c, d and e went quiet at 0: their snapshots lapse at 1000, and a and b are the fleet.
    expect(stepKey(RULE, key, 'a', ++seq, report(G, 0, 10, 10), 1000).state).toBe(1);
  });
});

interface Sim {
  id: string;
  /** Calls a second. */
  rate: number;
  /** The share of its calls that fail (1 for a member cut off from the service). */
  fails: number;
  g: number;
  e: number;
  /** Its window counts calls from here (the moment it heard the fleet's current epoch). */
  since: number;
  next: number;
  seq: number;
}

/**
 * Drives the pure step as the members do: each member's first report at 0 (its first call), then
 * one every `reportMs` while its window holds no failure and every `reportMs / 4` while it does,
 * each a snapshot of its calls since it heard the fleet's epoch, over the last `windowMs`. A reply
 * that names another generation or epoch restarts its window. From `outage.from` to `outage.to`
 * (ms) every member's calls fail (a real outage). When the open period has run out, the first
 * member that reaches the service probes (a claim, then its result: a success once the outage is
 * over). Returns when the fleet opened from closed, and when it closed.
 */
function drive(
  rule: FleetRule,
  members: { rate: number; fails: number; jitter: number[] }[],
  reportMs: number,
  untilMs: number,
  outage = { from: Number.POSITIVE_INFINITY, to: Number.POSITIVE_INFINITY },
): { openings: number[]; closings: number[] } {
  const key = fresh();
  const sims: Sim[] = members.map((m, i) => ({
    id: `m${i}`,
    rate: m.rate,
    fails: m.fails,
    g: 0,
    e: -1,
    since: 0,
    next: 0,
    seq: 0,
  }));
  const openings: number[] = [];
  const closings: number[] = [];
  let step = 0;
  let leases = 0;
  const send = (who: Sim, r: KeyReport, now: number) => {
    const before = key.state.s;
    const reply = stepKey(rule, key, who.id, ++who.seq, r, now);
    if (before === 0 && key.state.s === 1) openings.push(now);
    if (before === 1 && key.state.s === 0) closings.push(now);
    if (reply.generation !== who.g || reply.epoch !== who.e) {
      who.g = reply.generation;
      who.e = reply.epoch;
      who.since = now;
    }
  };
  for (;;) {
    let who = sims[0] as Sim;
    for (const s of sims) if (s.next < who.next) who = s;
    const now = who.next;
    if (now > untilMs) break;
    if (key.state.s === 1 && now >= key.state.ou) {
      const prober = sims.find((x) => x.fails < 1) ?? who;
      const lease = ++leases;
      send(prober, report(prober.g, prober.e, 0, 0, PROBE_OPS.claim, lease), now);
      const op = now >= outage.to && prober.fails < 1 ? PROBE_OPS.success : PROBE_OPS.failure;
      send(prober, report(prober.g, prober.e, 0, 0, op, lease), now);
    }
    const from = Math.max(who.since, now - rule.windowMs);
    const calls = Math.floor((who.rate * (now - from)) / 1000);
    const dark = Math.max(0, Math.min(now, outage.to) - Math.max(from, outage.from));
    const failures = Math.min(calls, Math.max(Math.floor(calls * who.fails), Math.floor((who.rate * dark) / 1000)));
    send(who, report(who.g, who.e, calls, failures), now);
    const j = members[sims.indexOf(who)]?.jitter ?? [1];
    const period = (failures > 0 ? reportMs / 4 : reportMs) * (j[step++ % j.length] as number);
    who.next = now + Math.max(1, Math.round(period));
  }
  return { openings, closings };
}

const ruleArb = fc.record({
  failureRate: fc.constantFrom(0.25, 0.5, 0.75),
  minCalls: fc.integer({ min: 1, max: 40 }),
  minMembers: fc.integer({ min: 1, max: 3 }),
  windowMs: fc.integer({ min: 1000, max: 10_000 }),
  maxHalfOpenProbes: fc.constant(1),
  successesToClose: fc.constant(1),
  probeTimeoutMs: fc.constant(0),
  memberFailureRate: fc.constant(0.5),
});
const memberArb = (fails: fc.Arbitrary<number>) =>
  fc.record({
    rate: fc.integer({ min: 1, max: 100 }),
    fails,
    jitter: fc.array(fc.double({ min: 0.75, max: 1.25, noNaN: true }), { minLength: 1, maxLength: 5 }),
  });

// Each property drives hundreds of fleets of up to 16 members over several windows: 2–5 s here,
// more than the default 5 s on a loaded machine.
describe('the fleet rule, for any fleet (fast-check)', { timeout: 30_000 }, () => {
  it('k partitioned members among N, k <= N/2 (any k >= minMembers too), a healthy service: the fleet never opens', () => {
    fc.assert(
      fc.property(
        ruleArb,
        fc.integer({ min: 2, max: 16 }).chain((n) =>
          fc.tuple(
            fc.constant(n),
            fc.integer({ min: 1, max: Math.floor(n / 2) }),
            // The healthy members' own noise stays under failureRate: they see a working service.
            fc.array(memberArb(fc.double({ min: 0, max: 0.2, noNaN: true })), { minLength: n, maxLength: n }),
          ),
        ),
        fc.integer({ min: 10, max: 1000 }),
        (rule, [n, k, members], reportMs) => {
          const fleet = members.map((m, i) => (i < k ? { ...m, fails: 1 } : m));
          // Members report within their window: reportMs × 1.25 < windowMs.
          const r = drive(rule, fleet, Math.min(reportMs, Math.floor(rule.windowMs / 2)), 3 * rule.windowMs);
          expect(r.openings, `${k} of ${n} partitioned`).toEqual([]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a real outage, every member failing from some moment: the fleet opens within one window of it', () => {
    fc.assert(
      fc.property(
        ruleArb,
        fc.array(memberArb(fc.constant(0)), { minLength: 2, maxLength: 16 }),
        fc.integer({ min: 10, max: 1000 }),
        fc.integer({ min: 0, max: 10_000 }),
        (rule, members, reportMs, from) => {
          // Enough calls for minCalls, minMembers members, and each member calling (4 calls a window
          // or more): a member that makes no call in the outage sees none of it.
          fc.pre(members.reduce((s, m) => s + m.rate, 0) * (rule.windowMs / 1000) >= 4 * rule.minCalls);
          fc.pre(members.length >= rule.minMembers && members.every((m) => m.rate * rule.windowMs >= 4000));
          const period = Math.min(reportMs, Math.floor(rule.windowMs / 2));
          const r = drive(rule, members, period, from + 3 * rule.windowMs, { from, to: Number.POSITIVE_INFINITY });
          const opened = r.openings[0] ?? Number.POSITIVE_INFINITY;
          expect(opened).toBeGreaterThan(from);
          expect(opened - from).toBeLessThanOrEqual(rule.windowMs + period);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('k <= N/2 partitioned and a real outage: the fleet opens in it, a probe closes it after, and the partitioned members never reopen it (each epoch starts with the whole roster)', () => {
    fc.assert(
      fc.property(
        ruleArb,
        fc
          .integer({ min: 2, max: 16 })
          .chain((n) =>
            fc.tuple(
              fc.integer({ min: 1, max: Math.floor(n / 2) }),
              fc.array(memberArb(fc.constant(0)), { minLength: n, maxLength: n }),
            ),
          ),
        fc.integer({ min: 10, max: 1000 }),
        fc.integer({ min: 1, max: 3 }),
        (rule, [k, members], reportMs, windows) => {
          fc.pre(members.length >= rule.minMembers && members.every((m) => m.rate * rule.windowMs >= 4000));
          fc.pre(members.reduce((s, m) => s + m.rate, 0) * (rule.windowMs / 1000) >= 4 * rule.minCalls);
          const fleet = members.map((m, i) => (i < k ? { ...m, fails: 1 } : m));
          const period = Math.min(reportMs, Math.floor(rule.windowMs / 2));
          const outage = { from: rule.windowMs, to: rule.windowMs + windows * rule.windowMs };
          const r = drive(rule, fleet, period, outage.to + 4 * rule.windowMs, outage);
          // The open periods are 100 ms: a probe after the outage closes it at once.
          const closed = r.closings.find((t) => t >= outage.to) ?? Number.POSITIVE_INFINITY;
          expect(closed - outage.to).toBeLessThanOrEqual(100 + period);
          expect(r.openings.filter((t) => t > closed)).toEqual([]);
          expect(r.openings.filter((t) => t < outage.from)).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  });
});
