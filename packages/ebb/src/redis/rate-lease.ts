/**
 * The rate script's answers as `sharedRate` reads them: a lease (seventeen values, each checked
 * against the caller's bounds — a value out of them fails the call and names itself) and an
 * inspection (the state, the leases, their expiries and the join order, read without a lease).
 */
import { faultOf, quote, type SharedProblem } from './protocol.js';
import type { Grids } from './time-division.js';

/** One lease as {@link SharedRate.inspect} shows it. */
export interface SharedRateMember {
  /** The member's id (random, one per `sharedRate`). */
  readonly id: string;
  /** Its share of the fleet's rate, requests per second. */
  readonly sharePerSecond: number;
  /** Whether its requests waited for their turn at its last renewal. */
  readonly waiting: boolean;
  /** Its accepted rate at its last renewal, undefined until it measured a second. */
  readonly acceptedPerSecond: number | undefined;
  /** The rate it sent at over the second before its last renewal. */
  readonly sentPerSecond: number;
  /** When its lease lapses, ms from now on the Redis server's clock. */
  readonly leaseExpiresInMs: number;
  /** Its place in the join order (its time slot), from 0; -1 if missing. */
  readonly rank: number;
}

/** What {@link SharedRate.inspect} returns: the fleet's state in Redis, read without a lease. */
export interface SharedRateInspection {
  /** The state's key (the leases are `…-members`, `…-leases`, the join order `…-order`). */
  readonly key: string;
  readonly exists: boolean;
  /** Sound state only: its generation, rate (`Infinity`: unlimited), epoch, and members still expected after a loss. */
  readonly generation: number | undefined;
  readonly ratePerSecond: number | undefined;
  readonly epoch: number | undefined;
  readonly ghosts: number | undefined;
  readonly members: readonly SharedRateMember[];
  /** The state's fields as stored. */
  readonly fields: Readonly<Record<string, string>>;
  /** Every value this process's next lease would repair (checked against its own bounds). */
  readonly problems: readonly SharedProblem[];
}

/** What the rate script answers to a lease, checked. */
export interface Lease {
  share: number;
  fleet: number;
  epoch: number;
  short: boolean;
  members: number;
  generation: number;
  rank: number;
  serverMs: number;
  throttledAt: number;
  grids: Grids;
  fault: SharedProblem | undefined;
}

