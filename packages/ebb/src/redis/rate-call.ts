/**
 * The rate script's call as `sharedRate` sends it: the ARGV of a lease (a member's report, the
 * throttle it carries, the seed and the law's options) and of an admin call (`inspect`, `reset`),
 * each value in the position RATE_SCRIPT reads it from. Its own module because the order of these
 * values is the wire protocol with the script (redis/scripts.ts), read beside it; the replies are
 * read in rate-lease.ts.
 */
import { finite } from './member-report.js';
import { newGeneration } from './protocol.js';

/** What one lease call sends. */
export interface LeaseCall {
  /** The member's id. */
  readonly id: string;
  /** Whether its requests waited for their turn since the last call. */
  readonly saturated: boolean;
  /** Its sending rate, requests per second (see `memberReport`). */
  readonly used: number;
  /** Its accepted rate, requests per second; -1 while under a second is covered. */
  readonly accepted: number;
  /** The lease asked for, ms; 0 leaves the fleet. */
  readonly leaseMs: number;
  /** The throttle it reports: the epoch and generation of the request throttled; undefined: none. */
  readonly cut: { readonly epoch: number; readonly generation: number } | undefined;
  /** The fleet's rate to start from, should the call find the state missing or broken. */
  readonly seed: number;
  /** The law's options as the script takes them (`lawArgs`). */
  readonly lawArgs: readonly string[];
  /** Whether a success was recorded since the last call. */
  readonly succeeded: boolean;
  /** The successes its accepted rate counted. */
  readonly successes: number;
  /** The span they were counted over, ms. */
  readonly spanMs: number;
  /** Whether a throttle came in at least half the 100-ms slots of that span. */
  readonly refused: boolean;
  /** The members it last heard of (0: none heard yet). */
  readonly members: number;
  /** The rate the fleet was last throttled at, as heard (-1: none). */
  readonly throttledAt: number;
}

/** The ARGV of a lease call, in RATE_SCRIPT's order. */
export function leaseArgs(c: LeaseCall): string[] {
  const cut = c.cut;
  return [
    c.id,
    c.saturated ? '1' : '0',
    String(c.used),
    String(c.accepted),
    String(c.leaseMs),
    String(cut ? cut.epoch : -1),
    finite(c.seed),
    ...c.lawArgs,
    c.succeeded ? '1' : '0',
    String(c.successes),
    String(c.spanMs),
    c.refused ? '1' : '0',
    newGeneration(),
    String(cut ? cut.generation : 0),
    String(c.members),
    String(c.throttledAt),
    '',
  ];
}

/** The ARGV of an admin call: no report, no lease change; the seed is the configured initial rate. */
export function adminArgs(
  id: string,
  leaseMs: number,
  initialRatePerSecond: number,
  lawArgs: readonly string[],
  mode: 'inspect' | 'reset',
): string[] {
  return [
    id,
    '0',
    '0',
    '-1',
    String(leaseMs),
    '-1',
    finite(initialRatePerSecond),
    ...lawArgs,
    '0',
    '-1',
    '1000',
    '0',
    newGeneration(),
    '0',
    '0',
    '-1',
    mode,
  ];
}
