/**
 * The rate script's call as `sharedRate` sends it: the ARGV of a lease (a member's report, the
 * throttle it carries, the seed and the law's options) and of an admin call (`inspect`, `reset`),
 * each value in the position RATE_SCRIPT reads it from. Its own module because the order of these
 * values is the wire protocol with the script (redis/scripts.ts), read beside it; the replies are
 * read in rate-lease.ts. `RateLink` sends a call: `EVALSHA`, `EVAL` when the server lacks the
 * script, each raced against `commandTimeoutMs`.
 */
import type { Clock } from '../core/clock.js';
import { isNoScript, type RedisScripts, scriptSha } from './client.js';
import { finite } from './member-report.js';
import { newGeneration, Timeout } from './protocol.js';
import { RATE_SCRIPT } from './scripts.js';

/** Sends the rate script's calls to one fleet's keys, each bounded by `commandTimeoutMs`. */
export class RateLink {
  #sha: string | undefined;
  /** Commands sent: one `EVALSHA` per call, plus an `EVAL` when the server lacked the script. */
  commands = 0;

  constructor(
    readonly where: string,
    readonly scripts: RedisScripts,
    readonly keys: readonly string[],
    readonly clock: Clock,
    readonly commandTimeoutMs: number,
  ) {}

  /** `work`, or a `Timeout` after `commandTimeoutMs`. */
  bounded(work: Promise<unknown>): Promise<unknown> {
    const stop = new AbortController();
    return Promise.race([
      work,
      this.clock.sleep(this.commandTimeoutMs, stop.signal).then(() => {
        throw new Timeout(`${this.where}: Redis did not answer within ${this.commandTimeoutMs} ms`);
      }),
    ]).finally(() => stop.abort());
  }

  /** Runs the rate script with `args`: by its SHA, and by its text when the server lacks it. */
  async run(args: readonly string[]): Promise<unknown> {
    this.commands++;
    this.#sha ??= await scriptSha(RATE_SCRIPT);
    try {
      return await this.scripts.evalSha(this.#sha, this.keys, args);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      this.commands++;
      return await this.scripts.eval(RATE_SCRIPT, this.keys, args);
    }
  }
}

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
