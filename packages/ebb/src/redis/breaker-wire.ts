/**
 * The fleet breaker's wire: the ARGV a member sends to `BREAKER_SCRIPT` (breaker-script.ts) and
 * the reply it gets back, checked where it enters. A reply that is not the script's shape — a
 * wrong length, a count that is not a whole number, a state outside {0, 1, 2}, a time past a day —
 * is refused with a `TypeError`, which the member treats as Redis failing (it falls back to its
 * local breaker): nothing a store says is trusted.
 */
import { BREAKER, FLEET_REASONS, type FleetRule, type KeyReply, type KeyReport } from './breaker-law.js';
import { faultOf, quote, type SharedProblem } from './protocol.js';

/** ARGV[4..11]: the rule every member of one name shares. */
export function ruleArgs(r: FleetRule): string[] {
  return [
    String(r.failureRate),
    String(r.minCalls),
    String(r.minMembers),
    String(r.windowMs),
    String(r.maxHalfOpenProbes),
    String(r.successesToClose),
    String(r.probeTimeoutMs),
    String(r.memberFailureRate),
  ];
}

/** One key's BREAKER.argsPerKey ARGV entries. */
export function keyArgs(k: KeyReport): string[] {
  return [
    String(k.generation),
    String(k.epoch),
    String(k.calls),
    String(k.failures),
    String(k.op),
    String(k.leaseId),
    String(k.seed.s),
    String(k.seed.n),
    String(Math.max(0, Math.round(k.seed.remainingMs))),
    String(Math.max(0, Math.round(k.seed.om))),
    k.periods.map((p) => String(Math.max(1, Math.round(p)))).join(','),
    String(Math.max(0, Math.round(k.longestMs))),
  ];
}

/** The whole ARGV of a report (mode ''), an inspection or a reset. */
export function reportArgs(
  mode: '' | 'inspect' | 'reset',
  member: string,
  generation: string,
  rule: FleetRule,
  ttlMs: number,
  seq: number,
  keys: readonly KeyReport[],
): string[] {
  const args = [mode, member, generation, ...ruleArgs(rule), String(Math.ceil(ttlMs)), String(seq)];
  for (const k of keys) args.push(...keyArgs(k));
  return args;
}

/** One key's reply as the script's first values, in their order (BREAKER.replyPerKey less the three of a repair). */
export function replyValues(r: KeyReply): number[] {
  return [
    r.state,
    r.openings,
    r.remainingMs,
    r.openMs,
    r.epoch,
    r.closings,
    r.generation,
    r.lease,
    r.leaseRemainingMs,
    r.probes,
    r.calls,
    r.failures,
    r.failingMembers,
    r.reason,
  ];
}

/** One key's reply, checked, and the first stored value the script repaired for it (if any). */
export interface CheckedReply extends KeyReply {
  readonly fault: SharedProblem | undefined;
}

const num = (where: string, name: string, x: unknown, lo: number, hi: number): number => {
  const v = typeof x === 'string' || typeof x === 'number' ? Number(x) : Number.NaN;
  if (!(Number.isInteger(v) && v >= lo && v <= hi)) {
    throw new TypeError(`${where}: Redis answered ${name} = ${quote(x)}; expected a whole number from ${lo} to ${hi}`);
  }
  return v;
};

/** Reads the script's reply for `n` keys; throws a `TypeError` naming the first value out of its domain. */
export function parseReply(where: string, reply: unknown, n: number): CheckedReply[] {
  if (!Array.isArray(reply) || reply.length !== n * BREAKER.replyPerKey) {
    throw new TypeError(
      `${where}: Redis answered ${quote(reply)}; expected ${n * BREAKER.replyPerKey} values (${BREAKER.replyPerKey} per key)`,
    );
  }
  const out: CheckedReply[] = [];
  const day = BREAKER.dayMs;
  const max = Number.MAX_SAFE_INTEGER;
  for (let i = 0; i < n; i++) {
    const r = reply.slice(i * BREAKER.replyPerKey, (i + 1) * BREAKER.replyPerKey);
    const state = num(where, 'state', r[0], 0, 2) as 0 | 1 | 2;
    const openings = num(where, 'openings', r[1], 0, BREAKER.maxOpenings);
    const calls = num(where, 'calls', r[10], 0, max);
    const failures = num(where, 'failures', r[11], 0, calls);
    const checked: CheckedReply = {
      state,
      openings,
      remainingMs: num(where, 'remainingMs', r[2], 0, day),
      openMs: num(where, 'openMs', r[3], 0, day),
      epoch: num(where, 'epoch', r[4], 0, max),
      closings: num(where, 'closings', r[5], 0, max),
      generation: num(where, 'generation', r[6], 1, max),
      lease: num(where, 'lease', r[7], -1, max),
      leaseRemainingMs: num(where, 'leaseRemainingMs', r[8], 0, day),
      probes: num(where, 'probes', r[9], 0, BREAKER.maxProbes),
      calls,
      failures,
      failingMembers: num(where, 'failingMembers', r[12], 0, max),
      reason: num(where, 'reason', r[13], 0, FLEET_REASONS.length - 1),
      fault: faultOf(r, 14),
    };
    if ((state === 0) !== (openings === 0)) {
      throw new TypeError(
        `${where}: Redis answered state ${state} with ${openings} openings; expected openings >= 1 exactly when open`,
      );
    }
    out.push(checked);
  }
  return out;
}

