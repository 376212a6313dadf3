// A brownout against a real node:http server on 127.0.0.1: the server has a fixed capacity of
// CAPACITY requests at a time, each taking BASE_MS while nobody waits; beyond CAPACITY, requests
// wait in a FIFO queue, and a request that starts while more than CAPACITY others wait takes 10 × BASE_MS
// (the "latency rises 10× when overloaded" of issue 14: an overloaded server thrashes, so its
// throughput collapses to a tenth and its queue grows without bound). A queued request whose
// client went away is dropped. Capacity is CAPACITY / BASE_MS requests per ms (8 / 100 ms = 80 a
// second). `ebb simulate brownout` runs the same server in virtual time.//
// Clients send an open-loop load (a request every 1000 / rate ms, whatever came back) through
// a pipeline of one attempt (no retries: the brownout, not retry amplification, is measured) —
// the limit when there is one, around the attempt's timeout (20 × BASE_MS):
//   unloaded      no limit, at half the capacity — the reference p99;
//   none          no limit, at 1.5 × capacity;
//   aimd/vegas/gradient2/bdp  a concurrencyLimit with that algorithm and no queue of its own (its
//                 default: a request over the limit is refused at once), 1.5 × capacity;
//   bdp (queue 16)  bdp with the queue of the first version (16, wait ≤ 2 × BASE_MS).
// The limit's own queue is part of every latency: under a sustained overload a FIFO queue stays
// full, so each request it admits waited about maxQueue ÷ throughput (16 ÷ 80/s = 200 ms), which
// alone is 2 × the unloaded p99. bdp keeps a quarter of the product waiting in the server
// instead (its gain of 1.25), which keeps the server fed without a queue at the client.
// Every call has a 20 × BASE_MS attempt timeout (a timeout is a failure, not goodput).
// Latency is end to end (queue wait included) of successful calls; goodput = successes per
// second / capacity; maxInflight is the most requests the server held at once.
//
// The server runs in a child process (its own event loop: the clients' work cannot delay its
// timers) and its capacity is set by timers, not CPU. A first version ran both in one process at
// 20 ms a request and 600 requests a second: on a busy 2-core machine even the "unloaded" phase
// saturated the event loop (216 requests in the server at once), so every algorithm saw the
// machine's latency, not the server's. At 100 ms and 120 requests a second the loop's own delays
// (a few ms) are small beside the service time.
//
// `node figures/brownout.mjs [--quick] [--seconds=N]` prints one JSON document. Default 10 s a
// subject (--quick: 3 s).
import { createServer } from 'node:http';
import { pipeline, timeout } from 'ebb';
import { aimd, bdp, concurrencyLimit, gradient2, vegas } from 'ebb/resilience';
import { forkServer, listenForParent } from '../lib/child-server.mjs';

const arg = (name, fallback) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.slice(name.length + 3)) : fallback;
};
const SECONDS = arg('seconds', process.argv.includes('--quick') ? 3 : 10);
const CAPACITY = 8;
const BASE_MS = 100;
const CAPACITY_RPS = (CAPACITY * 1000) / BASE_MS;

if (process.argv.includes('--serve')) {
  // The child: the brownout server, plus GET /stats (the most requests held at once since the
  // last /stats, which resets it). It tells its parent the port, and exits when the parent goes.
  let busy = 0;
  let maxInServer = 0;
  const waiting = [];
  const serve = (res) => {
    busy++;
    const overloaded = waiting.length > CAPACITY;
    setTimeout(
      () => {
        busy--;
        res.end('ok');
        const next = waiting.shift();
        if (next) serve(next);
      },
      overloaded ? 10 * BASE_MS : BASE_MS,
    );
  };
  const server = createServer((req, res) => {
    if (req.url === '/stats') {
      res.end(JSON.stringify({ maxInServer }));
      maxInServer = 0;
      return;
    }
    if (busy < CAPACITY) serve(res);
    else {
      waiting.push(res);
      res.on('close', () => {
        const i = waiting.indexOf(res);
        if (i >= 0) waiting.splice(i, 1);
      });
    }
    if (busy + waiting.length > maxInServer) maxInServer = busy + waiting.length;
  });
  listenForParent(server);
} else {
  await main();
}

async function main() {
  const { child, url } = await forkServer(import.meta.url);
  const maxInServer = async () => (await (await fetch(`${url}stats`)).json()).maxInServer;

  const get = async ({ signal }) => {
    const res = await fetch(url, { signal });
    await res.arrayBuffer();
    if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
  };

  const quantile = (sorted, q) =>
    sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : null;

  async function phase(subject, rate, limiter) {
    await maxInServer(); // resets the server's count
    const latencies = [];
    let refused = 0;
    let failed = 0;
    // One attempt a call: the limit (when there is one) around the attempt's timeout.
    const through = pipeline(limiter ? [limiter, timeout(20 * BASE_MS)] : [timeout(20 * BASE_MS)]);
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
        through.execute(get).then(
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
      maxInflight: await maxInServer(),
      finalLimit: limiter ? limiter.limit : null,
    };
  }

  const results = [];
  results.push(await phase('unloaded', CAPACITY_RPS / 2));
  const overload = CAPACITY_RPS * 1.5;
  results.push(await phase('none', overload));
  const limited = (algorithm, maxQueue = 0, maxWaitMs = BASE_MS) =>
    concurrencyLimit({ algorithm, maxQueue, maxWaitMs });
  results.push(await phase('aimd', overload, limited(aimd({ initialLimit: 4, minLimit: 1, slowCallMs: 3 * BASE_MS }))));
  results.push(await phase('vegas', overload, limited(vegas({ initialLimit: 4 }))));
  results.push(await phase('gradient2', overload, limited(gradient2({ initialLimit: 4, minLimit: 1, maxLimit: 100 }))));
  results.push(await phase('bdp', overload, limited(bdp({ initialLimit: 4 }))));
  results.push(await phase('bdp (queue 16)', overload, limited(bdp({ initialLimit: 4 }), 16, 2 * BASE_MS)));
  const unloadedP99 = results[0].p99Ms;
  for (const row of results) row.p99VsUnloaded = Math.round((row.p99Ms / unloadedP99) * 100) / 100;
  child.disconnect();
  process.stdout.write(`${JSON.stringify({ capacity: CAPACITY, baseMs: BASE_MS, seconds: SECONDS, results })}\n`);
}
