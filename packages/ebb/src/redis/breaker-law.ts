/**
 * The fleet circuit breaker's rule as a pure step over one key's state: what `BREAKER_SCRIPT`
 * (breaker-script.ts) does inside Redis, written once more in TypeScript so that the simulator
 * and the unit tests can run the real member code against a model of Redis. No clock, no timer,
 * no I/O: time arrives as `now` (the Redis server's clock, in ms). `test/redis/breaker-law.test.ts`
 * feeds both the same traces and requires the same replies; a change here must be made in the Lua
 * too, and the other way round.
 *
 * The rule (docs/redis.md, "Fleet-wide circuit breaker"):
 *
 * - **Evidence.** Each member keeps its own window of `windowMs` and reports it whole — its calls
 *   and the ones it counts failed (every one while its own local breaker is open: that breaker has
 *   judged the service down for it) — as a snapshot that replaces its previous one (a report with
 *   an older sequence number changes nothing) and lapses `windowMs` after it was sent. The fleet
 *   keeps the sums over the live snapshots: calls `C`, failures `F`, and `M`, the members whose own
 *   snapshot meets the failure rate. Only snapshots of the current epoch `e` count: a member that
 *   has not heard the last state change reports old evidence, which puts it on the roster (a
 *   snapshot of no calls) and nothing more. A change of state zeroes every snapshot but keeps it
 *   until it lapses, so the roster — the members that reported within `windowMs` — is whole from
 *   the first moment of each epoch.
 * - **closed → open** when `C ≥ minCalls`, `F ≥ failureRate × C` (and `F ≥ 1`),
 *   `M ≥ minMembers` and `M > memberFailureRate × roster`: a share of the fleet's calls failing,
 *   seen by several members that are a share of the fleet. Members whose calls all fail while the
 *   service answers the others (partitioned) open it only when they are more than that share:
 *   members that fail report four times as often as healthy ones, and their evidence alone can
 *   meet the call-weighted rate before the others' first report of an epoch arrives.
 * - **open** for a period the opening member proposed (its `openBackoff`'s step `n`, the number of
 *   openings since the fleet last closed); then **half-open**: up to `maxHalfOpenProbes` members each
 *   hold a probe lease, which expires after `probeTimeoutMs` (default: the open period before it).
 * - **half-open → closed** after `successesToClose` successful probes; **→ open** (step `n + 1`) at
 *   a failed probe, or when a lease expired without a result (its prober died or hung), as of the
 *   moment it expired. A result is applied once: its lease goes with it.
 * - Every change of state moves the epoch on and clears the snapshots; a closing also counts one
 *   more closing `k`, by which members know the service answered a probe again.
 * - **Bounds.** An open state holds the reporting member no longer than the longest open period it
 *   would ever propose: longer time left, a longer period or a longer probe lease is shortened to
 *   it in place, before the step (`boundOpen`).
 */

/** The constants of the fleet rule, read by the Lua text too (breaker-script.ts). */
export const BREAKER = {
  /** The layout of the state hash (field `v`). */
  layout: 1,
  /** Times stored are within this of the server's clock (ms): a day. Open periods and leases are capped at it. */
  dayMs: 86_400_000,
  /** Counts stop being exact above this (2^53). */
  maxCount: 9_007_199_254_740_992,
  /** The most openings in a row a state may say. */
  maxOpenings: 1_000_000,
  /** Snapshots dropped per call at most (lapsed ones); the rest go at the next calls. */
  maxPruned: 100,
  /** Open periods a report proposes at most. */
  maxPeriods: 16,
  /** Keys one report carries at most. */
  maxKeysPerCall: 32,
  /** `maxHalfOpenProbes` at most. */
  maxProbes: 100,
  /** Each key of a report takes this many ARGV entries, and its reply this many values. */
  argsPerKey: 12,
  replyPerKey: 17,
  /** ARGV entries before the keys' own. */
  headArgs: 13,
  /**
   * A member whose own breaker opened this many report periods or more before it heard the fleet
   * open was failing alone: it leaves the half-open probes to the others (shared-breaker.ts).
   */
  aloneReports: 2,
} as const;

/** Why the fleet's state last changed: the index is what the state hash stores (`r`). */
export const FLEET_REASONS = [
  '',
  'failure-rate',
  'probe-failed',
  'probe-timeout',
  'probes-succeeded',
  'reset',
] as const;
export type FleetReason = (typeof FLEET_REASONS)[number];

/** A probe's business in a report: none, a claim, its result (success, failure), or a lease handed back unused. */
export const PROBE_OPS = { none: 0, claim: 1, success: 2, failure: 3, release: 4 } as const;
export type ProbeOp = (typeof PROBE_OPS)[keyof typeof PROBE_OPS];

