// Success-path overhead, in one process: `await retry(() => Promise.resolve(1))` per subject,
// against a bare `await fn()` and the floor — `fn().then(undefined, rethrow)`, the least any
// wrapper must do. Every subject this runtime may run is measured in the same process, in
// interleaved rounds (each round in a rotated order), so that drift and noise fall on all alike.
//
// `node figures/overhead.mjs [--quick]` prints one JSON object:
//   { node, rounds: [{ bare, floor, <subject id>: ns per call (mitata's p50) }, …] }
import { do_not_optimize, measure } from 'mitata';
import { loadSubjects } from '../subjects.mjs';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 2 : 3;
// mitata's own default is 642 ms a benchmark; the rounds make up for the shorter budget.
const MIN_CPU_TIME_NS = (quick ? 120 : 300) * 1e6;

const fn = () => Promise.resolve(1);
const rethrow = (error) => {
  throw error;
};

const entries = [
  ['bare', async () => do_not_optimize(await fn())],
  ['floor', async () => do_not_optimize(await fn().then(undefined, rethrow))],
];
for (const s of await loadSubjects()) {
  const call = s.successPath(fn);
  if ((await call()) !== 1) throw new Error(`${s.id}: the success path did not resolve with the value`);
  entries.push([s.id, async () => do_not_optimize(await call())]);
}

const rounds = [];
for (let r = 0; r < ROUNDS; r++) {
  const round = {};
  for (let i = 0; i < entries.length; i++) {
    const [id, f] = entries[(i + r) % entries.length];
    round[id] = (await measure(f, { min_cpu_time: MIN_CPU_TIME_NS })).p50;
  }
  rounds.push(round);
}
process.stdout.write(`${JSON.stringify({ node: process.version, rounds })}\n`);
