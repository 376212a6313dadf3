import { equalJitter, exponential } from 'ebb';
import {
  aimd,
  bdp,
  circuitBreaker,
  concurrencyLimit,
  gradient2,
  hedgeBudget,
  hedging,
  type LimitAlgorithm,
  vegas,
} from 'ebb/resilience';
import { type SimEnvironment, simulateBreakerOutage, simulateBrownout, simulateSlowTail } from 'ebb/sim';
import { brownoutChart, outageChart, slowTailChart } from './charts.js';
import { formatDuration, parseDuration, parseNumber, positiveDuration } from './duration.js';
import { type OutputFlags, parseCount, planned, type SimulateIO, type Simulation, seedOf } from './simulate-common.js';
import type { RunPlan } from './simulate-cost.js';
import { table } from './table.js';
import { UsageError } from './usage-error.js';

// The resilience scenarios, each "no mechanism" beside the mechanism, on the simulators of
// ebb/sim (the real breaker, limit and hedging on a virtual clock).

const ms = (x: number | null): string => (x === null ? '—' : `${x.toFixed(1)} ms`);
const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;
const share = (flag: string, text: string): number => {
  const x = parseNumber(flag, text);
  if (!(x >= 0 && x <= 1)) throw new UsageError(`${flag} expects a share from 0 to 1, got "${text}"`);
  return x;
};

// ---------------------------------------------------------------------------------------------
// outage

/** Flags of `ebb simulate outage`. */
export interface OutageFlags extends OutputFlags {
  readonly workers?: string;
  readonly think?: string;
  readonly outage?: string;
  readonly outageStart?: string;
  readonly duration?: string;
  readonly failures?: string;
  readonly open?: string;
  readonly openMax?: string;
  readonly bin?: string;
}

/** `ebb simulate outage`: workers through an outage, without and with a circuit breaker. */
export async function outageModel(flags: OutageFlags, io: SimulateIO): Promise<Simulation> {
  const seed = seedOf(flags);
  const options = {
    workers: flags.workers === undefined ? 10 : parseCount('--workers', flags.workers),
    thinkMs: flags.think === undefined ? 20 : parseDuration('--think', flags.think),
    outageMs: flags.outage === undefined ? 30_000 : parseDuration('--outage', flags.outage),
    outageStartMs: flags.outageStart === undefined ? 5_000 : parseDuration('--outage-start', flags.outageStart),
    durationMs: flags.duration === undefined ? 60_000 : parseDuration('--duration', flags.duration),
    binMs: flags.bin === undefined ? 1_000 : parseDuration('--bin', flags.bin),
    seed,
  };
  const failures = flags.failures === undefined ? 5 : parseCount('--failures', flags.failures);
  const openMs = flags.open === undefined ? 1_000 : parseDuration('--open', flags.open);
  const openMaxMs = flags.openMax === undefined ? 8_000 : parseDuration('--open-max', flags.openMax);
  if (openMaxMs < openMs) throw new UsageError(`--open-max (${flags.openMax}) must be at least --open`);
  const openBackoff = exponential({
    initialDelayMs: openMs,
    maxDelayMs: openMaxMs,
    jitter: equalJitter,
    maxAttempts: Infinity,
  });
  const breaker = ({ clock, random }: SimEnvironment) =>
    circuitBreaker({ consecutiveFailures: failures, openBackoff, clock, random });
  // The workers call at a steady pace, so simulated time measures the work of each run.
  const calls = (options.workers * options.durationMs) / (options.thinkMs + 5);
  const plan: RunPlan = { model: 'outage', parts: [calls, calls], smaller: 'fewer --workers or a shorter --duration' };
  const results = await planned(io, plan, async (part) => {
    const none = await simulateBreakerOutage({ ...options, onProgress: part(0) });
    const guarded = await simulateBreakerOutage({ ...options, breaker, onProgress: part(1) });
    return [
      { subject: 'none', ...none },
      { subject: 'breaker', ...guarded },
    ];
  });
  const text = [
    `outage — ${options.workers} workers (a call through retry(), 2 attempts, then ${formatDuration(options.thinkMs)}), the service down from ${formatDuration(options.outageStartMs)} for ${formatDuration(options.outageMs)}; breaker: ${failures} failures, open ${formatDuration(openMs)} doubling to ${formatDuration(openMaxMs)} (equal jitter); seed ${seed}`,
    '',
    table(
      [
        'mechanism',
        'requests to the dead service',
        'open periods',
        'most sent in a period',
        'full traffic after recovery',
      ],
      results.map((r) => [
        r.subject,
        String(r.deadRequests),
        String(r.openPeriods.length),
        r.openPeriods.length === 0 ? '—' : String(Math.max(...r.openPeriods.map((p) => p.sent))),
        r.fullTrafficAfterMs === null
          ? 'never'
          : `${formatDuration(Math.round(r.fullTrafficAfterMs))}${r.openAtRecoveryMs === null ? '' : ` (${(r.fullTrafficAfterMs / r.openAtRecoveryMs).toFixed(2)} × the open period)`}`,
      ]),
    ),
    '',
    'a period: from an opening to the next opening or the closing (its probes); full traffic: the breaker closed (none: the first success)',
  ].join('\n');
  const doc = { model: 'outage', ...options, failures, openMs, openMaxMs, results };
  return { doc, text: `${text}\n`, chart: outageChart({ ...options, results }) };
}

