import type { BackoffPolicy } from '../backoff/backoff.js';
import { seeded } from '../core/random.js';
import { checkKeys, count, invalid, nonNegative, optionsObject } from '../core/validate.js';
import { virtualClock } from '../core/virtual-clock.js';
import { breakerModel } from '../redis/breaker-model.js';
import { breakerScriptSha, type SharedCircuitBreaker, sharedCircuitBreaker } from '../redis/shared-breaker.js';
import { circuitBreaker } from '../resilience/circuit-breaker.js';

/** Options of {@link simulateFleetBreaker}. Durations in ms of simulated time. */
export interface FleetBreakerOptions {
  /** Processes calling the service. Default 100; at most 1000. */
  readonly processes?: number;
  /** Calls a second of each process, evenly spaced. Default 10. */
  readonly callsPerSecond?: number;
  /** Simulated time. Default 30 000. */
  readonly durationMs?: number;
  /** The service is down for everyone from … Default 5000. */
  readonly outageFromMs?: number;
  /** … to. Default 15 000. */
  readonly outageToMs?: number;
  /** Processes whose every call fails throughout (partitioned from a service that is fine). Default 1. */
  readonly partitioned?: number;
  /** The breakers' rule, as `sharedCircuitBreaker` takes it (the local breakers take the same, but `minMembers`). */
  readonly failureRate?: number;
  readonly minCalls?: number;
  readonly minMembers?: number;
  /** More than this share of the reporting members must fail to open the fleet: `sharedCircuitBreaker`'s (default 0.5). */
  readonly memberFailureRate?: number;
  readonly windowMs?: number;
  readonly reportMs?: number;
  readonly openBackoff?: BackoffPolicy;
  /** Seed of the `seeded()` generator the breakers' open periods draw their jitter from. Default 1. */
  readonly seed?: number;
}

/** One fleet's counts: calls that reached the service, in the outage, and after it. */
export interface FleetBreakerCounts {
  /** Calls that reached the service while it was down (partitioned processes' calls not counted). */
  readonly reachedInOutage: number;
  /** Of those, after every process had been refused once (the breakers had opened). */
  readonly reachedAfterOpen: number;
  /** When every process had been refused once, from the outage's start (ms); `Infinity`: never. */
  readonly openedAfterMs: number;
  /** The first call that succeeded after the service came back, from then (ms). */
  readonly firstSuccessAfterMs: number;
  /** Calls of healthy processes refused before the outage: what a wrong opening (the partition) costs. */
  readonly refusedWhileUp: number;
  /** Calls of the partitioned processes that were refused (their own breakers stopping them). */
  readonly partitionedRefused: number;
  /** Redis commands per call (0 for local breakers). */
  readonly commandsPerCall: number;
}

/** What {@link simulateFleetBreaker} reports: the shared breaker beside one local breaker per process. */
export interface FleetBreakerResult {
  readonly processes: number;
  readonly calls: number;
  readonly shared: FleetBreakerCounts;
  readonly local: FleetBreakerCounts;
}

const settle = async (): Promise<void> => {
  // A turn of the event loop: setImmediate in Node.js, a zero timeout elsewhere.
  const turn = typeof setImmediate === 'function' ? setImmediate : (f: () => void) => setTimeout(f, 0);
  for (let i = 0; i < 3; i++) await new Promise<void>((r) => turn(r));
};

/**
 * A fleet of processes, one dead downstream, and partitioned members: `sharedCircuitBreaker` —
 * the real member code — against a model of Redis (the fleet rule's TypeScript step, which the
 * tests hold equal to the Lua on a real redis-server), beside one local `circuitBreaker` per
 * process, on a virtual clock. It shows what one machine cannot run as processes: 100 to 1,000
 * members, deterministic by `seed`. The model answers at once and never fails; Redis's own failures are measured against
 * a real server (test/redis/fleet-breaker.test.ts).
 */
