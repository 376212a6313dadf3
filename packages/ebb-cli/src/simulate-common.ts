// What every `ebb simulate` model shares: the output flags and the result shape, the flag
// parsers for counts, ranges and the seed, the progress bar, and `emit` (table, --json, charts).
import { accessSync, constants, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { ProgressCallback } from 'ebb/sim';
import type { ChartSpec } from './charts.js';
import { renderPng, renderSvg } from './charts-render.js';
import { parseNumber } from './duration.js';
import { longRunWarning, type RunPlan } from './simulate-cost.js';
import { type ProgressStream, progressBar } from './simulate-progress.js';
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

export const pct = (x: number, digits = 2): string => `${(x * 100).toFixed(digits)} %`;
export const fixed = (x: number, digits = 1): string => x.toFixed(digits);

/**
 * Throws a UsageError (one line, exit 2) naming the flag and the path when `file` cannot be
 * written: its directory missing or not a directory or not writable, or `file` a directory or a
 * file that cannot be written. Checked before the simulation, which may take minutes.
 */
export function checkWritable(flag: string, file: string): void {
  if (file === '') throw new UsageError(`${flag} needs a file name, got ""`);
  const cannot = (why: string) => new UsageError(`${flag} ${file}: cannot write there: ${why}`);
  const dir = dirname(resolve(file));
  let info: ReturnType<typeof statSync> | undefined;
  try {
    info = statSync(file);
  } catch {}
  if (info?.isDirectory()) throw cannot('it is a directory');
  try {
    if (!statSync(dir).isDirectory()) throw cannot(`${dir} is not a directory`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw cannot(`no directory ${dir}`);
  }
  try {
    accessSync(info === undefined ? dir : file, constants.W_OK);
  } catch {
    throw cannot(info === undefined ? `${dir} is not writable` : 'the file is not writable');
  }
}

/** Writes an output file; a failure (a full disk, a path changed meanwhile) is one line, exit 2. */
function writeOutput(flag: string, file: string, data: string | Buffer): void {
  try {
    writeFileSync(file, data);
  } catch (error) {
    throw new UsageError(`${flag} ${file}: cannot write there: ${(error as Error).message}`);
  }
}

/** Runs a model's simulation and prints it: a table, or `--json`; writes `--svg` and `--png`. */
export async function emit(
  io: SimulateIO,
  flags: OutputFlags,
  run: () => Promise<Simulation> | Simulation,
): Promise<void> {
  if (flags.svg !== undefined) checkWritable('--svg', flags.svg);
  if (flags.png !== undefined) checkWritable('--png', flags.png);
  const sim = await run();
  if (flags.svg !== undefined || flags.png !== undefined) {
    const svg = await renderSvg(sim.chart);
    if (flags.svg !== undefined) writeOutput('--svg', flags.svg, svg);
    if (flags.png !== undefined) writeOutput('--png', flags.png, await renderPng(svg));
  }
  io.out(flags.json ? `${JSON.stringify(sim.doc, null, 2)}\n` : sim.text);
}

/**
 * Runs a model's simulator runs under one progress bar on stderr (when it is a terminal), each
 * run weighted by its estimated work in `plan` — `part(i)` is the progress callback of run `i`,
 * which reports its own work done — after warning on stderr, terminal or not, when the whole is
 * estimated to take longer than WARN_AFTER_SECONDS (simulate-cost.ts).
 */
export function planned<T>(
  io: SimulateIO,
  plan: RunPlan,
  work: (part: (i: number) => ProgressCallback) => T,
  now?: () => number,
): T {
  const warning = longRunWarning(plan);
  if (warning !== undefined) io.progress.write(`${warning}\n`);
  const bar = progressBar(io.progress, plan.model, now);
  // A run estimated at nothing still counts: equal weights when the estimates are all zero.
  const weights = plan.parts.some((w) => w > 0) ? plan.parts.map((w) => Math.max(0, w)) : plan.parts.map(() => 1);
  const sum = weights.reduce((a, b) => a + b, 0);
  const before = weights.map((_, i) => weights.slice(0, i).reduce((a, b) => a + b, 0));
  const part =
    (i: number): ProgressCallback =>
    (done, total) =>
      bar.update(
        (before[i] ?? sum) + (weights[i] ?? 0) * (total > 0 ? Math.min(1, Math.max(0, done / total)) : 0),
        sum,
      );
  let result: T;
  try {
    result = work(part);
  } catch (error) {
    bar.finish();
    throw error;
  }
  if (result instanceof Promise) return result.finally(() => bar.finish()) as T;
  bar.finish();
  return result;
}
