// `ebb simulate contention` (Brooker's experiment), and the strategy names it shares with
// `ebb simulate overload`.
import { type Backoff, findPreset, presetCatalog, withOptions } from 'ebb';
import { brookerStrategies, simulateContention } from 'ebb/sim';
import { contentionChart } from './charts.js';
import { formatDuration, parseDuration } from './duration.js';
import {
  fixed,
  type OutputFlags,
  parseCount,
  parseRange,
  planned,
  type SimulateIO,
  type Simulation,
  seedOf,
} from './simulate-common.js';
import { contentionWrites, type RunPlan } from './simulate-cost.js';
import { table } from './table.js';
import { UsageError } from './usage-error.js';

/** Brooker's five strategies, by the names the flags take. */
export const BROOKER = ['none', 'exponential', 'full', 'equal', 'decorrelated'] as const;

/** Policies by name: Brooker's five (from `base` and `cap`) and any preset id. */
export function strategiesFrom(
  text: string,
  baseMs: number,
  capMs: number,
  maxAttempts?: number,
): Record<string, Backoff> {
  // Brooker's curves wait base × 2^attempt from attempt 1: a cap below twice --base caps every wait.
  if (baseMs > 0 && capMs < 2 * baseMs) {
    throw new UsageError(
      `--cap (${formatDuration(capMs)}) is below the first wait (${formatDuration(2 * baseMs)}, twice --base), so every wait would be ${formatDuration(capMs)}. Raise --cap, or lower --base.`,
    );
  }
  const brooker = brookerStrategies({ baseMs, capMs });
  const out: Record<string, Backoff> = {};
  for (const name of text.split(',').map((s) => s.trim())) {
    let b: Backoff;
    if ((BROOKER as readonly string[]).includes(name)) b = brooker[name as (typeof BROOKER)[number]];
    else {
      const preset = findPreset(name);
      if (!preset) {
        throw new UsageError(
          `unknown strategy "${name}"; strategies: ${BROOKER.join(', ')}, or a preset: ${presetCatalog.map((p) => p.id).join(', ')}`,
        );
      }
      b = preset.backoff;
    }
    out[name] = maxAttempts === undefined ? b : withOptions(b, { maxAttempts });
  }
  return out;
}

/** Flags of `ebb simulate contention`. */
export interface ContentionFlags extends OutputFlags {
  readonly clients?: string;
  readonly sweepClients?: string;
  readonly runs?: string;
  readonly strategies?: string;
  readonly base?: string;
  readonly cap?: string;
}

/** `ebb simulate contention`: Brooker's experiment. */
export function contentionModel(flags: ContentionFlags, io: SimulateIO): Simulation {
  const seed = seedOf(flags);
  const runs = flags.runs === undefined ? 100 : parseCount('--runs', flags.runs);
  const baseMs = flags.base === undefined ? 5 : parseDuration('--base', flags.base);
  const capMs = flags.cap === undefined ? 2_000 : parseDuration('--cap', flags.cap);
  const strategies = strategiesFrom(flags.strategies ?? BROOKER.join(','), baseMs, capMs);
  if (flags.sweepClients !== undefined && flags.clients !== undefined) {
    throw new UsageError('--clients and --sweep-clients cannot be combined');
  }
  const list =
    flags.sweepClients !== undefined
      ? parseRange('--sweep-clients', flags.sweepClients)
      : [flags.clients === undefined ? 50 : parseCount('--clients', flags.clients)];
  // One call per strategy (each strategy's runs draw from their own seeded generator, so the
  // figures are those of one call with all of them), each weighted by its estimated writes.
  const names = Object.keys(strategies);
  const plan: RunPlan = {
    model: 'contention',
    parts: list.flatMap((clients) =>
      names.map((name) => runs * contentionWrites(clients, strategies[name] as Backoff)),
    ),
    names: list.flatMap((clients) => names.map((name) => `${name} at ${clients} clients`)),
    smaller: 'fewer --clients or --runs',
  };
  const points = planned(io, plan, (part) =>
    list.map((clients, i) => ({
      clients,
      results: names.flatMap((name, j) =>
        simulateContention({
          clients,
          runs,
          strategies: { [name]: strategies[name] as Backoff },
          seed,
          onProgress: part(i * names.length + j),
        }),
      ),
    })),
  );
  const text = [
    `contention — Brooker's experiment: each client makes one optimistic-concurrency write; base ${formatDuration(baseMs)}, cap ${formatDuration(capMs)}, network |N(10, 2)| ms, mean of ${runs} runs, seed ${seed}`,
    '',
    table(
      ['clients', 'strategy', 'calls', 'time', 'gave up'],
      points.flatMap((p) =>
        p.results.map((r) => [
          String(p.clients),
          r.strategy,
          fixed(r.calls),
          formatDuration(r.timeMs),
          fixed(r.gaveUp),
        ]),
      ),
    ),
    '',
    'calls: writes sent (the work); time: until the last client is done',
  ].join('\n');
  const doc = { model: 'contention', seed, runs, baseMs, capMs, points };
  return { doc, text: `${text}\n`, chart: contentionChart({ points, runs }) };
}
