// The success-path measurement shared by figures/overhead.mjs (ebb beside the peers) and
// figures/overhead-ab.mjs (two builds of ebb): the operation, the bare call and the floor every
// wrapper is measured against, and the rounds in which every entry is measured in turn.
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
