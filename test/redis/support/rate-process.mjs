// One process of the shared-rate fleet experiments (test/redis/fleet-rate.test.ts, and
// `npm run bench -- redis`): `clients` closed loops against `url` through withRetry, paced by a
// sharedRate in Redis (`shared`) or by its own adaptiveRate (`local`). Once loaded and connected it
// prints `ready`, reads the fleet's start (ms since the epoch) from stdin, and starts `atMs` after
// it, so that the processes' per-second series line up whatever their load times. It runs for
// `seconds` and prints one JSON line: per-second 200s and 429s, how requests ended, the
// controller's stats and events, its rate sampled every 250 ms, and the time and ticket epoch of
// every 429 (to trace where they come from).
//   node rate-process.mjs <url> <redisUrl> <name> <shared|local> <node-redis|ioredis> <clients> <atMs> <seconds> [initial r/s]
// The initial rate is the fleet's (shared) or this process's own (local); omitted, unlimited.
// EBB_MAX_RATE sets maxRatePerSecond; EBB_SAMPLE_MS how often the controller's rate is sampled
// (default 250 ms).
// Bounded: 60 s to be told to start; the fleet stops after `seconds`; a watchdog ends the process
// 30 s after that.
import { adaptiveRate } from 'ebb/rate';
import { sharedRate } from 'ebb/redis';
import { runFleet } from '../../rate/support/fleet.mjs';
import { readyForStart } from './rate-fleet.mjs';
import { connectRedis } from './redis-server.mjs';

const [url, redisUrl, name, kind, library, clients, atMs, seconds, initial] = process.argv.slice(2);
const initialRatePerSecond = initial === undefined ? undefined : Number(initial);
if (!url || !['shared', 'local'].includes(kind) || !['node-redis', 'ioredis'].includes(library)) {
  process.stderr.write(
    'usage: node rate-process.mjs <url> <redisUrl> <name> <shared|local> <node-redis|ioredis> <clients> <atMs> <seconds>\n',
  );
  process.exit(2);
}
// The watchdog: 60 s to load and be told to start, then the run, then 30 s.
const watchdog = setTimeout(() => process.exit(3), 60_000);
watchdog.unref();

const { client, quit } =
  kind === 'shared' ? await connectRedis(library, redisUrl) : { client: undefined, quit: async () => {} };
// Longer than the default 100 ms: on this 2-core machine at load 15–20, a Node.js process's event
// loop alone can stall that long, and each such stall would be a fallback unrelated to Redis.
const TIMEOUT_MS = 250;
const events = [];
// The fleet's start plus this process's offset, once known (events before it have negative times).
let startAt = Number.NaN;
const rate =
  kind === 'shared'
    ? sharedRate({
        client,
        name,
        commandTimeoutMs: TIMEOUT_MS,
        initialRatePerSecond,
        maxRatePerSecond: process.env.EBB_MAX_RATE ? Number(process.env.EBB_MAX_RATE) : undefined,
        onEvent: (e) =>
          events.push({
            type: e.type,
            t: (Date.now() - startAt) / 1000,
            error: e.error ? String(e.error.message ?? e.error).slice(0, 80) : undefined,
            seed: e.seed,
            field: e.field,
          }),
      })
    : adaptiveRate({ initialRatePerSecond });
if (kind === 'shared') await rate.ready();
const fleetStart = await readyForStart();
startAt = fleetStart + Number(atMs);
watchdog.refresh();
setTimeout(() => process.exit(3), Math.max(0, startAt - Date.now()) + Number(seconds) * 1000 + 30_000).unref();
clearTimeout(watchdog);
const wait = startAt - Date.now();
if (wait > 0) await new Promise((r) => setTimeout(r, wait));
const lateMs = Date.now() - startAt;
const fleetTrace = [];
const sampler =
  kind === 'shared'
    ? setInterval(
        () =>
          fleetTrace.push([
            Math.round(Date.now() - startAt) / 1000,
            Number(rate.fleetRatePerSecond.toFixed(1)),
            rate.epoch,
          ]),
        250,
      )
    : undefined;
// The time (s on this process's clock) and the ticket's epoch of every 429, to trace where they come from.
const throttles = [];
// With EBB_TRACE_GRANTS=1: every grant's wall-clock time (ms, with microseconds) and its outcome.
const grants = process.env.EBB_TRACE_GRANTS === '1' ? [] : undefined;
const grantedAt = new WeakMap();
const wall = () => performance.timeOrigin + performance.now();
const traced = {
  acquire: (signal) => {
    const t = rate.acquire(signal);
    const mark = (ticket) => {
      if (grants && typeof ticket === 'object' && ticket !== null) grantedAt.set(ticket, wall());
      return ticket;
    };
    return t instanceof Promise ? t.then(mark) : mark(t);
  },
  record: (outcome, ticket, detail) => {
    if (grants && typeof ticket === 'object' && ticket !== null && grantedAt.has(ticket)) {
      grants.push([grantedAt.get(ticket), outcome === 'throttled' ? 429 : 200]);
    }
    if (outcome === 'throttled') throttles.push([Math.round(Date.now() - startAt) / 1000, ticket?.epoch ?? null]);
    rate.record(outcome, ticket, detail);
  },
  release: (ticket) => rate.release?.(ticket),
  get ratePerSecond() {
    return rate.ratePerSecond;
  },
};
const result = await runFleet({
  url: () => url,
  rate: traced,
  clients: Number(clients),
  seconds: Number(seconds),
  sampleMs: process.env.EBB_SAMPLE_MS ? Number(process.env.EBB_SAMPLE_MS) : 250,
});
clearInterval(sampler);
const stats = kind === 'shared' ? rate.stats : undefined;
if (kind === 'shared') await rate.close();
await quit();
process.stdout.write(
  `${JSON.stringify({
    ok: result.ok,
    throttled: result.throttled,
    otherStatus: result.otherStatus,
    outcome: result.outcome,
    logical: result.logical,
    stats,
    events,
    trace: result.trace,
    fleetTrace,
    throttles,
    grants,
    startWall: startAt,
    lateMs,
  })}\n`,
);
