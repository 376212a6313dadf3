// Success-path overhead, in one process: `await retry(() => Promise.resolve(1))` per subject,
// against a bare `await fn()` and the floor — `fn().then(undefined, rethrow)`, the least any
// wrapper must do. Every subject this runtime may run is measured in the same process, in
// interleaved rounds (each round in a rotated order), so that drift and noise fall on all alike.
//
// `node figures/overhead.mjs [--quick]` prints one JSON object:
//   { node, rounds: [{ bare, floor, <subject id>: ns per call (mitata's p50) }, …] }
import { baseEntries, entryOf, fn, interleavedRounds } from '../lib/success-path.mjs';
import { loadSubjects } from '../subjects.mjs';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 2 : 3;
// mitata's own default is 642 ms a benchmark; the rounds make up for the shorter budget.
const MIN_CPU_TIME_NS = (quick ? 120 : 300) * 1e6;

const entries = baseEntries();
for (const s of await loadSubjects()) entries.push(await entryOf(s.id, s.successPath(fn)));

const rounds = await interleavedRounds(entries, ROUNDS, MIN_CPU_TIME_NS);
process.stdout.write(`${JSON.stringify({ node: process.version, rounds })}\n`);