/** The seventeen values of a lease's reply, checked against the caller's bounds; anything else fails the call, naming the value. */
export function parseLease(where: string, reply: unknown, minRate: number, maxRate: number, leaving: boolean): Lease {
  if (!Array.isArray(reply) || reply.length !== 17) {
    throw new TypeError(`${where}: Redis answered ${quote(reply)}; expected the rate script's seventeen values`);
  }
  const xs = reply.slice(0, 14).map((x) => (typeof x === 'string' || typeof x === 'number' ? Number(x) : Number.NaN));
  const n = (i: number) => xs[i] as number;
  const rate = (x: number) => (x === -1 ? maxRate === Number.POSITIVE_INFINITY : x >= 0 && x <= maxRate);
  const checks: [string, (x: number) => boolean, string][] = [
    // A member that leaves holds no share: -1.
    [
      'share',
      (x) => rate(x) || (leaving && x === -1),
      `a rate from 0 to maxRatePerSecond (${maxRate}), or -1 for unlimited without one`,
    ],
    // The fleet's rate never goes below the minimum (a share may: an equal part of a fleet too slow
    // for every member to have it; a 0 from a script that knows no better is paced as a wait).
    [
      'fleet rate',
      (x) => rate(x) && (x === -1 || x >= minRate),
      `a rate from minRatePerSecond (${minRate}) to maxRatePerSecond (${maxRate}), or -1 for unlimited without one`,
    ],
    ['epoch', (x) => Number.isSafeInteger(x) && x >= 0, 'a whole number >= 0'],
    ['short', (x) => x === 0 || x === 1, '0 or 1'],
    ['members', (x) => Number.isSafeInteger(x) && x >= 0, 'a whole number >= 0'],
    ['generation', (x) => Number.isSafeInteger(x) && x >= 1, 'a whole number >= 1'],
    ['rank', (x) => Number.isSafeInteger(x) && x >= -1, 'a whole number >= -1'],
    ['server clock', Number.isFinite, 'a finite number of ms'],
    ['rate last throttled', (x) => x === -1 || (x > 0 && Number.isFinite(x)), 'a rate > 0, or -1 for none'],
    ['grid rate before', (x) => x > 0 && x <= 1e300, 'a rate > 0'],
    ['grid members before', (x) => Number.isSafeInteger(x) && x >= 0, 'a whole number >= 0'],
    ['grid rate', (x) => x > 0 && x <= 1e300, 'a rate > 0'],
    ['grid members', (x) => Number.isSafeInteger(x) && x >= 0, 'a whole number >= 0'],
    ['grid from', (x) => x >= -1e300 && Number.isFinite(x), 'a time in ms'],
  ];
  for (const [i, [name, ok, expected]] of checks.entries()) {
    if (!ok(n(i))) throw new TypeError(`${where}: Redis answered ${name} = ${quote(reply[i])}; expected ${expected}`);
  }
  return {
    share: n(0),
    fleet: n(1),
    epoch: n(2),
    short: n(3) === 1,
    members: n(4),
    generation: n(5),
    rank: n(6),
    serverMs: n(7),
    throttledAt: n(8),
    grids: { before: { rate: n(9), members: n(10) }, after: { rate: n(11), members: n(12) }, fromMs: n(13) },
    fault: faultOf(reply, 14),
  };
}

/** A rate script's inspection ([state, leases, expiries, order, faults, server clock]) as an object; any other reply fails the call. */
export function inspection(
  where: string,
  keys: readonly string[],
  reply: unknown,
  maxRate: number,
): SharedRateInspection {
  if (!Array.isArray(reply) || reply.length !== 6) {
    throw new TypeError(`${where}: Redis answered ${quote(reply)}; expected the inspection's six parts`);
  }
  const parts = reply as unknown[][];
  const pairs = (xs: unknown) => {
    const flat = Array.isArray(xs) ? xs.map(String) : [];
    const out: [string, string][] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i] as string, flat[i + 1] as string]);
    return out;
  };
  const fields = Object.fromEntries(pairs(parts[0]));
  const expiries = new Map(pairs(parts[2]).map(([k, v]) => [k, Number(v)]));
  const order = pairs(parts[3]).map(([k]) => k);
  const list = Array.isArray(parts[4]) ? parts[4] : [];
  const problems: SharedProblem[] = [];
  for (let i = 0; i < list.length; i += 3) {
    const p = faultOf(list, i);
    if (p) problems.push(p);
  }
  const serverMs = Number(parts[5]);
  const sound = !problems.some((p) => p.key === keys[0]) && Object.keys(fields).length > 0;
  const num = (k: string) => Number(fields[k]);
  const rate = num('r');
  const members = pairs(parts[1]).map(([id, value]) => {
    const [share, waiting, accepted, used] = value.split(',').map(Number) as [number, number, number, number];
    return {
      id,
      sharePerSecond: share,
      waiting: waiting === 1,
      acceptedPerSecond: accepted >= 0 ? accepted : undefined,
      sentPerSecond: used,
      leaseExpiresInMs: (expiries.get(id) ?? Number.NaN) - serverMs,
      rank: order.indexOf(id),
    };
  });
  return {
    key: keys[0] as string,
    exists: Object.keys(fields).length > 0,
    generation: sound ? num('g') : undefined,
    ratePerSecond: sound ? (rate >= 1e300 ? Number.POSITIVE_INFINITY : Math.min(rate, maxRate)) : undefined,
    epoch: sound ? num('e') : undefined,
    ghosts: sound ? num('gn') : undefined,
    members,
    fields,
    problems,
  };
}
