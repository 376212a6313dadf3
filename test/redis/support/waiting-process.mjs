// A process whose sharedRate cannot reach Redis (test/redis/waiting-keeps-alive.test.ts): its
// client never connects, so the rate paces on its local fallback. It awaits two acquire()s at the
// top level and prints one line; nothing else keeps it alive, so it exits 0 only if the wait for
// the second request holds the event loop, as a local adaptiveRate's does (13: an unsettled await).
//   node waiting-process.mjs <redisUrl>
// Bounded: a watchdog (unref'd, so it keeps nothing alive) ends the process 20 s after its start.
import { sharedRate } from 'ebb/redis';
import { createClient } from 'redis';

setTimeout(() => process.exit(3), 20_000).unref();
const client = createClient({ url: process.argv[2], disableOfflineQueue: true });
client.on('error', () => {});
const rate = sharedRate({ client, name: 'waiting', initialRatePerSecond: 2 });
await rate.acquire();
await rate.acquire();
console.log(`two acquired, mode ${rate.mode}`);