// ---------------------------------------------------------------------------------------------
// brownout

const ALGORITHMS = ['aimd', 'vegas', 'gradient2', 'bdp'] as const;

/** Flags of `ebb simulate brownout`. */
export interface BrownoutFlags extends OutputFlags {
  readonly capacity?: string;
  readonly service?: string;
  readonly slowdown?: string;
  readonly load?: string;
  readonly duration?: string;
  readonly algorithms?: string;
  readonly initialLimit?: string;
  readonly maxLimit?: string;
  readonly maxQueue?: string;
  readonly maxWait?: string;
  readonly bin?: string;
}

/** The algorithm of each name, as `bench/figures/brownout.mjs` configures it; `maxLimit` caps any of them. */
export function algorithmFrom(
  name: string,
  serviceMs: number,
  initialLimit: number,
  maxLimit?: number,
): (env: SimEnvironment) => LimitAlgorithm {
  const cap = maxLimit === undefined ? {} : { maxLimit };
  if (name === 'aimd') return () => aimd({ initialLimit, minLimit: 1, slowCallMs: 3 * serviceMs, ...cap });
  if (name === 'vegas') return ({ random }) => vegas({ initialLimit, random, ...cap });
  if (name === 'gradient2') return () => gradient2({ initialLimit, minLimit: 1, maxLimit: 100, ...cap });
  if (name === 'bdp') return () => bdp({ initialLimit, ...cap });
  throw new UsageError(`unknown algorithm "${name}"; algorithms: ${ALGORITHMS.join(', ')}`);
}

