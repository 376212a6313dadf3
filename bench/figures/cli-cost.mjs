// The cost of `ebb simulate`'s models, in the units the CLI sizes a run in before starting it
// (packages/ebb-cli/src/simulate-cost.ts): each model's simulator from ebb/sim at a few sizes,
// timed, and the work it did in those units per second. The CLI's WORK_PER_SECOND table takes
// about the slowest rate of each model measured here, so that its warning comes early, not late.
//
//   overload    simulated requests (the result's own count)
//   contention  simulated writes (the result's calls per run × runs)
//   ethernet    slots simulated; wifi: backoff slots simulated
//   outage      calls the workers could make: workers × duration ÷ (think + 5 ms), each run
//   brownout    arrivals: load × capacity ÷ service × duration, each run
//   slow-tail   calls the workers could make: workers × duration ÷ service, each run
//   delays      draws: runs × rows
//
// Prints one JSON object: { loadavg, model → [{ case, work, ms, perSecond }] }. About a minute.
// Usage: node bench/figures/cli-cost.mjs
import { loadavg } from 'node:os';
import { presets } from 'ebb';
import {
  brookerStrategies,
  delayDistribution,
  simulateBreakerOutage,
  simulateBrownout,
  simulateContention,
  simulateEthernet,
  simulateOverload,
  simulateSlowTail,
  simulateWifi,
} from 'ebb/sim';

const out = { loadavg: loadavg().map((x) => Number(x.toFixed(2))) };

/** Times `run` (after a smaller warm-up the caller folds into `run`), records work per second. */
async function measure(model, name, run) {
  const t0 = performance.now();
  const work = await run();
  const ms = performance.now() - t0;
  out[model] = [
    ...(out[model] ?? []),
    { case: name, work, ms: Math.round(ms), perSecond: Math.round((work / ms) * 1000) },
  ];
}

const overload = brookerStrategies({ baseMs: 100, capMs: 10_000 });
await simulateOverload({ clients: 500 }); // warm-up
for (const [name, clients] of [
  ['full', 8_000],
  ['exponential', 8_000],
  ['none', 300],
]) {
  await measure('overload', `${name}, ${clients} clients`, async () => {
    const r = await simulateOverload({ clients, backoff: overload[name] });
    return r.requests;
  });
}

const brooker = brookerStrategies();
simulateContention({ clients: 50, runs: 5 }); // warm-up
for (const [name, clients, runs] of [
  ['none', 400, 10],
  ['exponential', 800, 10],
  ['full', 800, 20],
  ['decorrelated', 2_000, 2],
]) {
  await measure('contention', `${name}, ${clients} clients × ${runs} runs`, () => {
    const [r] = simulateContention({ clients, runs, strategies: { [name]: brooker[name] } });
    return r.calls * runs;
  });
}

simulateEthernet({ slots: 100_000 }); // warm-up
for (const [stations, slots] of [
  [32, 5_000_000],
  [1_000, 1_000_000],
  [30_000, 200_000],
]) {
  await measure('ethernet', `${stations} stations`, () => {
    simulateEthernet({ stations, slots });
    return slots;
  });
}
simulateWifi({ slots: 100_000 }); // warm-up
for (const [stations, slots] of [
  [10, 5_000_000],
  [1_000, 1_000_000],
  [30_000, 200_000],
]) {
  await measure('wifi', `${stations} stations`, () => {
    simulateWifi({ stations, slots });
    return slots;
  });
}

for (const workers of [10, 100]) {
  await measure('outage', `${workers} workers, 60 s`, async () => {
    await simulateBreakerOutage({ workers, durationMs: 60_000 });
    return (workers * 60_000) / (20 + 5);
  });
}
for (const [load, durationMs] of [
  [1.5, 120_000],
  [0.5, 120_000],
]) {
  await measure('brownout', `load ${load}, ${durationMs / 1_000} s`, async () => {
    await simulateBrownout({ load, durationMs });
    return ((load * 8) / 100) * durationMs;
  });
}
for (const [workers, slowShare] of [
  [8, 0.05],
  [40, 0.05],
  [8, 1],
]) {
  await measure('slow-tail', `${workers} workers, slow share ${slowShare}`, async () => {
    await simulateSlowTail({ workers, slowShare, durationMs: 60_000 });
    return (workers * 60_000) / 10;
  });
}

for (const [name, policy] of [
  ['default', presets.default],
  ['google-http-client', presets.googleHttpClient],
]) {
  await measure('delays', `${name}, 1e6 runs × 10 rows`, () => {
    delayDistribution(policy, { runs: 1_000_000, rows: 10 });
    return 10_000_000;
  });
}

process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
