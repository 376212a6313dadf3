// `ebb simulate overload`: a fleet against a service that is down, then recovers, through the
// executor; with the rate controllers and retry budgets of ebb/rate.
import type { Backoff, RateController, RetryBudget } from 'ebb';
import { adaptiveRate, awsAdaptiveRate, awsRetryQuota, ratioBudget, tokenBudget } from 'ebb/rate';
import { estimateOverloadRequests, type OverloadOptions, type SimEnvironment, simulateOverload } from 'ebb/sim';
import { overloadChart } from './charts.js';
import { formatDuration, parseDuration, parseNumber } from './duration.js';
import {
  type OutputFlags,
  parseCount,
  pct,
  planned,
  type SimulateIO,
  type Simulation,
  seedOf,
} from './simulate-common.js';
import { strategiesFrom } from './simulate-contention.js';
import type { RunPlan } from './simulate-cost.js';
import { table } from './table.js';
import { UsageError } from './usage-error.js';

/** Flags of `ebb simulate overload`. */
export interface OverloadFlags extends OutputFlags {
  readonly clients?: string;
  readonly capacity?: string;
  readonly queue?: string;
  readonly outage?: string;
  readonly startWindow?: string;
  readonly retryAfter?: string;
  readonly strategies?: string;
  readonly base?: string;
  readonly cap?: string;
  readonly maxAttempts?: string;
  readonly attemptTimeout?: string;
  readonly budget?: string;
  readonly rate?: string;
  readonly horizon?: string;
  readonly bin?: string;
}

/** `--budget token[:MAX[:RATIO]]`, `ratio[:SHARE]` or `aws-quota`, as a factory per run. */
export function budgetFrom(text: string): (env: SimEnvironment) => RetryBudget {
  const [kind, a, b, ...rest] = text.split(':');
  if (rest.length === 0) {
    if (kind === 'token' && b === undefined) {
      const maxTokens = a === undefined ? undefined : parseCount('--budget token:MAX', a);
      return () => tokenBudget(maxTokens === undefined ? {} : { maxTokens });
    }
    if (kind === 'token') {
      const maxTokens = parseCount('--budget token:MAX', a as string);
      const tokenRatio = parseNumber('--budget token:MAX:RATIO', b as string);
      return () => tokenBudget({ maxTokens, tokenRatio });
    }
    if (kind === 'ratio' && b === undefined) {
      const percentCanRetry = a === undefined ? undefined : parseNumber('--budget ratio:SHARE', a);
      return ({ clock }) => ratioBudget(percentCanRetry === undefined ? { clock } : { clock, percentCanRetry });
    }
    if (kind === 'aws-quota' && a === undefined) return () => awsRetryQuota();
  }
  throw new UsageError(`--budget expects token[:MAX[:RATIO]], ratio[:SHARE] or aws-quota, got "${text}"`);
}

/** `--rate adaptive` or `aws-adaptive`, as a factory per run. */
export function rateFrom(text: string): (env: SimEnvironment) => RateController {
  if (text === 'adaptive') return ({ clock, random }) => adaptiveRate({ clock, random });
  if (text === 'aws-adaptive') return ({ clock }) => awsAdaptiveRate({ clock });
  throw new UsageError(`--rate expects adaptive or aws-adaptive, got "${text}"`);
}

/** `ebb simulate overload`: a fleet against a recovering service, one run per strategy. */
export async function overloadModel(flags: OverloadFlags, io: SimulateIO): Promise<Simulation> {
  const seed = seedOf(flags);
  const baseMs = flags.base === undefined ? 100 : parseDuration('--base', flags.base);
  const capMs = flags.cap === undefined ? 10_000 : parseDuration('--cap', flags.cap);
  const maxAttempts = flags.maxAttempts === undefined ? undefined : parseCount('--max-attempts', flags.maxAttempts);
  const strategies = strategiesFrom(flags.strategies ?? 'exponential,full', baseMs, capMs, maxAttempts);
  const options: OverloadOptions = {
    clients: flags.clients === undefined ? 1_000 : parseCount('--clients', flags.clients),
    capacityPerSecond: flags.capacity === undefined ? 100 : parseNumber('--capacity', flags.capacity),
    queueLimit: flags.queue === undefined ? 100 : parseCount('--queue', flags.queue, 0),
    outageMs: flags.outage === undefined ? 10_000 : parseDuration('--outage', flags.outage),
    startWindowMs: flags.startWindow === undefined ? 1_000 : parseDuration('--start-window', flags.startWindow),
    horizonMs: flags.horizon === undefined ? 600_000 : parseDuration('--horizon', flags.horizon),
    binMs: flags.bin === undefined ? 1_000 : parseDuration('--bin', flags.bin),
    seed,
    ...(flags.retryAfter === undefined ? {} : { retryAfterMs: parseDuration('--retry-after', flags.retryAfter) }),
    ...(flags.attemptTimeout === undefined
      ? {}
      : { attemptTimeoutMs: parseDuration('--attempt-timeout', flags.attemptTimeout) }),
    ...(flags.budget === undefined ? {} : { budget: budgetFrom(flags.budget) }),
    ...(flags.rate === undefined ? {} : { rate: rateFrom(flags.rate) }),
  };
  const names = Object.keys(strategies);
  const plan: RunPlan = {
    model: 'overload',
    parts: names.map((name) => estimateOverloadRequests({ ...options, backoff: strategies[name] as Backoff })),
    names,
    smaller: 'fewer --clients',
  };
  const results = await planned(io, plan, async (part) => {
    const out = [];
    for (const [i, name] of names.entries()) {
      const r = await simulateOverload({ ...options, backoff: strategies[name] as Backoff, onProgress: part(i) });
      out.push({ strategy: name, ...r });
    }
    return out;
  });
  const clients = options.clients as number;
  const capacity = options.capacityPerSecond as number;
  const outageMs = options.outageMs as number;
  const text = [
    `overload — ${clients} clients, a server down for ${formatDuration(outageMs)} then serving ${capacity}/s with a queue of ${options.queueLimit}; base ${formatDuration(baseMs)}, cap ${formatDuration(capMs)}${flags.budget ? `, budget ${flags.budget}` : ''}${flags.rate ? `, rate ${flags.rate}` : ''}, seed ${seed}`,
    '',
    table(
      ['strategy', 'amplification', 'peak after recovery', 'all served at', 'gave up', 'unfinished'],
      results.map((r) => [
        r.strategy,
        `${r.amplification.toFixed(2)}×`,
        `${r.peakOfferedPerSecondAfterRecovery}/s`,
        r.allServedAtMs === null ? '—' : formatDuration(r.allServedAtMs),
        pct(r.gaveUpShare, 1),
        String(r.unfinished),
      ]),
    ),
    '',
    'amplification: requests sent ÷ requests needed; peak: the busiest second after the outage',
  ].join('\n');
  const doc = { model: 'overload', seed, ...options, budget: flags.budget ?? null, rate: flags.rate ?? null, results };
  return {
    doc,
    text: `${text}\n`,
    chart: overloadChart({ clients, capacityPerSecond: capacity, outageMs, results }),
  };
}