/**
 * One key of a shared breaker as Redis holds it (`inspect()`): nothing is written, no lease is
 * taken. The fleet's numbers are there when the state is sound; `problems` lists every value the
 * next report would repair.
 */
export interface SharedBreakerInspection {
  /** The state's key (the members' snapshots are `…:members`, their lapse times `…:lapses`). */
  readonly key: string;
  /** Whether the key holds a state (of any layout). */
  readonly exists: boolean;
  /** The fleet's state by the server's clock, when sound. */
  readonly state: 'closed' | 'open' | 'half-open' | undefined;
  /** Openings since the fleet last closed (0 when closed). */
  readonly openings: number | undefined;
  /** What is left of the open period, in ms (0 when closed or half-open). */
  readonly remainingMs: number | undefined;
  /** The current open period, in ms. */
  readonly openMs: number | undefined;
  /** The state's generation: another one means the state was lost, repaired or reset. */
  readonly generation: number | undefined;
  /** Changes of state so far in this generation. */
  readonly epoch: number | undefined;
  /** Probe leases held now. */
  readonly probes: number | undefined;
  /** The fleet's calls and failures in the window, and the members that see `failureRate` on their own. */
  readonly calls: number | undefined;
  readonly failures: number | undefined;
  readonly failingMembers: number | undefined;
  /** Why the state last changed: `'failure-rate'`, `'probe-failed'`, `'reset'`, … (`''`: it never did). */
  readonly reason: string | undefined;
  /** Members' snapshots held (members that reported within the window, or whose snapshot has not lapsed yet). */
  readonly members: number;
  /** The state's fields as stored (name → value). */
  readonly fields: Readonly<Record<string, string>>;
  readonly problems: readonly SharedProblem[];
}

/** Reads the script's answer to 'inspect' for the state key `key`; throws a `TypeError` for any other shape. */
export function parseInspection(where: string, key: string, reply: unknown): SharedBreakerInspection {
  if (!Array.isArray(reply) || reply.length !== 4 || !Array.isArray(reply[0]) || !Array.isArray(reply[1])) {
    throw new TypeError(`${where}: Redis answered ${quote(reply)}; expected the inspection's four parts`);
  }
  const [values, raw, held, faults] = reply as [unknown[], unknown[], unknown, unknown];
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) fields[String(raw[i])] = String(raw[i + 1]);
  const problems: SharedProblem[] = [];
  const list = Array.isArray(faults) ? faults : [];
  for (let i = 0; i < list.length; i += 3) {
    const p = faultOf(list, i);
    if (p) problems.push(p);
  }
  const members = Number(held);
  if (!(Number.isInteger(members) && members >= 0)) {
    throw new TypeError(`${where}: Redis answered ${quote(held)} snapshots; expected a whole number >= 0`);
  }
  const r = values.length === 0 ? undefined : parseReply(where, [...values, '', '', ''], 1)[0];
  return {
    key,
    exists: raw.length > 0 || problems.some((p) => p.key === key && p.field === '(type)'),
    state: r === undefined ? undefined : r.state === 0 ? 'closed' : r.state === 1 ? 'open' : 'half-open',
    openings: r?.openings,
    remainingMs: r?.remainingMs,
    openMs: r?.openMs,
    generation: r?.generation,
    epoch: r?.epoch,
    probes: r?.probes,
    calls: r?.calls,
    failures: r?.failures,
    failingMembers: r?.failingMembers,
    reason: r === undefined ? undefined : FLEET_REASONS[r.reason],
    members,
    fields,
    problems,
  };
}
