// Loaded by run.mjs into every figure process (`node --import`): `ebb` and `ebb/<subpath>`
// resolve in the snapshot of the library's build that the run measures (EBB_BENCH_SNAPSHOT),
// through its own package.json `exports`, so that a rebuild during a long run changes nothing.
import { register } from 'node:module';

if (process.env.EBB_BENCH_SNAPSHOT) {
  register('./snapshot-resolve.mjs', import.meta.url, { data: { dir: process.env.EBB_BENCH_SNAPSHOT } });
}
