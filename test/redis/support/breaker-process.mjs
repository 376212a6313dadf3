// One member of the fleet-breaker experiments (test/redis/fleet-breaker.test.ts): `loops` closed
// loops, each calling `url` with fetch (one attempt, a 500 ms limit) through a sharedCircuitBreaker
// in Redis (`shared`), its own circuitBreaker (`local`) or nothing (`none`), pausing `pauseMs`
// after each call and 50 ms after a refusal. Once loaded and connected it prints `ready`, reads the
// fleet's start (ms since the epoch) from stdin, runs `seconds`, and prints one JSON line: every
// call's time (ms from the start) and result ('ok', 'failed', 'fleet', 'local' for the refusals of
// each breaker, 'other' for anything else — an error of Redis reaching a caller), the breaker's
// events and stats.
//   node breaker-process.mjs <url> <redisUrl> <name> <shared|local|none> <loops> <seconds> <member> [pauseMs]
// Bounded: a watchdog ends the process 60 s after it started waiting.
import { exponential, noJitter, pipeline } from 'ebb';
import { sharedCircuitBreaker } from 'ebb/redis';
import { circuitBreaker, isBrokenCircuitError } from 'ebb/resilience';
import { readyForStart } from './rate-fleet.mjs';
import { connectRedis } from './redis-server.mjs';

const [url, redisUrl, name, kind, loopsArg, secondsArg, member, pauseArg] = process.argv.slice(2);
if (!url || !['shared', 'local', 'none'].includes(kind)) {
  process.stderr.write(
    'usage: node breaker-process.mjs <url> <redisUrl> <name> <shared|local|none> <loops> <seconds> <member> [pauseMs]\n',
  );
  process.exit(2);
}
const seconds = Number(secondsArg);
const pauseMs = pauseArg === undefined ? 50 : Number(pauseArg);
const watchdog = setTimeout(() => process.exit(3), 60_000 + seconds * 1000);
watchdog.unref();

// The same open periods for both breakers: 1 s doubling to 4 s, no jitter (the figures compare).
const openBackoff = exponential({
  initialDelayMs: 1000,
  multiplier: 2,
  maxDelayMs: 4000,
  jitter: noJitter,
  maxAttempts: Infinity,
});
const rule = { failureRate: 0.5, minCalls: 10, windowMs: 2000 };
const events = [];
let startAt = Number.NaN;
const { client, quit } =
  kind === 'shared' ? await connectRedis('ioredis', redisUrl) : { client: undefined, quit: async () => {} };
const breaker =
  kind === 'shared'
    ? sharedCircuitBreaker({
        client,
        name,
        ...rule,
        openBackoff,
        probeTimeoutMs: 1500,
        // On this shared 2-core machine an event loop alone can stall 100 ms.
        commandTimeoutMs: 250,
        onEvent: (e) => events.push({ type: e.type, t: Date.now() - startAt, field: e.field }),
      })
    : kind === 'local'
      ? circuitBreaker({ ...rule, consecutiveFailures: Infinity, openBackoff, probeTimeoutMs: 1500 })
      : undefined;
const api = pipeline(breaker ? [breaker] : []);

const fleetStart = await readyForStart();
startAt = fleetStart;
clearTimeout(watchdog);
setTimeout(() => process.exit(3), Math.max(0, startAt - Date.now()) + seconds * 1000 + 30_000).unref();
const wait = startAt - Date.now();
if (wait > 0) await new Promise((r) => setTimeout(r, wait));

const calls = [];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const endAt = startAt + seconds * 1000;
async function loop() {
  while (Date.now() < endAt) {
    const t = Date.now() - startAt;
    let result;
    try {
      await api.execute(async () => {
        const res = await fetch(url, { signal: AbortSignal.timeout(500), headers: { 'x-member': member } });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      });
      result = 'ok';
    } catch (error) {
      if (isBrokenCircuitError(error)) result = error.by === 'local' || kind === 'local' ? 'local' : 'fleet';
      else if (
        /HTTP|fetch failed|ECONN|aborted|timeout|terminated|socket/i.test(`${error?.message} ${error?.cause?.message}`)
      )
        result = 'failed';
      else result = `other: ${error?.message}`;
    }
    calls.push([t, result]);
    await sleep(result === 'fleet' || result === 'local' ? 50 : pauseMs);
  }
}
await Promise.all(Array.from({ length: Number(loopsArg) }, loop));
await breaker?.close?.();
await quit();
process.stdout.write(`${JSON.stringify({ member: Number(member), calls, events, stats: breaker?.stats })}\n`);
process.exit(0);