/** `ebb simulate brownout`: a thrashing server at 1.5 × capacity, without and with a concurrency limit. */
export async function brownoutModel(flags: BrownoutFlags, io: SimulateIO): Promise<Simulation> {
  const seed = seedOf(flags);
  const serviceMs = flags.service === undefined ? 100 : positiveDuration('--service', flags.service, '100ms');
  const base = {
    capacity: flags.capacity === undefined ? 8 : parseCount('--capacity', flags.capacity),
    serviceMs,
    slowdown: flags.slowdown === undefined ? 10 : parseNumber('--slowdown', flags.slowdown),
    durationMs: flags.duration === undefined ? 60_000 : parseDuration('--duration', flags.duration),
    binMs: flags.bin === undefined ? 1_000 : parseDuration('--bin', flags.bin),
    seed,
  };
  const load = flags.load === undefined ? 1.5 : parseNumber('--load', flags.load);
  const initialLimit = flags.initialLimit === undefined ? 4 : parseCount('--initial-limit', flags.initialLimit);
  const maxLimit = flags.maxLimit === undefined ? undefined : parseCount('--max-limit', flags.maxLimit);
  if (maxLimit !== undefined && maxLimit < initialLimit) {
    throw new UsageError(`--max-limit (${maxLimit}) must be at least --initial-limit (${initialLimit})`);
  }
  const maxQueue = flags.maxQueue === undefined ? 16 : parseCount('--max-queue', flags.maxQueue, 0);
  const maxWaitMs = flags.maxWait === undefined ? 2 * serviceMs : parseDuration('--max-wait', flags.maxWait);
  const names = (flags.algorithms ?? ALGORITHMS.join(',')).split(',').map((s) => s.trim());
  const algorithms = names.map((n) => [n, algorithmFrom(n, serviceMs, initialLimit, maxLimit)] as const);
  const subjects = [
    { subject: 'unloaded', load: 0.5 },
    { subject: 'none', load },
    ...algorithms.map(([subject, algorithm]) => ({
      subject,
      load,
      limit: (env: SimEnvironment) =>
        concurrencyLimit({ algorithm: algorithm(env), maxQueue, maxWaitMs, clock: env.clock }),
    })),
  ];
  // Calls arrive at a steady rate (open loop), so simulated time measures the work of each run.
  const plan: RunPlan = {
    model: 'brownout',
    parts: subjects.map((s) => ((s.load * base.capacity) / serviceMs) * base.durationMs),
    smaller: 'a shorter --duration or less --load',
  };
  const results = await planned(io, plan, async (part) => {
    const out = [];
    for (const [i, { subject, ...rest }] of subjects.entries()) {
      const r = await simulateBrownout({ ...base, ...rest, onProgress: part(i) });
      out.push({ subject, ...r });
    }
    return out;
  });
  const unloadedP99 = results[0]?.p99Ms ?? null;
  const text = [
    `brownout — a server of ${base.capacity} at a time × ${formatDuration(serviceMs)} (${results[0]?.capacityPerSecond}/s), ${base.slowdown}× slower once more than ${base.capacity} wait; open-loop load ${load} × capacity for ${formatDuration(base.durationMs)}; attempt timeout ${formatDuration(20 * serviceMs)}; limit queue ${maxQueue}, wait ≤ ${formatDuration(maxWaitMs)}${maxLimit === undefined ? '' : `, max limit ${maxLimit}`}; seed ${seed}`,
    '',
    table(
      [
        'mechanism',
        'offered',
        'goodput',
        'p50',
        'p99',
        'p99 ÷ unloaded',
        'refused',
        'timed out',
        'most in server',
        'final limit',
      ],
      results.map((r) => [
        r.subject,
        `${r.offeredPerSecond}/s`,
        pct(r.goodput),
        ms(r.p50Ms),
        ms(r.p99Ms),
        unloadedP99 === null || r.p99Ms === null ? '—' : `${(r.p99Ms / unloadedP99).toFixed(2)}×`,
        String(r.refused),
        String(r.failed),
        String(r.peakInServer),
        r.finalLimit === null ? '—' : String(r.finalLimit),
      ]),
    ),
    '',
    'goodput: successes per second ÷ capacity; latency: successful calls, end to end (the limit’s queue included)',
  ].join('\n');
  const doc = {
    model: 'brownout',
    ...base,
    load,
    initialLimit,
    maxLimit: maxLimit ?? null,
    maxQueue,
    maxWaitMs,
    results,
  };
  return { doc, text: `${text}\n`, chart: brownoutChart({ ...base, load, results }) };
}

// ---------------------------------------------------------------------------------------------
// slow tail

/** Flags of `ebb simulate slow-tail`. */
export interface SlowTailFlags extends OutputFlags {
  readonly workers?: string;
  readonly service?: string;
  readonly spread?: string;
  readonly slowShare?: string;
  readonly slowFactor?: string;
  readonly duration?: string;
  readonly delay?: string;
  readonly percentile?: string;
  readonly budget?: string;
}

