// One process of the exactly-once audit (test/redis/exactly-once.test.ts): the four shared
// structures that keep counts in Redis — a token budget, an AWS retry quota, a ratio budget and
// the SRE throttle's two windows — changed at a steady pace, every change counted here, so that
// the parent can compare what Redis holds with what the processes recorded. Once loaded and
// connected it prints `ready`, reads the fleet's start (ms since the epoch) from stdin, changes
// its structures every 20 ms for `seconds`, closes them (which sends what is still local) and
// prints one JSON line: its counts, the structures' stats and events.
//   node budget-process.mjs <redisUrl> <name> <node-redis|ioredis> <seconds>
// Bounded: 60 s to be told to start; a watchdog ends the process 30 s after its run.
import { isLocalThrottleError } from 'ebb/rate';
import { sharedAdaptiveThrottle, sharedAwsRetryQuota, sharedRatioBudget, sharedTokenBudget } from 'ebb/redis';
import { readyForStart } from './rate-fleet.mjs';
import { connectRedis } from './redis-server.mjs';

const [redisUrl, name, library, seconds] = process.argv.slice(2);
const watchdog = setTimeout(() => process.exit(3), 60_000);
watchdog.unref();
const { client, quit } = await connectRedis(library, redisUrl);
const events = [];
const onEvent = (e) => events.push({ type: e.type, key: e.key, field: e.field });
// Redis's answer may take 100 ms before the structure falls back (the default commandTimeoutMs).
const shared = { client, name, commandTimeoutMs: 100, onEvent };
const token = sharedTokenBudget({ ...shared, maxTokens: 1000 });
const quota = sharedAwsRetryQuota({ ...shared, capacity: 100_000 });
// A window far longer than the run: nothing expires while the parent audits.
const ratio = sharedRatioBudget({ ...shared, percentCanRetry: 0.5, minRetriesPerSecond: 0, ttlMs: 60_000 });
const throttle = sharedAdaptiveThrottle({ ...shared, windowMs: 60_000 });
const all = [token, quota, ratio, throttle];
await Promise.all(all.map((s) => s.ready()));
const start = await readyForStart();
watchdog.refresh();
const wait = start - Date.now();
if (wait > 0) await new Promise((r) => setTimeout(r, wait));
const counts = { failures: 0, quotaTaken: 0, requests: 0, retries: 0, asked: 0, accepted: 0, rejectedLocally: 0 };
const transient = new Error('503');
const end = Date.now() + Number(seconds) * 1000;
for (let i = 0; Date.now() < end && i < 10_000; i++) {
  token.recordFailure();
  counts.failures++;
  if (quota.tryAcquireRetry(transient)) counts.quotaTaken++;
  ratio.recordRequest();
  counts.requests++;
  if (i % 3 === 0 && ratio.tryAcquireRetry(transient)) counts.retries++;
  // Every request of the fleet succeeds, so a local rejection is the throttle's mistake: counted,
  // and the parent asserts there is none. A rejected request is still asked (the window counts it).
  try {
    throttle.acquire();
    counts.asked++;
    throttle.record('success');
    counts.accepted++;
  } catch (error) {
    if (!isLocalThrottleError(error)) throw error;
    counts.asked++;
    counts.rejectedLocally++;
  }
  await new Promise((r) => setTimeout(r, 20));
}
// Until every structure is shared again (bounded: 10 s), then close(), which sends what is still
// local — each call bounded by commandTimeoutMs.
for (let i = 0; i < 100 && !all.every((s) => s.mode === 'shared'); i++) await new Promise((r) => setTimeout(r, 100));
await Promise.all(all.map((s) => s.close()));
const stats = Object.fromEntries(['token', 'quota', 'ratio', 'throttle'].map((k, i) => [k, all[i].stats]));
await quit();
process.stdout.write(`${JSON.stringify({ counts, stats, events })}\n`);