/** One member's probe lease: who holds it, its id, and when it lapses (server ms). */
export interface FleetLease {
  readonly member: string;
  readonly id: number;
  readonly expiry: number;
}

/** The fleet's state of one key (the hash `<prefix>:{<name>}:breaker:<key>`). */
export interface FleetState {
  /** Generation: drawn by the process that created the state. */
  g: number;
  /** 0 closed, 1 open (half-open once `now ≥ ou`). */
  s: 0 | 1;
  /** Openings since the fleet last closed. */
  n: number;
  /** Open until (server ms), 0 while closed. */
  ou: number;
  /** The open period that runs (or ran) now, ms. */
  om: number;
  /** Successful probes since the state opened. */
  ps: number;
  /** Epoch: changes of state. */
  e: number;
  /** Closings. */
  k: number;
  /** Reason of the last change (an index of FLEET_REASONS), and when (server ms, 0: none). */
  r: number;
  rt: number;
  /** Sums over the live snapshots: calls, failures, members meeting the failure rate. */
  C: number;
  F: number;
  M: number;
  leases: FleetLease[];
}

/** One member's last snapshot: its sequence number, calls, failures, and when it lapses (server ms). */
export interface MemberSnapshot {
  readonly seq: number;
  readonly c: number;
  readonly f: number;
  readonly exp: number;
}

/** The fleet's rule: the options every member of one name must share. */
export interface FleetRule {
  readonly failureRate: number;
  readonly minCalls: number;
  readonly minMembers: number;
  readonly windowMs: number;
  readonly maxHalfOpenProbes: number;
  readonly successesToClose: number;
  /** 0: the open period before the probe. */
  readonly probeTimeoutMs: number;
  /**
   * The fleet opens only when more than this share of the members that reported within `windowMs`
   * (in any state, epoch or generation) see `failureRate` in their own snapshots: members cut off
   * from a healthy service open it only when they are more than that share of the fleet. From 0
   * (`minMembers` alone) up to, not including, 1.
   */
  readonly memberFailureRate: number;
}

/** What a member's last good view says, to recreate a missing or broken state from. */
export interface FleetSeed {
  readonly s: 0 | 1;
  readonly n: number;
  readonly remainingMs: number;
  readonly om: number;
}

/** One key's part of a member's report. */
export interface KeyReport {
  /** The generation and epoch the snapshot belongs to (the member's last heard; 0 and -1: none heard). */
  readonly generation: number;
  readonly epoch: number;
  readonly calls: number;
  readonly failures: number;
  readonly op: ProbeOp;
  /** The lease the op is about (a claim: the id to give it). */
  readonly leaseId: number;
  readonly seed: FleetSeed;
  /** Open periods the member proposes for openings 1, 2, … (the last one for any later). */
  readonly periods: readonly number[];
  /**
   * The longest open period the member would ever propose (its `openBackoff`'s largest draw over
   * those openings, at most a day; 0: none known, a day bounds): a stored open state binds it no
   * longer than this (see {@link boundOpen}).
   */
  readonly longestMs: number;
}

/** What the fleet answers about one key. */
export interface KeyReply {
  /** 0 closed, 1 open, 2 half-open. */
  readonly state: 0 | 1 | 2;
  readonly openings: number;
  /** What is left of the open period (0 unless open). */
  readonly remainingMs: number;
  readonly openMs: number;
  readonly epoch: number;
  readonly closings: number;
  readonly generation: number;
  /** The caller's lease id, when it holds one (granted now or before), else -1. */
  readonly lease: number;
  /** Until the caller's lease lapses, or (without one) the first of the others' leases; 0 for none. */
  readonly leaseRemainingMs: number;
  readonly probes: number;
  readonly calls: number;
  readonly failures: number;
  readonly failingMembers: number;
  readonly reason: number;
}

/** One key's data in the model's store: the state and the snapshots. */
export interface FleetKey {
  state: FleetState;
  readonly members: Map<string, MemberSnapshot>;
}

/** Whether a snapshot meets the failure rate on its own. */
export const failing = (rule: FleetRule, c: number, f: number): boolean => f >= 1 && f >= rule.failureRate * c;

/**
 * Whether the closed fleet opens on its sums, with `members` snapshots held (the roster): enough
 * calls, `failureRate` of them failed, and failing members both `minMembers` and more than
 * `memberFailureRate` of the roster.
 */
export const opens = (rule: FleetRule, st: Pick<FleetState, 'C' | 'F' | 'M'>, members: number): boolean =>
  st.C >= rule.minCalls &&
  st.F >= 1 &&
  st.F >= rule.failureRate * st.C &&
  st.M >= rule.minMembers &&
  st.M > rule.memberFailureRate * members;

