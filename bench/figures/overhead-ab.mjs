// Success-path overhead of two builds of ebb, side by side in one process: for a change to the
// executor, an old and a new build (each a copy of packages/ebb/dist) measured in interleaved
// rounds with the bare call and the floor, so that the load of a shared machine falls on both
// alike. Only such paired figures say whether a change made the success path cheaper; figures
// from separate runs on a loaded machine differ more than the change.
//
// `node figures/overhead-ab.mjs OLD_DIST NEW_DIST [--rounds=N]` prints one JSON object:
//   { node, rounds: [{ load, bare, floor, old, new, old+backoff, new+backoff: ns per call
//     (mitata's p50) }, …], median: { old, new, old+backoff, new+backoff: × floor } }
// `old`/`new` is `retry(fn)`; `…+backoff` is `retry(fn, { backoff })` with the build's
// `exponential()` made once, the typical call, which validates its options on every call.
// `load` is the 1-minute load average when the round began.
import os from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { do_not_optimize } from 'mitata';
import { median } from '../lib/stats.mjs';
import { baseEntries, fn, interleavedRounds, twoBuilds } from '../lib/success-path.mjs';

const { oldDir, newDir, rounds: ROUNDS } = twoBuilds('node figures/overhead-ab.mjs OLD_DIST NEW_DIST [--rounds=N]', 6);
const MIN_CPU_TIME_NS = 300e6;

const load = async (dir) => import(pathToFileURL(resolve(dir, 'index.js')).href);
const builds = { old: await load(oldDir), new: await load(newDir) };

const entries = baseEntries();
// Measured as `await ebb.retry(fn)` itself, with no closure around it (the figures in
// docs/dev/size.md were taken so).
for (const [id, ebb] of Object.entries(builds)) {
  if ((await ebb.retry(fn)) !== 1) throw new Error(`${id}: the success path did not resolve with the value`);
  entries.push([id, async () => do_not_optimize(await ebb.retry(fn))]);
}
for (const [id, ebb] of Object.entries(builds)) {
  const options = { backoff: ebb.exponential() };
  if ((await ebb.retry(fn, options)) !== 1)
    throw new Error(`${id}+backoff: the success path did not resolve with the value`);
  entries.push([`${id}+backoff`, async () => do_not_optimize(await ebb.retry(fn, options))]);
}

const rounds = await interleavedRounds(entries, ROUNDS, MIN_CPU_TIME_NS, () => ({ load: os.loadavg()[0] }));
const ratio = (id) => Number(median(rounds.map((r) => r[id] / r.floor)).toFixed(3));
process.stdout.write(
  `${JSON.stringify({ node: process.version, rounds, median: Object.fromEntries(['old', 'new', 'old+backoff', 'new+backoff'].map((id) => [id, ratio(id)])) })}\n`,
);
