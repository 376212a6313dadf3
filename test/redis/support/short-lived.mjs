// One short-lived process of the "shared budget across lifetimes" test: it makes a few
// requests with retry() against a URL, with a retry budget that is either its own
// (`tokenBudget`, starting full like every new process) or the fleet's (`sharedTokenBudget` in
// Redis), prints one JSON line { requests, attempts, gaveUpForBudget, mode, stats } and exits.
// argv: url redisUrl mode(local|shared) client(node-redis|ioredis) name requests
import { constant, RetryError, retry } from 'ebb';
import { tokenBudget } from 'ebb/rate';
import { sharedTokenBudget } from 'ebb/redis';
import { connectRedis } from './redis-server.mjs';

const [url, redisUrl, mode, clientKind, name, requestsArg] = process.argv.slice(2);
const requests = Number(requestsArg);

const { client, quit } =
  mode === 'shared' ? await connectRedis(clientKind, redisUrl) : { client: undefined, quit: async () => {} };
const budget =
  mode === 'shared'
    ? sharedTokenBudget({ client, name, commandTimeoutMs: Number(process.env.EBB_REDIS_TIMEOUT_MS ?? 2000) })
    : tokenBudget();
if (mode === 'shared') await budget.ready();

let attempts = 0;
let gaveUpForBudget = 0;
for (let i = 0; i < requests; i++) {
  try {
    await retry(
      async () => {
        attempts++;
        const res = await fetch(url);
        await res.arrayBuffer();
        if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
      },
      { backoff: constant({ delayMs: 1, maxAttempts: 3 }), budget },
    );
  } catch (error) {
    if (error instanceof RetryError && error.reason === 'budget') gaveUpForBudget++;
  }
}
const stats = mode === 'shared' ? budget.stats : undefined;
if (mode === 'shared') await budget.close();
await quit();
process.stdout.write(`${JSON.stringify({ requests, attempts, gaveUpForBudget, stats })}\n`);