/** The open period proposed for opening `n` (1-based): the last proposal for any later one; `fallback` without any. */
export function periodFor(periods: readonly number[], n: number, fallback: number): number {
  if (periods.length === 0) return fallback;
  return periods[Math.min(n, periods.length) - 1] as number;
}

/** A field {@link boundOpen} shortened, and the value it held (as the Lua quotes it). */
export interface BoundedField {
  readonly field: 'ou' | 'om' | 'l';
  readonly value: string;
}

/**
 * Bounds an open state by what the reporting member would ever choose, as the Lua does before
 * each report's step: what is left of the open period (`ou - now`) and the period itself (`om`)
 * at most `longestMs` (a day when 0), each probe lease at most `probeTimeoutMs` from now (or
 * `longestMs` without one: a lease then lasts the open period). Returns the fields it shortened,
 * in that order; an empty list leaves the state as it was.
 *
 * Why a clamp and not a repair (a new generation from the member's seed): a longer state can be
 * sound — a member with a longer `openBackoff` opened it, as happens throughout a rolling deploy
 * of new options. A repair would close the fleet under a new generation, its evidence dropped and
 * every member calling the service again, each time such a member opened it; and the seed it
 * repairs from mirrors the fleet's last state, so it can hold the same long period. A clamp keeps
 * the state open, with its generation, epoch and evidence, and converges: each member shortens
 * only what would bind it beyond its own bound, so the fleet ends at the narrowest bound of its
 * members, and a state within every bound is left as it is.
 */
export function boundOpen(st: FleetState, rule: FleetRule, longestMs: number, now: number): BoundedField[] {
  const out: BoundedField[] = [];
  if (st.s !== 1) return out;
  const most = longestMs >= 1 && longestMs < BREAKER.dayMs ? longestMs : BREAKER.dayMs;
  if (st.ou > now + most) {
    out.push({ field: 'ou', value: String(st.ou) });
    st.ou = now + most;
  }
  if (st.om > most) {
    out.push({ field: 'om', value: String(st.om) });
    st.om = most;
  }
  const lease = rule.probeTimeoutMs > 0 ? Math.min(rule.probeTimeoutMs, BREAKER.dayMs) : most;
  st.leases = st.leases.map((l) => {
    if (l.expiry <= now + lease) return l;
    out.push({ field: 'l', value: `${l.member}:${l.id}:${l.expiry}` });
    return { member: l.member, id: l.id, expiry: now + lease };
  });
  return out;
}

/** A fresh state from a member's seed (an open seed resumes its openings and what was left of its period). */
export function seeded(seed: FleetSeed, generation: number, now: number): FleetState {
  const open = seed.s === 1;
  return {
    g: generation,
    s: open ? 1 : 0,
    n: open ? Math.max(1, seed.n) : 0,
    ou: open ? now + seed.remainingMs : 0,
    om: open ? seed.om : 0,
    ps: 0,
    e: 0,
    k: 0,
    r: 0,
    rt: 0,
    C: 0,
    F: 0,
    M: 0,
    leases: [],
  };
}

/**
 * A change of state drops the evidence but keeps the roster: each member's snapshot stays, with no
 * calls, until it lapses, so the members that report count at once in the new epoch.
 */
function clearEvidence(key: FleetKey): void {
  for (const [member, m] of key.members) key.members.set(member, { seq: m.seq, c: 0, f: 0, exp: m.exp });
  key.state.C = 0;
  key.state.F = 0;
  key.state.M = 0;
}

function open(key: FleetKey, n: number, at: number, reason: FleetReason, periods: readonly number[]): void {
  const st = key.state;
  st.s = 1;
  st.n = n;
  st.om = periodFor(periods, n, st.om);
  st.ou = at + st.om;
  st.ps = 0;
  st.leases = [];
  st.e++;
  st.r = FLEET_REASONS.indexOf(reason);
  st.rt = at;
  clearEvidence(key);
}

function close(key: FleetKey, at: number, reason: FleetReason): void {
  const st = key.state;
  st.s = 0;
  st.n = 0;
  st.ou = 0;
  st.om = 0;
  st.ps = 0;
  st.leases = [];
  st.e++;
  st.k++;
  st.r = FLEET_REASONS.indexOf(reason);
  st.rt = at;
  clearEvidence(key);
}