export async function simulateFleetBreaker(options?: FleetBreakerOptions): Promise<FleetBreakerResult> {
  const where = 'simulateFleetBreaker()';
  const o = optionsObject(where, options) as FleetBreakerOptions;
  checkKeys(where, o, [
    'processes',
    'callsPerSecond',
    'durationMs',
    'outageFromMs',
    'outageToMs',
    'partitioned',
    'failureRate',
    'minCalls',
    'minMembers',
    'memberFailureRate',
    'windowMs',
    'reportMs',
    'openBackoff',
    'seed',
  ]);
  const processes = count(where, 'processes', o.processes, 100, 1, false, 'For example 100.');
  if (processes > 1000) invalid(where, 'processes', processes, 'at most 1000', 'For example 100.');
  const perSecond = nonNegative(where, 'callsPerSecond', o.callsPerSecond, 10, false, 'For example 10.');
  if (!(perSecond >= 0.1 && perSecond <= 100))
    invalid(where, 'callsPerSecond', perSecond, 'from 0.1 to 100', 'For example 10.');
  const durationMs = nonNegative(where, 'durationMs', o.durationMs, 30_000, false, 'For example 30000.');
  if (durationMs > 600_000) invalid(where, 'durationMs', durationMs, 'at most 600000', 'For example 30000.');
  const from = nonNegative(where, 'outageFromMs', o.outageFromMs, 5000, false, 'For example 5000.');
  const to = nonNegative(where, 'outageToMs', o.outageToMs, 15_000, false, 'For example 15000.');
  if (to < from) invalid(where, 'outageToMs', to, `at least outageFromMs (${from})`, 'For example 15000.');
  const partitioned = count(where, 'partitioned', o.partitioned, 1, 0, false, 'For example 1.');
  if (partitioned >= processes) invalid(where, 'partitioned', partitioned, `fewer than processes (${processes})`);
  const rule = {
    failureRate: o.failureRate ?? 0.5,
    minCalls: o.minCalls ?? 20,
    windowMs: o.windowMs ?? 10_000,
    ...(o.openBackoff ? { openBackoff: o.openBackoff } : {}),
  };
  const seed = count(where, 'seed', o.seed, 1, 0, false, 'Any whole number; equal seeds give equal runs.');
  const stepMs = 1000 / perSecond;

  async function run(kind: 'shared' | 'local'): Promise<{ counts: FleetBreakerCounts; calls: number }> {
    const clock = virtualClock(0);
    const model = breakerModel(clock);
    // One generator per run: the shared and the local fleet draw the same sequence.
    const random = seeded(seed);
    const guards = Array.from({ length: processes }, () =>
      kind === 'shared'
        ? sharedCircuitBreaker({
            client: model,
            name: 'sim',
            clock,
            random,
            ...rule,
            minMembers: o.minMembers ?? 2,
            ...(o.memberFailureRate === undefined ? {} : { memberFailureRate: o.memberFailureRate }),
            reportMs: o.reportMs ?? 1000,
          })
        : circuitBreaker({ ...rule, consecutiveFailures: Infinity, clock, random }),
    );
    const refusedOnce = new Set<number>();
    let reachedInOutage = 0;
    let reachedAfterOpen = 0;
    let openedAt = Number.POSITIVE_INFINITY;
    let firstSuccess = Number.POSITIVE_INFINITY;
    let refusedWhileUp = 0;
    let partitionedRefused = 0;
    let calls = 0;
    for (let t = 0; t < durationMs; t += stepMs) {
      const down = t >= from && t < to;
      await Promise.all(
        guards.map(async (g, i) => {
          calls++;
          const cut = i < partitioned;
          let ticket: unknown;
          try {
            ticket = await g.acquire();
          } catch {
            if (cut) partitionedRefused++;
            else if (t < from) refusedWhileUp++;
            if (down && !cut) refusedOnce.add(i);
            return;
          }
          const fails = cut || down;
          if (down && !cut) {
            reachedInOutage++;
            if (t >= openedAt) reachedAfterOpen++;
          }
          if (!fails && t >= to && firstSuccess === Number.POSITIVE_INFINITY) firstSuccess = t;
          g.record(fails ? 'failure' : 'success', ticket, fails ? new Error('down') : undefined);
        }),
      );
      if (openedAt === Number.POSITIVE_INFINITY && refusedOnce.size === processes - partitioned) openedAt = t;
      await clock.advance(stepMs);
      await settle();
    }
    for (const g of guards) await (g as SharedCircuitBreaker).close?.();
    return {
      calls,
      counts: {
        reachedInOutage,
        reachedAfterOpen,
        openedAfterMs: openedAt - from,
        firstSuccessAfterMs: firstSuccess - to,
        refusedWhileUp,
        partitionedRefused,
        commandsPerCall: kind === 'shared' ? model.calls / calls : 0,
      },
    };
  }
  // Known before virtual time starts: every member's first command then goes out at once.
  await breakerScriptSha();
  const shared = await run('shared');
  const local = await run('local');
  return { processes, calls: shared.calls, shared: shared.counts, local: local.counts };
}
