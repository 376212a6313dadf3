// Simulator throughput, in one process: the slot simulators of ebb/sim (`simulateWifi` at 50
// saturated stations, `simulateEthernet` at 32), each timed over several runs after a warm-up
// run. A station-slot is one station for one simulated slot (a Wi-Fi backoff slot: an empty
// slot or a transmission period, as in Bianchi's model); the simulators jump over empty slots
// and touch only the stations that transmit, so their cost follows the transmissions.
// Prints one JSON object: model → { stations, slots, ms (median run), slotsPerSecond,
// stationSlotsPerSecond, transmissionsPerSecond }.
// Usage: node bench/figures/sim.mjs [--quick]
import { simulateEthernet, simulateWifi } from 'ebb/sim';

const quick = process.argv.includes('--quick');
const runs = quick ? 3 : 7;

function measure(run, stations, slots) {
  run(Math.max(1, slots / 10)); // warm-up: compile the hot loop
  const times = [];
  let transmissions = 0;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = run(slots);
    times.push(performance.now() - t0);
    transmissions = r.transmissions;
  }
  times.sort((a, b) => a - b);
  const ms = times[Math.floor(times.length / 2)];
  return {
    stations,
    slots,
    runs,
    ms: Number(ms.toFixed(1)),
    minMs: Number(times[0].toFixed(1)),
    maxMs: Number(times.at(-1).toFixed(1)),
    slotsPerSecond: Math.round((slots / ms) * 1000),
    stationSlotsPerSecond: Math.round(((stations * slots) / ms) * 1000),
    transmissionsPerSecond: Math.round((transmissions / ms) * 1000),
  };
}

const slots = quick ? 1_000_000 : 5_000_000;
const out = {
  wifi: measure((n) => simulateWifi({ stations: 50, cwMin: 31, stages: 5, slots: n, seed: 1 }), 50, slots),
  ethernet: measure((n) => simulateEthernet({ stations: 32, slots: n, seed: 1 }), 32, slots),
};
process.stdout.write(`${JSON.stringify(out)}\n`);
