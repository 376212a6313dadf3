// Success-path overhead, in one process: `await retry(() => Promise.resolve(1))` per subject,
// against a bare `await fn()` and the floor — `fn().then(undefined, rethrow)`, the least any
// wrapper must do. Prints one JSON object: subject → mean ns per call (mitata's p50 of batches).
import { bench, do_not_optimize, run } from 'mitata';
import { subjects } from '../subjects.mjs';

const fn = () => Promise.resolve(1);
const rethrow = (error) => {
  throw error;
};

bench('bare', async () => do_not_optimize(await fn()));
bench('floor', async () => do_not_optimize(await fn().then(undefined, rethrow)));
for (const s of await subjects()) {
  const call = s.successPath(fn);
  bench(s.name, async () => do_not_optimize(await call()));
}

const { benchmarks } = await run({ format: 'quiet', throw: true });
const out = {};
for (const b of benchmarks) out[b.alias] = b.runs[0].stats.p50;
process.stdout.write(`${JSON.stringify(out)}\n`);
