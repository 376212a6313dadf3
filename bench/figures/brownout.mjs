// A brownout against a real node:http server on 127.0.0.1: the server has a fixed capacity of
// CAPACITY requests at a time, each taking BASE_MS; a request that arrives while CAPACITY or more
// are in progress takes 10 × BASE_MS (the "latency rises 10× when overloaded" of issue 14).
// Capacity is CAPACITY / BASE_MS requests per ms (8 / 20 ms = 400 per second).
//
// Clients send an open-loop load (a request every 1000 / rate ms, whatever came back) through
// retry() with one attempt (no retries: the brownout, not retry amplification, is measured):
//   unloaded      no limit, at half the capacity — the reference p99;
//   none          no limit, at 1.5 × capacity;
//   aimd/vegas/gradient2  a concurrencyLimit with that algorithm (queue 16, wait ≤ 2 × BASE_MS), 1.5 × capacity.
// Latency is end to end (queue wait included) of successful calls; goodput = successes per
// second / capacity; maxInflight is the most requests the server held at once.
//
// `node figures/brownout.mjs [--quick] [--seconds=N]` prints one JSON document. Default 6 s a
// subject (--quick: 3 s). Client and server share one process (and one event loop): the figures
// include that loop's delays, on a machine that may be busy.
import { once } from 'node:events';
import { createServer } from 'node:http';
import { constant, retry } from 'ebb';
import { aimd, concurrencyLimit, gradient2, vegas } from 'ebb/resilience';

const arg = (name, fallback) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.slice(name.length + 3)) : fallback;
};
const SECONDS = arg('seconds', process.argv.includes('--quick') ? 3 : 6);
const CAPACITY = 8;
const BASE_MS = 20;
const CAPACITY_RPS = (CAPACITY * 1000) / BASE_MS;

let inServer = 0;
let maxInServer = 0;
const server = createServer((_req, res) => {
  const overloaded = inServer >= CAPACITY;
  inServer++;
  if (inServer > maxInServer) maxInServer = inServer;
  setTimeout(
    () => {
      inServer--;
      res.end('ok');
    },
    overloaded ? 10 * BASE_MS : BASE_MS,
  );
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const url = `http://127.0.0.1:${server.address().port}/`;

const get = async ({ signal }) => {
  const res = await fetch(url, { signal });
  await res.arrayBuffer();
  if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
};

const quantile = (sorted, q) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : null;

async function phase(subject, rate, limiter) {
  maxInServer = 0;
  const latencies = [];
  let refused = 0;
  let failed = 0;
  const options = { backoff: constant({ delayMs: 0, maxAttempts: 1 }), ...(limiter ? { rate: limiter } : {}) };
  const pending = [];
  const t0 = performance.now();
  const interval = 1000 / rate;
  let sent = 0;
  while (performance.now() - t0 < SECONDS * 1000) {
    const due = t0 + sent * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    sent++;
    const start = performance.now();
    pending.push(
      retry(get, options).then(
        () => latencies.push(performance.now() - start),
        (e) => (e?.name === 'LimitExceededError' ? refused++ : failed++),
      ),
    );
  }
  await Promise.all(pending);
  const elapsed = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  const r = (x) => (x === null ? null : Math.round(x * 10) / 10);
  return {
    subject,
    offeredRps: Math.round(rate),
    goodput: Math.round((latencies.length / elapsed / CAPACITY_RPS) * 100) / 100,
    p50Ms: r(quantile(latencies, 0.5)),
    p99Ms: r(quantile(latencies, 0.99)),
    refused,
    failed,
    maxInflight: maxInServer,
    finalLimit: limiter ? limiter.limit : null,
  };
}

const results = [];
results.push(await phase('unloaded', CAPACITY_RPS / 2));
const overload = CAPACITY_RPS * 1.5;
results.push(await phase('none', overload));
const limited = (algorithm) => concurrencyLimit({ algorithm, maxQueue: 16, maxWaitMs: 2 * BASE_MS });
results.push(await phase('aimd', overload, limited(aimd({ initialLimit: 4, minLimit: 1, timeoutMs: 3 * BASE_MS }))));
results.push(await phase('vegas', overload, limited(vegas({ initialLimit: 4 }))));
results.push(await phase('gradient2', overload, limited(gradient2({ initialLimit: 4, minLimit: 1, maxLimit: 100 }))));
const unloadedP99 = results[0].p99Ms;
for (const row of results) row.p99VsUnloaded = Math.round((row.p99Ms / unloadedP99) * 100) / 100;
server.closeAllConnections?.();
server.close();
process.stdout.write(`${JSON.stringify({ capacity: CAPACITY, baseMs: BASE_MS, seconds: SECONDS, results })}\n`);
