// Success-path overhead of two builds of ebb's composed pipeline, side by side in one process: for
// a change to the mechanisms, an old and a new build (each a copy of packages/ebb/dist) measured
// in interleaved rounds with the bare call and the floor, so that the load of a shared machine
// falls on both alike (figures/overhead-ab.mjs does the same for `retry(fn)`). Each build is
// measured as figures/pipeline.mjs measures it: `retry(fn)`, the composition of an attempt
// timeout, a retry, a circuit breaker and a concurrency limit, and the same inside a total
// timeout; `--parts` adds each mechanism alone and the composition grown one at a time.
//
// `node figures/pipeline-ab.mjs OLD_DIST NEW_DIST [--rounds=N] [--parts]` prints one JSON object:
//   { node, loadAverage: [before, after], subjects: { id: { nsPerCall, overBareNs, timesFloor } } }
// each the median over the rounds (mitata's p50 of each), ids prefixed `old ` and `new `.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { baseEntries, composedPipelines, entryOf, fn, printMedians, twoBuilds } from '../lib/success-path.mjs';

const USAGE = 'node figures/pipeline-ab.mjs OLD_DIST NEW_DIST [--rounds=N] [--parts]';
const { oldDir, newDir, rounds: ROUNDS } = twoBuilds(USAGE, 5);
const parts = process.argv.includes('--parts');
const MIN_CPU_TIME_NS = (parts ? 150 : 300) * 1e6;

const load = async (dir, entry) => import(pathToFileURL(resolve(dir, entry)).href);

const entries = baseEntries();
for (const [id, dir] of [
  ['old', oldDir],
  ['new', newDir],
]) {
  const ebb = { ...(await load(dir, 'index.js')), ...(await load(dir, 'resilience.js')) };
  const { pipeline, retry, retrying, timeout, circuitBreaker, concurrencyLimit } = ebb;
  const { composed, standard } = composedPipelines(ebb);
  const subjects = {
    'retry(fn)': () => retry(fn),
    'retrying, circuitBreaker, concurrencyLimit, timeout': composed,
    'the same inside a total timeout': standard,
  };
  if (parts) {
    Object.assign(subjects, {
      'pipeline([retrying()])': pipeline([retrying()]),
      'pipeline([circuitBreaker()])': pipeline([circuitBreaker()]),
      'pipeline([concurrencyLimit()])': pipeline([concurrencyLimit()]),
      'pipeline([timeout(10_000)])': pipeline([timeout(10_000)]),
      'retrying, circuitBreaker': pipeline([retrying(), circuitBreaker()]),
      'retrying, circuitBreaker, concurrencyLimit': pipeline([retrying(), circuitBreaker(), concurrencyLimit()]),
    });
  }
  for (const [name, s] of Object.entries(subjects)) {
    entries.push(await entryOf(`${id} ${name}`, typeof s === 'function' ? s : () => s.execute(fn)));
  }
}

await printMedians(entries, ROUNDS, MIN_CPU_TIME_NS);
