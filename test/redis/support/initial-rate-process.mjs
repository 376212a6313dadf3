// A process started while its Redis is down (test/redis/fallback-initial-rate.test.ts): its client
// cannot connect, so its sharedRate's first lease fails and it paces on a local controller. It
// takes requests for `seconds` from 8 loops as fast as the controller lets them go and prints one
// JSON line: the grants, the controller's rate and mode, and its events. It prints `ready` once
// its first lease failed and waits for the start (rate-fleet.mjs's readyForStart).
//   node initial-rate-process.mjs <redisUrl> <node-redis|ioredis> <initial r/s> <seconds>
// Bounded: the loops stop after `seconds`; a watchdog ends the process 20 s after its start.
import { sharedRate } from 'ebb/redis';
import { readyForStart } from './rate-fleet.mjs';

const [redisUrl, library, initial, seconds] = process.argv.slice(2);
setTimeout(() => process.exit(3), 20_000).unref();

let client;
let quit;
if (library === 'ioredis') {
  const { Redis } = await import('ioredis');
  // As docs/redis.md advises: no offline queue, no retries per request — a command fails at once.
  client = new Redis(redisUrl, { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true });
  client.on('error', () => {});
  client.connect().catch(() => {});
  quit = () => client.disconnect();
} else {
  const { createClient } = await import('redis');
  client = createClient({ url: redisUrl, disableOfflineQueue: true, socket: { reconnectStrategy: 200 } });
  client.on('error', () => {});
  client.connect().catch(() => {});
  quit = () => client.destroy();
}
const events = [];
const rate = sharedRate({
  client,
  name: 'started-while-down',
  initialRatePerSecond: Number(initial),
  onEvent: (e) => events.push({ type: e.type, seedFrom: e.seedFrom, seed: e.seed }),
});
await rate.ready();
const start = await readyForStart();
if (start > Date.now()) await new Promise((r) => setTimeout(r, start - Date.now()));
const mode = rate.mode;
const ratePerSecond = rate.ratePerSecond;
let grants = 0;
const end = performance.now() + Number(seconds) * 1000;
await Promise.all(
  Array.from({ length: 8 }, async () => {
    while (performance.now() < end && grants < 100_000) {
      const ticket = await rate.acquire();
      if (performance.now() >= end) break;
      grants++;
      rate.record('success', ticket);
    }
  }),
);
const stats = rate.stats;
await rate.close();
quit();
process.stdout.write(`${JSON.stringify({ grants, mode, ratePerSecond, stats, events })}\n`);
