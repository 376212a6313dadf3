import { simulateFleetBreaker } from 'ebb/sim';
import { type ChartSpec, document, HEIGHT, WIDTH } from './charts-spec.js';
import { formatDuration, parseDuration, parseNumber } from './duration.js';
import { type OutputFlags, parseCount, planned, type SimulateIO, type Simulation, seedOf } from './simulate-common.js';
import type { RunPlan } from './simulate-cost.js';
import { table } from './table.js';
import { UsageError } from './usage-error.js';

// `ebb simulate fleet-breaker`: the real sharedCircuitBreaker members (ebb/redis) against a model
// of Redis, beside one local circuitBreaker per process, on a virtual clock (ebb/sim's
// simulateFleetBreaker): what one machine cannot run as processes.

/** Flags of `ebb simulate fleet-breaker`. */
export interface FleetBreakerFlags extends OutputFlags {
  readonly processes?: string;
  readonly callsPerSecond?: string;
  readonly outageStart?: string;
  readonly outage?: string;
  readonly duration?: string;
  readonly partitioned?: string;
  readonly minMembers?: string;
  readonly memberFailureRate?: string;
}

const COUNTS = [
  ['reachedInOutage', 'reached the dead service'],
  ['reachedAfterOpen', '… after every process was refused'],
  ['openedAfterMs', 'opened after (from outage start)'],
  ['firstSuccessAfterMs', 'first success after recovery'],
  ['refusedWhileUp', 'healthy calls refused before the outage'],
  ['partitionedRefused', "partitioned processes' calls refused"],
  ['commandsPerCall', 'Redis commands per call'],
] as const;

const cell = (key: string, x: number): string =>
  key === 'commandsPerCall'
    ? x.toFixed(3)
    : key.endsWith('Ms')
      ? Number.isFinite(x)
        ? formatDuration(x)
        : 'never'
      : String(x);

/** `ebb simulate fleet-breaker`: a fleet through an outage with one shared breaker, and with one local breaker each. */
export async function fleetBreakerModel(flags: FleetBreakerFlags, io: SimulateIO): Promise<Simulation> {
  const seed = seedOf(flags);
  const processes = flags.processes === undefined ? 100 : parseCount('--processes', flags.processes);
  if (processes > 1000) throw new UsageError(`--processes expects at most 1000, got "${flags.processes}"`);
  const callsPerSecond =
    flags.callsPerSecond === undefined ? 10 : parseNumber('--calls-per-second', flags.callsPerSecond);
  if (!(callsPerSecond >= 0.1 && callsPerSecond <= 100)) {
    throw new UsageError(`--calls-per-second expects a number from 0.1 to 100, got "${flags.callsPerSecond}"`);
  }
  const outageFromMs = flags.outageStart === undefined ? 5_000 : parseDuration('--outage-start', flags.outageStart);
  const outageMs = flags.outage === undefined ? 10_000 : parseDuration('--outage', flags.outage);
  const durationMs = flags.duration === undefined ? 30_000 : parseDuration('--duration', flags.duration);
  if (durationMs > 600_000) throw new UsageError(`--duration expects at most 10m, got "${flags.duration}"`);
  const partitioned = flags.partitioned === undefined ? 1 : parseCount('--partitioned', flags.partitioned, 0);
  if (partitioned >= processes) {
    throw new UsageError(`--partitioned (${partitioned}) must be fewer than --processes (${processes})`);
  }
  const minMembers = flags.minMembers === undefined ? 2 : parseCount('--min-members', flags.minMembers);
  const memberFailureRate =
    flags.memberFailureRate === undefined ? 0.5 : parseNumber('--member-failure-rate', flags.memberFailureRate);
  if (!(memberFailureRate >= 0 && memberFailureRate < 1)) {
    throw new UsageError(
      `--member-failure-rate expects a number from 0 up to, not including, 1, got "${flags.memberFailureRate}"`,
    );
  }
  const options = {
    processes,
    callsPerSecond,
    durationMs,
    outageFromMs,
    outageToMs: outageFromMs + outageMs,
    partitioned,
    minMembers,
    memberFailureRate,
    seed,
  };
  const calls = (processes * callsPerSecond * durationMs) / 1000;
  const plan: RunPlan = {
    model: 'fleet-breaker',
    parts: [calls, calls],
    smaller: 'fewer --processes, fewer --calls-per-second or a shorter --duration',
  };
  const r = await planned(io, plan, () => simulateFleetBreaker(options));
  const text = [
    `fleet breaker — ${processes} processes × ${callsPerSecond} calls a second, the service down from ${formatDuration(outageFromMs)} for ${formatDuration(outageMs)}, ${partitioned} partitioned throughout, ${formatDuration(durationMs)}; minMembers ${minMembers}, memberFailureRate ${memberFailureRate}; seed ${seed}`,
    '',
    table(
      ['', 'sharedCircuitBreaker', `${processes} local circuitBreakers`],
      COUNTS.map(([key, label]) => [label, cell(key, r.shared[key]), cell(key, r.local[key])]),
    ),
  ].join('\n');
  // JSON has no Infinity: "never" is null.
  const finite = (c: Record<string, number>) =>
    Object.fromEntries(Object.entries(c).map(([k, v]) => [k, Number.isFinite(v) ? v : null]));
  const doc = {
    model: 'fleet-breaker',
    ...options,
    calls: r.calls,
    shared: finite({ ...r.shared }),
    local: finite({ ...r.local }),
  };
  return {
    doc,
    text: `${text}\n`,
    chart: fleetBreakerChart(processes, r.shared.reachedAfterOpen, r.local.reachedAfterOpen),
  };
}

/** Requests that reached the dead service after the breakers opened: one shared breaker against one per process. */
function fleetBreakerChart(processes: number, shared: number, local: number): ChartSpec {
  return document(
    'Requests reaching a dead service after the breakers opened',
    `${processes} processes; one breaker for the fleet against one per process`,
    {
      width: WIDTH,
      height: HEIGHT,
      data: {
        values: [
          { breaker: 'sharedCircuitBreaker', requests: shared },
          { breaker: 'local circuitBreakers', requests: local },
        ],
      },
      mark: 'bar',
      encoding: {
        x: { field: 'breaker', type: 'nominal', title: null, sort: null, axis: { labelAngle: 0 } },
        y: { field: 'requests', type: 'quantitative', title: 'requests after opening' },
        color: {
          field: 'breaker',
          type: 'nominal',
          legend: null,
          scale: { range: ['#4c78a8', '#e45756'] },
        },
      },
    },
  );
}
