// The fleet breaker's rule (breaker-law.ts) bounding a stored open state by the reporting
// member's longest open period: what is left of the period, the period itself and each probe lease
// are shortened to it, in place — same generation, same epoch — and a state within the bound is
// left exactly as it was. Members whose bounds differ converge on the narrowest one.
import { describe, expect, it } from 'vitest';
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
const NOW = 1_800_000_000_000;
const HOUR = 3_600_000;

/** A sound state, open since `NOW` for `openMs`, of generation 77 and epoch 3, with `leases`. */
function openFor(openMs: number, leases: { member: string; id: number; expiry: number }[] = []): FleetKey {
  const key: FleetKey = { state: seeded({ s: 1, n: 1, remainingMs: openMs, om: openMs }, 77, NOW), members: new Map() };
  key.state.e = 3;
  key.state.r = 1;
  key.state.rt = NOW;
  key.state.leases = leases;
  return key;
}

/** A report of no calls that proposes `longestMs` at most (its one period), with probe op `op`. */
function report(longestMs: number, op = 0, leaseId = 0): KeyReport {
  return {
    generation: 77,
    epoch: 3,
    calls: 0,
    failures: 0,
    op: op as KeyReport['op'],
    leaseId,
    seed: { s: 0, n: 0, remainingMs: 0, om: 0 },
    periods: [longestMs],
    longestMs,
  };
}

describe("the fleet rule bounds an open state by the reporting member's longest open period", () => {
  it('an open state of 23 h reported on by a member whose longest period is 30 s: 30 s left and a 30-s period, the same generation and epoch', () => {
    const key = openFor(23 * HOUR);
    expect(boundOpen(structuredClone(key.state), RULE, 30_000, NOW)).toEqual([
      { field: 'ou', value: String(NOW + 23 * HOUR) },
      { field: 'om', value: String(23 * HOUR) },
    ]);
    const r = stepKey(RULE, key, 'a', 1, report(30_000), NOW);
    expect(r).toMatchObject({ state: 1, openings: 1, remainingMs: 30_000, openMs: 30_000, generation: 77, epoch: 3 });
    expect(key.state).toMatchObject({ ou: NOW + 30_000, om: 30_000, g: 77, e: 3, r: 1, rt: NOW });
    // Half-open 30 s later: the member's claim is granted, its lease as long as the period.
    expect(stepKey(RULE, key, 'a', 2, report(30_000), NOW + 29_999).state).toBe(1);
    const claim = stepKey(RULE, key, 'a', 3, report(30_000, PROBE_OPS.claim, 9), NOW + 30_000);
    expect(claim).toMatchObject({ state: 2, lease: 9, leaseRemainingMs: 30_000 });
  });

  it('the time left and the period are bounded each on its own: a period of 23 h with 10 s left keeps its 10 s', () => {
    const key = openFor(23 * HOUR);
    key.state.ou = NOW + 10_000;
    expect(boundOpen(key.state, RULE, 30_000, NOW)).toEqual([{ field: 'om', value: String(23 * HOUR) }]);
    expect(key.state).toMatchObject({ ou: NOW + 10_000, om: 30_000 });
  });

  it('a state within the bound is left exactly as it was: 20 s open against a 30-s bound, and 30 s against 30 s', () => {
    for (const openMs of [20_000, 30_000]) {
      const key = openFor(openMs, [{ member: 'b', id: 4, expiry: NOW - 1 + openMs }]);
      const before = structuredClone(key.state);
      expect(boundOpen(key.state, RULE, 30_000, NOW)).toEqual([]);
      expect(key.state).toEqual(before);
    }
  });

  it('without a longest period (0) a day bounds, as before: 23 h is left as it was', () => {
    const key = openFor(23 * HOUR);
    const before = structuredClone(key.state);
    expect(boundOpen(key.state, RULE, 0, NOW)).toEqual([]);
    expect(key.state).toEqual(before);
    expect(BREAKER.dayMs).toBe(24 * HOUR);
  });

  it('a closed state is never touched', () => {
    const key: FleetKey = { state: seeded({ s: 0, n: 0, remainingMs: 0, om: 0 }, 77, NOW), members: new Map() };
    const before = structuredClone(key.state);
    expect(boundOpen(key.state, RULE, 1, NOW)).toEqual([]);
    expect(key.state).toEqual(before);
  });

  it('a probe lease lasts at most probeTimeoutMs from now, or the longest period without one: a lease of 23 h lapses within it and reopens the state', () => {
    const lease = { member: 'b', id: 4, expiry: NOW + 23 * HOUR };
    const timed = openFor(0, [lease]);
    expect(boundOpen(timed.state, { ...RULE, probeTimeoutMs: 5000 }, 30_000, NOW)).toEqual([
      { field: 'l', value: `b:4:${NOW + 23 * HOUR}` },
    ]);
    expect(timed.state.leases).toEqual([{ member: 'b', id: 4, expiry: NOW + 5000 }]);
    const untimed = openFor(0, [lease]);
    stepKey(RULE, untimed, 'a', 1, report(30_000), NOW);
    expect(untimed.state.leases).toEqual([{ member: 'b', id: 4, expiry: NOW + 30_000 }]);
    // The lease lapses without a result 30 s on: a failed probe, the next opening as of then.
    const r = stepKey(RULE, untimed, 'a', 2, report(30_000), NOW + 30_000);
    expect(r).toMatchObject({ state: 1, openings: 2, remainingMs: 30_000, probes: 0, epoch: 4, reason: 3 });
  });

  it('members whose bounds differ (a rolling deploy of openBackoff) converge on the narrowest: one shortening, then neither touches the state', () => {
    // The wide member (60 s) opened the fleet; the narrow one (30 s) reports 5 s later.
    const key = openFor(60_000);
    const wide = (seq: number, at: number) => stepKey(RULE, key, 'wide', seq, report(60_000), at);
    const narrow = (seq: number, at: number) => stepKey(RULE, key, 'narrow', seq, report(30_000), at);
    expect(boundOpen(structuredClone(key.state), RULE, 30_000, NOW + 5000).map((b) => b.field)).toEqual(['ou', 'om']);
    expect(narrow(1, NOW + 5000)).toMatchObject({ remainingMs: 30_000, openMs: 30_000, generation: 77, epoch: 3 });
    const settled = structuredClone(key.state);
    expect(wide(1, NOW + 6000)).toMatchObject({ remainingMs: 29_000, openMs: 30_000, generation: 77, epoch: 3 });
    expect(narrow(2, NOW + 7000)).toMatchObject({ remainingMs: 28_000, openMs: 30_000, generation: 77, epoch: 3 });
    expect(key.state).toEqual(settled);
    expect(replyOf(key, 'wide', NOW + 35_000).state).toBe(2);
  });
});