/** Drops the snapshots that lapsed by `now`, at most BREAKER.maxPruned, oldest first (ties by member). */
function prune(rule: FleetRule, key: FleetKey, now: number): void {
  const due = [...key.members].filter(([, m]) => m.exp <= now);
  due.sort(([a, x], [b, y]) => x.exp - y.exp || (a < b ? -1 : a > b ? 1 : 0));
  for (const [member, m] of due.slice(0, BREAKER.maxPruned)) {
    key.state.C -= m.c;
    key.state.F -= m.f;
    if (failing(rule, m.c, m.f)) key.state.M--;
    key.members.delete(member);
  }
}

/**
 * One key's step for one report of `member` (its call's sequence number `seq`) at `now`: lapsed
 * snapshots go, a lapsed lease reopens the state, the probe op is applied, the snapshot is taken,
 * and the closed state is judged. Mutates `key`; returns the reply.
 */
export function stepKey(
  rule: FleetRule,
  key: FleetKey,
  member: string,
  seq: number,
  report: KeyReport,
  now: number,
): KeyReply {
  const st = key.state;
  boundOpen(st, rule, report.longestMs, now);
  prune(rule, key, now);
  // A lease that lapsed without a result: its probe failed as of that moment.
  if (st.s === 1 && st.leases.length > 0) {
    let oldest = (st.leases[0] as FleetLease).expiry;
    for (const l of st.leases) if (l.expiry < oldest) oldest = l.expiry;
    if (oldest <= now) open(key, st.n + 1, oldest, 'probe-timeout', report.periods);
  }
  const mine = () => st.leases.find((l) => l.member === member);
  if (report.op === PROBE_OPS.claim) {
    if (st.s === 1 && now >= st.ou && !mine() && st.leases.length < rule.maxHalfOpenProbes) {
      const lengthMs = Math.max(1, rule.probeTimeoutMs > 0 ? rule.probeTimeoutMs : st.om);
      st.leases.push({ member, id: report.leaseId, expiry: now + Math.min(lengthMs, BREAKER.dayMs) });
    }
  } else if (report.op !== PROBE_OPS.none) {
    const i = st.leases.findIndex((l) => l.member === member && l.id === report.leaseId);
    if (i >= 0) {
      st.leases.splice(i, 1);
      if (report.op === PROBE_OPS.success) {
        st.ps++;
        if (st.ps >= rule.successesToClose) close(key, now, 'probes-succeeded');
      } else if (report.op === PROBE_OPS.failure) open(key, st.n + 1, now, 'probe-failed', report.periods);
    }
  }
  const old = key.members.get(member);
  if (old === undefined || old.seq < seq) {
    if (st.s === 0 && report.generation === st.g && report.epoch === st.e) {
      if (old !== undefined) {
        st.C -= old.c;
        st.F -= old.f;
        if (failing(rule, old.c, old.f)) st.M--;
      }
      st.C += report.calls;
      st.F += report.failures;
      if (failing(rule, report.calls, report.failures)) st.M++;
      key.members.set(member, { seq, c: report.calls, f: report.failures, exp: now + rule.windowMs });
    } else if (old === undefined || (old.c === 0 && old.f === 0)) {
      // Old news counts for nothing, but its member is in the fleet: on the roster, with no calls.
      key.members.set(member, { seq, c: 0, f: 0, exp: now + rule.windowMs });
    }
  }
  if (st.s === 0 && opens(rule, st, key.members.size)) open(key, 1, now, 'failure-rate', report.periods);
  return replyOf(key, member, now);
}

/** The reply about `key` for `member` at `now`, changing nothing. */
export function replyOf(key: FleetKey, member: string, now: number): KeyReply {
  const st = key.state;
  const own = st.leases.find((l) => l.member === member);
  let leaseRemainingMs = 0;
  if (own) leaseRemainingMs = own.expiry - now;
  else if (st.leases.length > 0) leaseRemainingMs = Math.min(...st.leases.map((l) => l.expiry)) - now;
  return {
    state: st.s === 0 ? 0 : now >= st.ou ? 2 : 1,
    openings: st.n,
    remainingMs: st.s === 1 ? Math.max(0, st.ou - now) : 0,
    openMs: st.om,
    epoch: st.e,
    closings: st.k,
    generation: st.g,
    lease: own ? own.id : -1,
    leaseRemainingMs: Math.max(0, leaseRemainingMs),
    probes: st.leases.length,
    calls: st.C,
    failures: st.F,
    failingMembers: st.M,
    reason: st.r,
  };
}

/** The state set back to closed with a new generation (an admin's `reset()`): the evidence goes too. */
export function resetKey(key: FleetKey, generation: number, now: number): void {
  const k = key.state.k;
  key.state = seeded({ s: 0, n: 0, remainingMs: 0, om: 0 }, generation, now);
  key.state.k = k + 1;
  key.state.r = FLEET_REASONS.indexOf('reset');
  key.state.rt = now;
  key.members.clear();
}