/** `ebb simulate slow-tail`: a 5 % slow tail without and with hedging, and an all-slow overload. */
export async function slowTailModel(flags: SlowTailFlags, io: SimulateIO): Promise<Simulation> {
  const seed = seedOf(flags);
  const base = {
    workers: flags.workers === undefined ? 8 : parseCount('--workers', flags.workers),
    serviceMs: flags.service === undefined ? 10 : positiveDuration('--service', flags.service, '10ms'),
    serviceSigma: flags.spread === undefined ? 0 : parseNumber('--spread', flags.spread),
    slowShare: flags.slowShare === undefined ? 0.05 : share('--slow-share', flags.slowShare),
    slowFactor: flags.slowFactor === undefined ? 20 : parseNumber('--slow-factor', flags.slowFactor),
    durationMs: flags.duration === undefined ? 60_000 : parseDuration('--duration', flags.duration),
    seed,
  };
  const delayMs = flags.delay === undefined ? undefined : parseDuration('--delay', flags.delay);
  const percentile = flags.percentile === undefined ? 0.95 : share('--percentile', flags.percentile);
  const budgetShare = flags.budget === undefined ? 0.05 : share('--budget', flags.budget);
  const hedger = ({ clock }: SimEnvironment) =>
    hedging({
      clock,
      ...(delayMs === undefined ? { percentile } : { delayMs }),
      budget: hedgeBudget({ clock, percent: budgetShare }),
    });
  const how = `${delayMs === undefined ? `learned p${+(percentile * 100).toFixed(1)}` : formatDuration(delayMs)}, budget ${pct(budgetShare)}`;
  const subjects = [
    { subject: 'none' },
    { subject: `hedged (${how})`, hedging: hedger },
    { subject: 'overload (all slow), hedged', hedging: hedger, slowShare: 1 },
  ];
  // The workers call at a steady pace, so simulated time measures the work of each run.
  const calls = (base.workers * base.durationMs) / base.serviceMs;
  const plan: RunPlan = {
    model: 'slow-tail',
    parts: subjects.map(() => calls),
    smaller: 'fewer --workers or a shorter --duration',
  };
  const results = await planned(io, plan, async (part) => {
    const out = [];
    for (const [i, { subject, ...rest }] of subjects.entries()) {
      const r = await simulateSlowTail({ ...base, ...rest, onProgress: part(i) });
      out.push({ subject, ...r });
    }
    return out;
  });
  const text = [
    `slow tail — ${base.workers} workers, ${pct(base.slowShare)} of responses ${base.slowFactor}× slower than ${formatDuration(base.serviceMs)}${base.serviceSigma === 0 ? '' : ` (log-normal, σ ${base.serviceSigma}, each slow one ${base.slowFactor}× its own draw)`}, network |N(1, 0.2)| ms each way, ${formatDuration(base.durationMs)}; seed ${seed}`,
    '',
    table(
      ['mechanism', 'calls', 'p50', 'p95', 'p99', 'p99 ÷ p95', 'extra requests', 'losers cancelled', 'hedge delay'],
      results.map((r) => [
        r.subject,
        String(r.calls),
        ms(r.p50Ms),
        ms(r.p95Ms),
        ms(r.p99Ms),
        r.p99Ms === null || r.p95Ms === null ? '—' : `${(r.p99Ms / r.p95Ms).toFixed(2)}×`,
        pct(r.extraRequests),
        String(r.cancelled),
        ms(r.hedgeDelayMs),
      ]),
    ),
  ].join('\n');
  // The JSON keeps the percentiles, not every latency.
  const doc = {
    model: 'slow-tail',
    ...base,
    delayMs: delayMs ?? null,
    percentile: delayMs === undefined ? percentile : null,
    budget: budgetShare,
    results: results.map(({ latenciesMs: _, ...r }) => r),
  };
  return { doc, text: `${text}\n`, chart: slowTailChart({ ...base, results }) };
}
