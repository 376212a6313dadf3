// One process of the SRE-throttle fleet experiments (test/redis/throttle-fleet.test.ts and
// `npm run bench -- redis`): an open loop of `perSecond` requests a second against `url`, each one
// attempt of withRetry(fetch) (no retries, so one request asked is one `acquire`), through a
// sharedAdaptiveThrottle in Redis (`shared`) or its own adaptiveThrottle (`local`). Once loaded and
// connected it prints `ready`, reads the fleet's start (ms since the epoch) from stdin, starts
// `atMs` after it (makes its throttle then, and waits for its first sync), runs for `seconds`, and prints one JSON line: per-second counts of requests
// asked, rejected locally, sent, 200s and 429s; errors other than the local rejection; the
// throttle's view (requests, accepts, rejection probability, mode) sampled every 250 ms beside
// this process's own counts; the longest `acquire` call and whether any returned a promise; the
// throttle's stats.
//   node throttle-process.mjs <url> <redisUrl> <name> <shared|local> <node-redis|ioredis> <perSecond> <atMs> <seconds> [k] [windowMs]
// Bounded: 60 s to be told to start; a watchdog ends the process 30 s after its run.
import { constant, guard } from 'ebb';
import { withRetry } from 'ebb/http';
import { adaptiveThrottle } from 'ebb/rate';
import { sharedAdaptiveThrottle } from 'ebb/redis';
import { readyForStart } from './rate-fleet.mjs';
import { connectRedis } from './redis-server.mjs';

const [url, redisUrl, name, kind, library, perSecond, atMs, seconds, kArg, windowArg] = process.argv.slice(2);
if (!url || !['shared', 'local'].includes(kind) || !['node-redis', 'ioredis'].includes(library)) {
  process.stderr.write(
    'usage: node throttle-process.mjs <url> <redisUrl> <name> <shared|local> <node-redis|ioredis> <perSecond> <atMs> <seconds> [k] [windowMs]\n',
  );
  process.exit(2);
}
const watchdog = setTimeout(() => process.exit(3), 60_000);
watchdog.unref();
const k = kArg === undefined ? 2 : Number(kArg);
const windowMs = windowArg === undefined ? 60_000 : Number(windowArg);

const { client, quit } =
  kind === 'shared' ? await connectRedis(library, redisUrl) : { client: undefined, quit: async () => {} };
let startAt = Number.NaN;
const events = [];
// The throttle is made (and synced) when the process's run starts, as a process that starts then
// would make it: a late process's first view is the fleet's counts at its start.
const make = () =>
  kind === 'shared'
    ? sharedAdaptiveThrottle({
        client,
        name,
        k,
        windowMs,
        // As the rate fleet's: on this 2-core machine an event loop alone can stall 100 ms.
        commandTimeoutMs: 250,
        onEvent: (e) => events.push({ type: e.type, t: (Date.now() - startAt) / 1000 }),
      })
    : adaptiveThrottle({ k, windowMs });
const fleetStart = await readyForStart();
startAt = fleetStart + Number(atMs);
clearTimeout(watchdog);
setTimeout(() => process.exit(3), Math.max(0, startAt - Date.now()) + Number(seconds) * 1000 + 30_000).unref();
const wait = startAt - Date.now();
if (wait > 0) await new Promise((r) => setTimeout(r, wait));
const throttle = make();
if (kind === 'shared') await throttle.ready();

const series = { asked: [], local: [], sent: [], ok: [], throttled: [] };
const bump = (key, s) => {
  const xs = series[key];
  while (xs.length <= s) xs.push(0);
  xs[s]++;
};
const second = () => Math.floor((Date.now() - startAt) / 1000);
const own = { asked: 0, accepted: 0 };
let longestAcquireMs = 0;
let promises = 0;
const measured = {
  acquire: (signal) => {
    own.asked++;
    bump('asked', second());
    const t0 = performance.now();
    try {
      const ticket = throttle.acquire(signal);
      if (ticket instanceof Promise) promises++;
      return ticket;
    } finally {
      longestAcquireMs = Math.max(longestAcquireMs, performance.now() - t0);
    }
  },
  record: (outcome, ticket, detail) => {
    if (outcome !== 'throttled') own.accepted++;
    throttle.record(outcome, ticket, detail);
  },
  get ratePerSecond() {
    return throttle.ratePerSecond;
  },
};
const counted = async (input, init) => {
  const response = await fetch(input, init);
  const s = second();
  bump('sent', s);
  if (response.status === 200) bump('ok', s);
  else if (response.status === 429) bump('throttled', s);
  return response;
};
const fetchOnce = withRetry(counted, { use: [guard(measured)], backoff: constant({ delayMs: 0, maxAttempts: 1 }) });
const errors = {};
const view = [];
const sampler = setInterval(() => {
  view.push({
    t: Math.round(Date.now() - startAt) / 1000,
    requests: throttle.requests,
    accepts: throttle.accepts,
    p: throttle.rejectionProbability,
    mode: kind === 'shared' ? throttle.mode : 'local',
    ownAsked: own.asked,
    ownAccepted: own.accepted,
  });
}, 250);
const running = [];
const gap = 1000 / Number(perSecond);
const end = startAt + Number(seconds) * 1000;
for (let i = 0; startAt + i * gap < end; i++) {
  const delay = startAt + i * gap - Date.now();
  if (delay > 1) await new Promise((r) => setTimeout(r, delay));
  running.push(
    fetchOnce(url)
      .then((response) => response.arrayBuffer())
      .catch((error) => {
        const name = error?.name ?? typeof error;
        if (name === 'LocalThrottleError') bump('local', second());
        else errors[name] = (errors[name] ?? 0) + 1;
      }),
  );
}
await Promise.all(running);
clearInterval(sampler);
const stats = kind === 'shared' ? throttle.stats : undefined;
if (kind === 'shared') await throttle.close();
await quit();
process.stdout.write(
  `${JSON.stringify({ ...series, errors, view, own, longestAcquireMs, promises, stats, events, startWall: startAt })}\n`,
);
