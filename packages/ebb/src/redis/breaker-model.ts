import type { Clock } from '../core/clock.js';
import {
  BREAKER,
  boundOpen,
  type FleetKey,
  type FleetRule,
  type KeyReport,
  type ProbeOp,
  seeded,
  stepKey,
} from './breaker-law.js';
import { replyValues } from './breaker-wire.js';
import type { RedisScripts } from './client.js';

/** What the fleet simulation does to the model between calls: lose everything, or stop answering. */
export interface BreakerModelControls {
  /** Every key gone (FLUSHALL, a restart without persistence). */
  flush(): void;
  /** While true, every call rejects (Redis down or partitioned from every member). */
  down: boolean;
  /** Calls answered so far. */
  readonly calls: number;
  /** The state of one key as the model holds it (its state hash's name), or undefined. */
  peek(key: string): FleetKey | undefined;
}

/**
 * A model of Redis running `BREAKER_SCRIPT`: the same ARGV and the same reply, computed by the
 * TypeScript step (breaker-law.ts) on `clock`, one call at a time as Redis runs scripts. The fleet
 * simulation runs real members against it (a machine cannot run 1,000 processes and a server);
 * `test/redis/fleet-breaker-law.test.ts` holds the step equal to the Lua on a real server.
 * Reports only: 'inspect' and 'reset' are the real script's.
 */
export function breakerModel(clock: Clock): RedisScripts & BreakerModelControls {
  const keys = new Map<string, FleetKey>();
  let calls = 0;
  const run = (keysOf: readonly string[], a: readonly string[]): string[] => {
    const member = a[1] as string;
    const rule: FleetRule = {
      failureRate: Number(a[3]),
      minCalls: Number(a[4]),
      minMembers: Number(a[5]),
      windowMs: Number(a[6]),
      maxHalfOpenProbes: Number(a[7]),
      successesToClose: Number(a[8]),
      probeTimeoutMs: Number(a[9]),
      memberFailureRate: Number(a[10]),
    };
    const seq = Number(a[12]);
    const now = Math.floor(clock.now());
    const out: string[] = [];
    for (let i = 0; i * 3 < keysOf.length; i++) {
      const b = BREAKER.headArgs + i * BREAKER.argsPerKey;
      const at = (j: number) => Number(a[b + j]);
      const report: KeyReport = {
        generation: at(0),
        epoch: at(1),
        calls: at(2),
        failures: at(3),
        op: at(4) as ProbeOp,
        leaseId: at(5),
        seed: { s: at(6) === 1 ? 1 : 0, n: at(7), remainingMs: at(8), om: at(9) },
        periods: (a[b + 10] ?? '').split(',').filter(Boolean).map(Number),
        longestMs: at(11),
      };
      const name = keysOf[3 * i] as string;
      let key = keys.get(name);
      if (!key) {
        key = { state: seeded(report.seed, Number(a[2]), now), members: new Map() };
        keys.set(name, key);
      }
      // The step bounds the state too; bounding it first names what was shortened, as the Lua does.
      const first = boundOpen(key.state, rule, report.longestMs, now)[0];
      const r = stepKey(rule, key, member, seq, report, now);
      out.push(...replyValues(r).map(String), ...(first ? [name, first.field, first.value] : ['', '', '']));
    }
    return out;
  };
  const model = {
    down: false,
    get calls() {
      return calls;
    },
    flush(): void {
      keys.clear();
    },
    peek(key: string): FleetKey | undefined {
      return keys.get(key);
    },
    async evalSha(_sha: string, k: readonly string[], a: readonly string[]): Promise<unknown> {
      if (model.down) throw new Error('ECONNREFUSED (model)');
      calls++;
      return run(k, a);
    },
    async eval(_source: string, k: readonly string[], a: readonly string[]): Promise<unknown> {
      return model.evalSha('', k, a);
    },
  };
  return model;
}
