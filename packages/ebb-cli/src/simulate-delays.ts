// `ebb simulate delays`: the sampled distribution of a policy's waits against describePolicy().
import { delayDistribution } from 'ebb/sim';
import { delaysChart } from './charts.js';
import { formatDuration } from './duration.js';
import { type PolicyFlags, policyFromFlags } from './policy.js';
import { type OutputFlags, parseCount, planned, type SimulateIO, type Simulation, seedOf } from './simulate-common.js';
import type { RunPlan } from './simulate-cost.js';
import { table } from './table.js';

/** Flags of `ebb simulate delays`. */
export interface DelaysFlags extends OutputFlags, PolicyFlags {
  readonly runs?: string;
  readonly attempts?: string;
}

/** `ebb simulate delays`: the sampled distribution of a policy's waits against `describePolicy()`. */
export function delaysModel(flags: DelaysFlags, io?: SimulateIO): Simulation {
  const seed = seedOf(flags);
  const runs = flags.runs === undefined ? 10_000 : parseCount('--runs', flags.runs);
  const rows = flags.attempts === undefined ? 10 : parseCount('--attempts', flags.attempts);
  const { name, backoff } = policyFromFlags(flags);
  // delayDistribution reports no progress; a long draw is still announced.
  const plan: RunPlan = { model: 'delays', parts: [runs * rows], smaller: 'fewer --runs' };
  const draw = () => delayDistribution(backoff, { runs, rows, seed });
  const dist = io === undefined ? draw() : planned(io, plan, draw);
  const text = [
    `delays — ${name}: ${runs} sampled runs (seed ${seed}) against the exact schedule`,
    '',
    table(
      ['attempt', 'p5', 'median', 'p95', 'mean (sampled)', 'mean (exact)', 'min', 'max'],
      dist.map((r) => [
        String(r.attempt),
        formatDuration(r.p05Ms),
        formatDuration(r.p50Ms),
        formatDuration(r.p95Ms),
        formatDuration(r.sampledMeanMs),
        formatDuration(r.meanMs),
        formatDuration(r.minMs),
        formatDuration(r.maxMs),
      ]),
    ),
  ].join('\n');
  const doc = { model: 'delays', name, seed, runs, rows: dist };
  return { doc, text: `${text}\n`, chart: delaysChart({ name, runs, rows: dist }) };
}
