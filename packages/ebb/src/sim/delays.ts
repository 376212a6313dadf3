import { Backoff } from '../backoff/backoff.js';
import { describePolicy } from '../backoff/describe.js';
import { seeded } from '../core/random.js';
import { checkKeys, count, mistyped, optionsObject } from '../core/validate.js';
import { atMost, SIM_LIMITS } from './limits.js';

/** Options of {@link delayDistribution}. */
export interface DelayDistributionOptions {
  /** Runs to sample (each a fresh `start()`). Default 10,000. */
  readonly runs?: number;
  /** Rows (waits after failed attempts 1, 2, …) per run. Default 10; fewer where the policy stops. */
  readonly rows?: number;
  /** Seed of the `seeded()` generator. Default 1. */
  readonly seed?: number;
}

/** One row of {@link delayDistribution}: the sampled waits after one failed attempt, and the exact values. ms. */
export interface DelayDistributionRow {
  readonly attempt: number;
  /** Runs that reached this row. */
  readonly samples: number;
  readonly p05Ms: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly sampledMeanMs: number;
  readonly sampledMinMs: number;
  readonly sampledMaxMs: number;
  /** From `describePolicy()`: the exact mean, min and max. */
  readonly meanMs: number;
  readonly minMs: number;
  readonly maxMs: number;
}

/**
 * The distribution of a policy's waits, sampled from `runs` runs of its real code and set
 * beside the exact mean and bounds from `describePolicy()`: per row, the 5th, 50th and 95th
 * percentiles, the sampled mean, min and max. A sampled mean far from the exact one, or a
 * sample outside the bounds, would be a bug; the tests check both.
 *
 * @example
 * delayDistribution(presets.googleHttpClient, { runs: 10_000, rows: 9 })[0] // p05 ≈ 275, mean ≈ 500
 */
export function delayDistribution(backoff: Backoff, options?: DelayDistributionOptions): DelayDistributionRow[] {
  const where = 'delayDistribution()';
  if (!(backoff instanceof Backoff)) mistyped(where, 'backoff', backoff, 'a Backoff value', 'Take one from presets.');
  const o = optionsObject(where, options) as DelayDistributionOptions;
  checkKeys(where, o, ['runs', 'rows', 'seed']);
  const runs = atMost(
    where,
    'runs',
    count(where, 'runs', o.runs, 10_000, 1, false, 'Such as 10000.'),
    SIM_LIMITS.runs,
    'Such as 10000.',
  );
  const rows = count(where, 'rows', o.rows, 10, 1, false, 'Such as 10.');
  const seed = count(where, 'seed', o.seed, 1, 0, false, 'Any whole number; equal seeds give equal runs.');
  const exact = describePolicy(backoff, rows).rows;
  const samples = exact.map(() => new Float64Array(runs));
  const filled = new Int32Array(exact.length);
  const random = seeded(seed);
  for (let r = 0; r < runs; r++) {
    const run = backoff.start(random);
    for (let i = 0; i < exact.length; i++) {
      const d = run.next();
      if (d < 0) break;
      (samples[i] as Float64Array)[(filled[i] as number)++] = d;
    }
  }
  return exact.map((row, i) => {
    const n = filled[i] as number;
    const s = (samples[i] as Float64Array).subarray(0, n).sort();
    const at = (q: number): number => (n === 0 ? 0 : (s[Math.min(n - 1, Math.floor(q * n))] as number));
    let sum = 0;
    for (let j = 0; j < n; j++) sum += s[j] as number;
    return {
      attempt: row.attempt,
      samples: n,
      p05Ms: at(0.05),
      p50Ms: at(0.5),
      p95Ms: at(0.95),
      sampledMeanMs: n === 0 ? 0 : sum / n,
      sampledMinMs: n === 0 ? 0 : (s[0] as number),
      sampledMaxMs: n === 0 ? 0 : (s[n - 1] as number),
      meanMs: row.meanDelayMs,
      minMs: row.minDelayMs,
      maxMs: row.maxDelayMs,
    };
  });
}
