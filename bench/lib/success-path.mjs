// The success-path measurement shared by figures/overhead.mjs (ebb beside the peers),
// figures/pipeline.mjs (composed pipelines beside the peers) and their A/B forms for two builds of
// ebb (overhead-ab.mjs, pipeline-ab.mjs): the operation, the bare call and the floor every wrapper
// is measured against, the pipelines measured, the two builds' arguments, and the rounds in which
// every entry is measured in turn.
import { do_not_optimize, measure } from 'mitata';

/** The operation every subject wraps: an already-resolved promise of 1. */
export const fn = () => Promise.resolve(1);
const rethrow = (error) => {
  throw error;
};

/** `bare` (`await fn()`) and `floor` (`fn().then(undefined, rethrow)`: the least a wrapper must do). */
export function baseEntries() {
  return [
    ['bare', async () => do_not_optimize(await fn())],
    ['floor', async () => do_not_optimize(await fn().then(undefined, rethrow))],
  ];
}

/**
 * The two composed pipelines the pipeline figures measure, made once from one build of ebb (its
 * root and `ebb/resilience` exports) and shared by every call, as a program holds them: an attempt
 * timeout, a retry, a circuit breaker and a concurrency limit, each at its defaults (`composed`),
 * and the same inside a total timeout, the order the docs recommend (`standard`).
 */
export function composedPipelines({ pipeline, retrying, timeout, circuitBreaker, concurrencyLimit }) {
  return {
    composed: pipeline([retrying(), circuitBreaker(), concurrencyLimit(), timeout(10_000)]),
    standard: pipeline([timeout(30_000), retrying(), circuitBreaker(), concurrencyLimit(), timeout(10_000)]),
  };
}

/**
 * The arguments of an A/B figure, `OLD_DIST NEW_DIST [--rounds=N]`: the two builds' directories
 * and the rounds (`defaultRounds` when not given). Exits with 2 and `usage` when a directory is missing.
 */
export function twoBuilds(usage, defaultRounds) {
  const [oldDir, newDir] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  if (!oldDir || !newDir) {
    process.stderr.write(`usage: ${usage}\n`);
    process.exit(2);
  }
  const roundsArg = process.argv.find((a) => a.startsWith('--rounds='));
  return { oldDir, newDir, rounds: roundsArg ? Number(roundsArg.slice('--rounds='.length)) : defaultRounds };
}

/** `[id, call]` measured with its result kept from the optimizer; `call` must resolve with 1. */
export async function entryOf(id, call) {
  if ((await call()) !== 1) throw new Error(`${id}: the success path did not resolve with the value`);
  return [id, async () => do_not_optimize(await call())];
}

/**
 * `rounds` rounds, each measuring every entry once (mitata's p50, ns), the order rotated by one a
 * round so that no entry always runs first; `roundInfo()` adds fields to each round.
 */
export async function interleavedRounds(entries, rounds, minCpuTimeNs, roundInfo = () => ({})) {
  const out = [];
  for (let r = 0; r < rounds; r++) {
    const round = roundInfo();
    for (let i = 0; i < entries.length; i++) {
      const [id, f] = entries[(i + r) % entries.length];
      round[id] = (await measure(f, { min_cpu_time: minCpuTimeNs })).p50;
    }
    out.push(round);
  }
  return out;
}

/**
 * Measures `entries` in interleaved rounds and prints the one JSON line figures/pipeline.mjs and
 * figures/otel-overhead.mjs print: `{ node, loadAverage: [before, after], subjects: { id: {
 * nsPerCall, overBareNs, timesFloor } } }`, each the median over the rounds.
 */
export async function printMedians(entries, rounds, minCpuTimeNs) {
  const { loadavg } = await import('node:os');
  const before = loadavg()[0];
  const measured = await interleavedRounds(entries, rounds, minCpuTimeNs);
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const subjects = {};
  for (const [id] of entries) {
    subjects[id] = {
      nsPerCall: Math.round(median(measured.map((r) => r[id])) * 10) / 10,
      overBareNs: Math.round(median(measured.map((r) => r[id] - r.bare)) * 10) / 10,
      timesFloor: Math.round(median(measured.map((r) => r[id] / r.floor)) * 100) / 100,
    };
  }
  process.stdout.write(`${JSON.stringify({ node: process.version, loadAverage: [before, loadavg()[0]], subjects })}\n`);
}
