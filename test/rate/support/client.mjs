// One independent client process of the K-process experiment: its own adaptiveRate (or none),
// `clients` loops against `url` for `seconds`; prints the fleet's result as one JSON line.
//   node client.mjs <url> <seconds> <clients> <adaptive|adaptive-no-spread|aws|sre|none> [no-collision] [yield=N]
// (adaptive-no-spread: adaptiveRate with a `random` of 0, which draws no spread of its rises;
// no-collision: LAW.collisionCharge set to 0 in the built library's table, the law without the
// charge of throttles at a rate that held — for bench/figures/limits.mjs --no-collision; yield=N:
// LAW.collisionYield set to N, the base steps such a throttle gives back — for --no-yield (0) and --yield=N)
import { adaptiveRate, adaptiveThrottle, awsAdaptiveRate } from 'ebb/rate';
import { runFleet } from './fleet.mjs';

const [url, seconds, clients, kind = 'adaptive', ...variants] = process.argv.slice(2);
if (variants.length > 0) {
  const { LAW } = await import('../../../packages/ebb/dist/rate/law.js');
  if (variants.includes('no-collision')) LAW.collisionCharge = 0;
  const steps = variants.find((v) => v.startsWith('yield='));
  if (steps !== undefined) LAW.collisionYield = Number(steps.slice('yield='.length));
}
const make = {
  adaptive: adaptiveRate,
  'adaptive-no-spread': () => adaptiveRate({ random: () => 0 }),
  aws: awsAdaptiveRate,
  sre: adaptiveThrottle,
  none: () => undefined,
}[kind];
if (!url || !make) {
  process.stderr.write(
    'usage: node client.mjs <url> <seconds> <clients> <adaptive|adaptive-no-spread|aws|sre|none> [no-collision] [yield=N]\n',
  );
  process.exit(2);
}
// Wall-clock bounds of the run (every request sent and every response received in between), so a
// test can bound what the limiter let through over the fleet's whole span.
const startedAt = Date.now();
const result = await runFleet({ url: () => url, rate: make(), clients: Number(clients), seconds: Number(seconds) });
const endedAt = Date.now();
process.stdout.write(
  `${JSON.stringify({ ok: result.ok, throttled: result.throttled, outcome: result.outcome, startedAt, endedAt })}\n`,
);
