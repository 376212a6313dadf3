import { writeFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { type Backoff, findPreset, presetCatalog, type RateController, type RetryBudget } from 'ebb';
import { adaptiveRate, awsAdaptiveRate, awsRetryQuota, ratioBudget, tokenBudget } from 'ebb/rate';
import {
  bianchi,
  brookerStrategies,
  delayDistribution,
  ethernetCeilingSweep,
  type OverloadOptions,
  type ProgressCallback,
  type SimEnvironment,
  simulateContention,
  simulateEthernet,
  simulateOverload,
  simulateWifi,
} from 'ebb/sim';
import {
  backoffChart,
  type ChartSpec,
  ceilingChart,
  contentionChart,
  delaysChart,
  overloadChart,
  stationsChart,
  wifiChart,
} from './charts.js';
import { renderPng, renderSvg } from './charts-render.js';
import { formatDuration, parseDuration, parseNumber } from './duration.js';
import { type PolicyFlags, policyFromFlags } from './policy.js';
import { type ProgressStream, progressBar } from './simulate-progress.js';
import {
  type BrownoutFlags,
  brownoutModel,
  type OutageFlags,
  outageModel,
  type SlowTailFlags,
  slowTailModel,
} from './simulate-resilience.js';
import { table } from './table.js';
import { UsageError } from './usage-error.js';

/** Flags every `ebb simulate` model takes. */
export interface OutputFlags {
  readonly json?: boolean;
  readonly svg?: string;
  readonly png?: string;
  readonly seed?: string;
}

/** What a model computed: the JSON document, the text report and the chart. */
export interface Simulation {
  readonly doc: Record<string, unknown>;
  readonly text: string;
  readonly chart: ChartSpec;
}

/** Where `ebb simulate` writes: stdout text, and stderr for the progress bar. */
export interface SimulateIO {
  readonly out: (text: string) => void;
  readonly progress: ProgressStream;
}

const BROOKER = ['none', 'exponential', 'full', 'equal', 'decorrelated'] as const;

/** A whole number from a flag, at least `min` (`1e6` accepted). */
export function parseCount(flag: string, text: string, min = 1): number {
  const n = parseNumber(flag, text);
  if (!Number.isSafeInteger(n) || n < min)
    throw new UsageError(`${flag} expects a whole number >= ${min}, got "${text}"`);
  return n;
}

/** A list of whole numbers: `5`, `5,10,20`, `1..16` or `10..50:10`. */
export function parseRange(flag: string, text: string, min = 1): number[] {
  const m = /^(\d+)\.\.(\d+)(?::(\d+))?$/.exec(text.trim());
  let values: number[];
  if (m) {
    const [from, to, step] = [Number(m[1]), Number(m[2]), Number(m[3] ?? 1)];
    if (step < 1 || to < from || (to - from) / step > 1_000) {
      throw new UsageError(
        `${flag} expects FROM..TO[:STEP] with FROM <= TO, STEP >= 1, at most 1000 values; got "${text}"`,
      );
    }
    values = [];
    for (let v = from; v <= to; v += step) values.push(v);
  } else values = text.split(',').map((part) => parseCount(flag, part, min));
  for (const v of values) if (v < min) throw new UsageError(`${flag} expects values >= ${min}, got "${text}"`);
  return values;
}

/** The `--seed` flag: a whole number >= 0, default 1. */
export function seedOf(flags: OutputFlags): number {
  if (flags.seed === undefined) return 1;
  const seed = parseNumber('--seed', flags.seed);
  if (!Number.isSafeInteger(seed) || seed < 0)
    throw new UsageError(`--seed expects a whole number >= 0, got "${flags.seed}"`);
  return seed;
}

const pct = (x: number, digits = 2): string => `${(x * 100).toFixed(digits)} %`;
const fixed = (x: number, digits = 1): string => x.toFixed(digits);

/** Runs a model's simulation and prints it: a table, or `--json`; writes `--svg` and `--png`. */
async function emit(io: SimulateIO, flags: OutputFlags, run: () => Promise<Simulation> | Simulation): Promise<void> {
  const sim = await run();
  if (flags.svg !== undefined || flags.png !== undefined) {
    const svg = await renderSvg(sim.chart);
    if (flags.svg !== undefined) writeFileSync(flags.svg, svg);
    if (flags.png !== undefined) writeFileSync(flags.png, await renderPng(svg));
  }
  io.out(flags.json ? `${JSON.stringify(sim.doc, null, 2)}\n` : sim.text);
}

function withProgress<T>(io: SimulateIO, label: string, work: (onProgress: ProgressCallback) => T): T {
  const bar = progressBar(io.progress, label);
  try {
    return work((done, total) => bar.update(done, total));
  } finally {
    bar.finish();
  }
}

/** Runs `work` with a progress bar on stderr (when it is a terminal). */
export async function withProgressAsync<T>(
  io: SimulateIO,
  label: string,
  work: (onProgress: ProgressCallback) => Promise<T>,
): Promise<T> {
  const bar = progressBar(io.progress, label);
  try {
    return await work((done, total) => bar.update(done, total));
  } finally {
    bar.finish();
  }
}

// ---------------------------------------------------------------------------------------------
// ethernet

/** Flags of `ebb simulate ethernet`. */
export interface EthernetFlags extends OutputFlags {
  readonly stations?: string;
  readonly ceiling?: string;
  readonly attemptLimit?: string;
  readonly frameSlots?: string;
  readonly think?: string;
  readonly slots?: string;
  readonly sweepCeiling?: string;
  readonly sweepStations?: string;
}

const load = (thinkSlots: number): string =>
  thinkSlots === 0 ? 'saturated' : `${thinkSlots} idle slots between frames on average`;

/** `ebb simulate ethernet`: one run, a ceiling sweep or a stations sweep. */
export function ethernetModel(flags: EthernetFlags, io: SimulateIO): Simulation {
  const seed = seedOf(flags);
  // The ceiling sweep idles each station between frames by default: in saturation the capture
  // effect (the winner keeps the channel) hides the latency side of the trade-off.
  const thinkSlots =
    flags.think === undefined ? (flags.sweepCeiling === undefined ? 0 : 32) : parseNumber('--think', flags.think);
  const base = {
    stations: flags.stations === undefined ? 32 : parseCount('--stations', flags.stations),
    frameSlots: flags.frameSlots === undefined ? 1 : parseCount('--frame-slots', flags.frameSlots),
    thinkSlots,
    slots: flags.slots === undefined ? 1_000_000 : parseCount('--slots', flags.slots),
    seed,
  };
  const ceiling = flags.ceiling === undefined ? 10 : parseCount('--ceiling', flags.ceiling);
  const maxAttempts = flags.attemptLimit === undefined ? 16 : parseCount('--attempt-limit', flags.attemptLimit);
  if (flags.sweepCeiling !== undefined && flags.sweepStations !== undefined) {
    throw new UsageError('--sweep-ceiling and --sweep-stations cannot be combined');
  }
  if (flags.sweepCeiling !== undefined) {
    if (flags.ceiling !== undefined) throw new UsageError('--ceiling and --sweep-ceiling cannot be combined');
    const ceilings = parseRange('--sweep-ceiling', flags.sweepCeiling);
    const points = withProgress(io, 'ethernet', (onProgress) =>
      ethernetCeilingSweep({ ...base, maxAttempts, onProgress }, ceilings),
    );
    const doc = {
      model: 'ethernet',
      sweep: 'ceiling',
      seed,
      stations: base.stations,
      thinkSlots,
      slots: base.slots,
      points,
    };
    const text = [
      `ethernet — ${base.stations} stations, ${load(thinkSlots)}, ${base.slots} slots, attempt limit ${maxAttempts}, seed ${seed}: the ceiling sweep`,
      '',
      table(
        ['ceiling', 'collisions', 'throughput', 'mean latency', 'std dev', 'p99', 'max', 'dropped'],
        points.map((p) => [
          String(p.ceiling),
          pct(p.collisionProbability),
          pct(p.throughput),
          fixed(p.meanLatencySlots),
          fixed(p.latencyStdDevSlots),
          fixed(p.p99LatencySlots, 0),
          String(p.maxLatencySlots),
          String(p.framesDropped),
        ]),
      ),
      '',
      'latency in slots (51.2 µs at 10 Mb/s); collisions: share of transmissions that collided',
    ].join('\n');
    return { doc, text: `${text}\n`, chart: ceilingChart({ stations: base.stations, thinkSlots, points }) };
  }
  if (flags.sweepStations !== undefined) {
    const list = parseRange('--sweep-stations', flags.sweepStations);
    const points = withProgress(io, 'ethernet', (onProgress) =>
      list.map((stations, i) =>
        simulateEthernet({
          ...base,
          stations,
          ceiling,
          maxAttempts,
          onProgress: (done, total) => onProgress(i * total + done, list.length * total),
        }),
      ),
    );
    const doc = { model: 'ethernet', sweep: 'stations', seed, ceiling, maxAttempts, slots: base.slots, points };
    const text = [
      `ethernet — ${load(thinkSlots)}, ${base.slots} slots, ceiling ${ceiling}, attempt limit ${maxAttempts}, seed ${seed}: stations sweep`,
      '',
      table(
        ['stations', 'collisions', 'throughput', 'mean latency', 'p99', 'dropped'],
        points.map((p) => [
          String(p.stations),
          pct(p.collisionProbability),
          pct(p.throughput),
          fixed(p.meanLatencySlots),
          fixed(p.p99LatencySlots, 0),
          String(p.framesDropped),
        ]),
      ),
    ].join('\n');
    return { doc, text: `${text}\n`, chart: stationsChart({ model: 'ethernet', points }) };
  }
  const r = withProgress(io, 'ethernet', (onProgress) =>
    simulateEthernet({ ...base, ceiling, maxAttempts, onProgress }),
  );
  const doc = { model: 'ethernet', seed, ...r };
  const text = [
    `ethernet — ${r.stations} stations, ${load(thinkSlots)}, ${r.slots} slots, ceiling ${ceiling}, attempt limit ${maxAttempts}, seed ${seed}`,
    '',
    `throughput             ${pct(r.throughput)} of slots carry a delivered frame`,
    `collision probability  ${pct(r.collisionProbability)} of transmissions collide`,
    `latency (slots)        mean ${fixed(r.meanLatencySlots)}, p99 ${fixed(r.p99LatencySlots, 0)}, max ${r.maxLatencySlots}`,
    `frames                 ${r.successes} delivered, ${r.framesDropped} dropped after ${maxAttempts} attempts`,
    '',
    'mean backoff after c collisions (slots), against E(c) = (2^min(c, ceiling) − 1)/2:',
    '',
    table(
      ['c', 'draws', 'measured', 'E(c)', 'error'],
      r.backoffByCollisions.map((b) => [
        String(b.collisions),
        String(b.samples),
        fixed(b.meanSlots, 2),
        fixed(b.expectedSlots, 2),
        b.expectedSlots === 0 ? '—' : pct(b.meanSlots / b.expectedSlots - 1, 1),
      ]),
    ),
  ].join('\n');
  return { doc, text: `${text}\n`, chart: backoffChart(r) };
}

// ---------------------------------------------------------------------------------------------
// wifi

/** Flags of `ebb simulate wifi`. */
export interface WifiFlags extends OutputFlags {
  readonly stations?: string;
  readonly cwMin?: string;
  readonly stages?: string;
  readonly retryLimit?: string;
  readonly slots?: string;
  readonly sweepStations?: string;
}

/** `ebb simulate wifi`: the simulation beside Bianchi's model, for one n or a sweep. */
export function wifiModel(flags: WifiFlags, io: SimulateIO): Simulation {
  const seed = seedOf(flags);
  const cwMin = flags.cwMin === undefined ? 31 : parseCount('--cw-min', flags.cwMin, 0);
  const stages = flags.stages === undefined ? 5 : parseCount('--stages', flags.stages, 0);
  const slots = flags.slots === undefined ? 1_000_000 : parseCount('--slots', flags.slots);
  const retryLimit = flags.retryLimit === undefined ? undefined : parseCount('--retry-limit', flags.retryLimit);
  const list =
    flags.sweepStations !== undefined
      ? parseRange('--sweep-stations', flags.sweepStations)
      : [flags.stations === undefined ? 10 : parseCount('--stations', flags.stations)];
  if (flags.sweepStations !== undefined && flags.stations !== undefined) {
    throw new UsageError('--stations and --sweep-stations cannot be combined');
  }
  const points = withProgress(io, 'wifi', (onProgress) =>
    list.map((stations, i) => ({
      ...simulateWifi({
        stations,
        cwMin,
        stages,
        slots,
        seed,
        ...(retryLimit === undefined ? {} : { retryLimit }),
        onProgress: (done, total) => onProgress(i * total + done, list.length * total),
      }),
      bianchi: bianchi({ stations, cwMin, stages }),
    })),
  );
  const head = `wifi — 802.11 DCF in saturation, CWmin ${cwMin}, m = ${stages}, ${slots} backoff slots, seed ${seed}; Bianchi's timing (FHSS, basic access)`;
  const rows = points.map((p) => [
    String(p.stations),
    p.transmitProbability.toFixed(5),
    p.bianchi.transmitProbability.toFixed(5),
    p.collisionProbability.toFixed(4),
    p.bianchi.collisionProbability.toFixed(4),
    pct(p.throughput, 1),
    pct(p.bianchi.throughput, 1),
    fixed(p.meanDelayMs),
    fixed(p.bianchi.meanDelayMs),
  ]);
  const text = [
    head,
    '',
    table(['stations', 'τ sim', 'τ Bianchi', 'p sim', 'p Bianchi', 'S sim', 'S Bianchi', 'delay ms', 'Bianchi'], rows),
    '',
    'τ: transmit probability per station per backoff slot; p: collision probability per transmission;',
    'S: share of channel time carrying payload; delay: head of queue to acknowledged, mean',
  ].join('\n');
  if (flags.sweepStations !== undefined) {
    const doc = { model: 'wifi', sweep: 'stations', seed, cwMin, stages, slots, points };
    return { doc, text: `${text}\n`, chart: stationsChart({ model: 'wifi', points }) };
  }
  const p = points[0] as (typeof points)[number];
  const doc = { model: 'wifi', seed, cwMin, stages, ...p };
  return { doc, text: `${text}\n`, chart: wifiChart({ ...p, cwMin, stages }) };
}

// ---------------------------------------------------------------------------------------------
// contention and overload strategies

/** Policies by name: Brooker's five (from `base` and `cap`) and any preset id. */
export function strategiesFrom(
  text: string,
  baseMs: number,
  capMs: number,
  maxAttempts?: number,
): Record<string, Backoff> {
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
    out[name] = maxAttempts === undefined ? b : b.withMaxAttempts(maxAttempts);
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
  const points = withProgress(io, 'contention', (onProgress) =>
    list.map((clients, i) => ({
      clients,
      results: simulateContention({
        clients,
        runs,
        strategies,
        seed,
        onProgress: (done, total) => onProgress(i * total + done, list.length * total),
      }),
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
  if (text === 'adaptive') return ({ clock }) => adaptiveRate({ clock });
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
  const results = await withProgressAsync(io, 'overload', async (onProgress) => {
    const out = [];
    for (const [i, name] of names.entries()) {
      const r = await simulateOverload({
        ...options,
        backoff: strategies[name] as Backoff,
        onProgress: (done, total) => onProgress(i * total + done, names.length * total),
      });
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

// ---------------------------------------------------------------------------------------------
// delays

/** Flags of `ebb simulate delays`. */
export interface DelaysFlags extends OutputFlags, PolicyFlags {
  readonly runs?: string;
  readonly attempts?: string;
}

/** `ebb simulate delays`: the sampled distribution of a policy's waits against `describe()`. */
export function delaysModel(flags: DelaysFlags): Simulation {
  const seed = seedOf(flags);
  const runs = flags.runs === undefined ? 10_000 : parseCount('--runs', flags.runs);
  const rows = flags.attempts === undefined ? 10 : parseCount('--attempts', flags.attempts);
  const { name, backoff } = policyFromFlags(flags);
  const dist = delayDistribution(backoff, { runs, rows, seed });
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

// ---------------------------------------------------------------------------------------------
// registration

function output(cmd: Command): Command {
  return cmd
    .option('--json', 'print one JSON document')
    .option('--svg <file>', 'write the chart as SVG')
    .option('--png <file>', 'write the chart as PNG')
    .option('--seed <n>', 'seed of the simulation (default 1)');
}

/** Adds `ebb simulate <model>` to the program. */
export function registerSimulate(root: Command, env: { readonly out: (text: string) => void }): void {
  const io: SimulateIO = { out: env.out, progress: process.stderr };
  const quiet = { writeOut: env.out, writeErr: () => {}, outputError: () => {} };
  const simulate = root
    .command('simulate')
    .description(
      'simulate backoff on a shared channel, among contending clients, or against an overloaded service; and the breaker, the concurrency limit and hedging',
    )
    .configureOutput(quiet)
    .exitOverride()
    .argument('[model]', 'ethernet, wifi, contention, overload, delays, outage, brownout or slow-tail')
    // Without a model, the list of models (as `--help` prints it), rather than an error.
    .action((model: string | undefined) => {
      if (model !== undefined) {
        throw new UsageError(
          `unknown model "${model}"; models: ethernet, wifi, contention, overload, delays, outage, brownout, slow-tail`,
        );
      }
      env.out(simulate.helpInformation());
    });
  const sub = (name: string, description: string): Command =>
    output(simulate.command(name).description(description)).configureOutput(quiet).exitOverride();

  sub('ethernet', 'slotted CSMA/CD with truncated binary exponential backoff (IEEE 802.3), in saturation')
    .option('--stations <n>', 'stations, each always with a frame (default 32)')
    .option('--ceiling <n>', 'collisions after which the window stops doubling (default 10)')
    .option('--attempt-limit <n>', 'transmissions of a frame before it is dropped (default 16)')
    .option('--frame-slots <n>', 'slots a frame occupies (default 1)')
    .option('--think <slots>', 'mean idle slots between frames (default 0: saturated; 32 with --sweep-ceiling)')
    .option('--slots <n>', 'slots to simulate (default 1e6)')
    .option('--sweep-ceiling <range>', 'one run per ceiling, e.g. 1..16')
    .option('--sweep-stations <range>', 'one run per station count, e.g. 2..64:2')
    .action((flags: EthernetFlags) => emit(io, flags, () => ethernetModel(flags, io)));

  sub('wifi', "802.11 DCF in saturation, beside Bianchi's analytic model")
    .option('--stations <n>', 'stations, each always with a frame (default 10)')
    .option('--cw-min <n>', 'CWmin: first window is CWmin+1 slots (default 31)')
    .option('--stages <n>', 'm: the window doubles m times (default 5)')
    .option('--retry-limit <n>', 'transmissions of a frame before it is dropped (default: none)')
    .option('--slots <n>', 'backoff slots to simulate (default 1e6)')
    .option('--sweep-stations <range>', 'one run per station count, e.g. 5..50:5')
    .action((flags: WifiFlags) => emit(io, flags, () => wifiModel(flags, io)));

  sub('contention', "Brooker's experiment: N clients, one optimistic-concurrency write each")
    .option('--clients <n>', 'clients (default 50)')
    .option('--sweep-clients <range>', 'one run per client count, e.g. 10..50:10')
    .option('--runs <n>', 'runs to average (default 100)')
    .option('--strategies <list>', `comma-separated: ${BROOKER.join(', ')} or preset ids (default: all five)`)
    .option('--base <duration>', "the post's base (default 5ms)")
    .option('--cap <duration>', "the post's cap (default 2s)")
    .action((flags: ContentionFlags) => emit(io, flags, () => contentionModel(flags, io)));

  sub('overload', "a fleet against a service that is down, then recovers: through ebb's retry()")
    .option('--clients <n>', 'clients, one request each (default 1000)')
    .option('--capacity <n>', 'requests the server completes per second (default 100)')
    .option('--queue <n>', 'requests that may wait; more are shed with a 503 (default 100)')
    .option('--outage <duration>', 'the server answers 503 until then (default 10s)')
    .option('--start-window <duration>', 'first requests spread over this window (default 1s)')
    .option('--retry-after <duration>', 'Retry-After sent with shed requests (default: none)')
    .option('--strategies <list>', `comma-separated: ${BROOKER.join(', ')} or preset ids (default: exponential,full)`)
    .option('--base <duration>', 'base of the named strategies (default 100ms)')
    .option('--cap <duration>', 'cap of the named strategies (default 10s)')
    .option('--max-attempts <n>', 'attempts per client, for every strategy (default: the strategy’s own)')
    .option('--attempt-timeout <duration>', "the executor's attemptTimeoutMs")
    .option('--budget <kind>', 'token[:MAX[:RATIO]], ratio[:SHARE] or aws-quota (from ebb/rate)')
    .addOption(new Option('--rate <kind>', 'a rate controller from ebb/rate').choices(['adaptive', 'aws-adaptive']))
    .option('--horizon <duration>', 'stop simulating then (default 10m)')
    .option('--bin <duration>', 'width of the time series bins (default 1s)')
    .action((flags: OverloadFlags) => emit(io, flags, () => overloadModel(flags, io)));

  sub('delays', 'the sampled distribution of a policy’s waits against describe()')
    .argument('[preset]', 'a preset id (see ebb schedule --list)')
    .option('--runs <n>', 'runs to sample (default 10000)')
    .option('--attempts <n>', 'rows (default 10)')
    .option('--initial <duration>', 'first delay (exponential, linear), e.g. 100ms')
    .option('--multiplier <x>', 'growth per failure (exponential)')
    .option('--jitter <kind>', 'none | full | equal | decorrelated | proportional:F | additive:DURATION')
    .option('--max-delay <duration>', 'hard cap on every delay')
    .option('--max-attempts <n>', 'calls in all, the first included')
    .option('--ceiling <n>', 'failure count after which delays stop growing')
    .action((preset: string | undefined, flags: DelaysFlags) =>
      emit(io, flags, () => delaysModel({ ...flags, ...(preset === undefined ? {} : { preset }) })),
    );

  sub('outage', 'workers through an outage: without and with a circuit breaker (ebb/resilience)')
    .option('--workers <n>', 'workers calling in a loop (default 10)')
    .option('--think <duration>', 'pause between a worker’s calls (default 20ms)')
    .option('--outage-start <duration>', 'the service goes down then (default 5s)')
    .option('--outage <duration>', 'for this long (default 30s)')
    .option('--duration <duration>', 'the workers call for this long (default 60s)')
    .option('--failures <n>', 'consecutive failures that open the breaker (default 5)')
    .option('--open <duration>', 'the first open period (default 1s); it doubles on each failed probe')
    .option('--open-max <duration>', 'the longest open period (default 8s)')
    .option('--bin <duration>', 'width of the time series bins (default 1s)')
    .action((flags: OutageFlags) => emit(io, flags, () => outageModel(flags, io)));

  sub('brownout', 'a thrashing server at 1.5 × capacity: without and with an adaptive concurrency limit')
    .option('--capacity <n>', 'requests the server works on at once (default 8)')
    .option('--service <duration>', 'time of a request while nobody waits (default 100ms)')
    .option('--slowdown <x>', 'how much slower once more than capacity wait (default 10)')
    .option('--load <x>', 'offered load, a multiple of capacity (default 1.5)')
    .option('--duration <duration>', 'calls arrive for this long (default 60s)')
    .option('--algorithms <list>', 'comma-separated: aimd, vegas, gradient2 (default: all three)')
    .option('--initial-limit <n>', 'each algorithm’s first limit (default 4)')
    .option('--max-limit <n>', 'cap every algorithm’s limit (default: each algorithm’s own)')
    .option('--max-queue <n>', 'the limit’s queue (default 16)')
    .option('--max-wait <duration>', 'longest wait in the limit’s queue (default 2 × service)')
    .option('--bin <duration>', 'width of the time series bins (default 1s)')
    .action((flags: BrownoutFlags) => emit(io, flags, () => brownoutModel(flags, io)));

  sub('slow-tail', 'a slow tail: without and with hedging, and hedging under an all-slow overload')
    .option('--workers <n>', 'workers calling in a loop (default 8)')
    .option('--service <duration>', 'time of a fast response (default 10ms)')
    .option('--slow-share <x>', 'share of slow responses (default 0.05)')
    .option('--slow-factor <x>', 'how much slower they are (default 20)')
    .option('--duration <duration>', 'the workers call for this long (default 60s)')
    .option('--delay <duration>', 'a fixed hedging delay (default: learned)')
    .option('--percentile <x>', 'without --delay: hedge after this latency percentile (default 0.95)')
    .option('--budget <x>', 'hedges at most this share of calls, plus 1 a second (default 0.05)')
    .action((flags: SlowTailFlags) => emit(io, flags, () => slowTailModel(flags, io)));
}
