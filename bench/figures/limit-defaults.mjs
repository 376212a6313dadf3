// What concurrencyLimit()'s defaults, and each algorithm's own defaults, do for servers of a few
// slots and of many, against a real node:http server on 127.0.0.1 (in a child process, its
// capacity set by timers, not by CPU).
//
// The server is the brownout's (figures/brownout.mjs): SLOTS requests at a time, each taking
// SERVICE_MS while nobody waits; beyond SLOTS, requests wait in a FIFO queue, and one that starts
// while more than SLOTS others wait takes 10 × SERVICE_MS (an overloaded server thrashes). Its
// capacity is SLOTS / SERVICE_MS requests per ms. Clients send an open-loop load, one attempt
// each through the limit and a 20 × SERVICE_MS timeout (`pipeline([limit, timeout(ms)])`):
//   unloaded                  no limit, at half the capacity: the reference p99;
//   none                      no limit, at 1.5 × capacity;
//   concurrencyLimit()        the defaults as shipped (bdp(), which starts at 1);
//   aimd(), vegas(), gradient2()  concurrencyLimit({ algorithm }) with that algorithm's own
//                             defaults, nothing tuned (gradient2() was the default before);
//   bdp({ initialLimit: 20 }) bdp() as it started before (20, Netflix's initial limit);
// every limited subject at 1.5 × capacity. Before each phase the server is left to drain (a
// phase without a limit leaves it a backlog of slow requests that would load the next one).
// Reported per subject: goodput (successes a second ÷
// capacity), p50 and p99 of successful calls (end to end), p99 ÷ the unloaded p99, refusals,
// failures (timeouts), the most requests the server held at once, and the final limit.
//
// `node figures/limit-defaults.mjs [--quick] [--seconds=N] [--servers=1x100,2x100,6x100,40x400]
// [--subjects=none,concurrencyLimit(),...]` prints one JSON document. Default 8 s a subject
// (--quick: 3 s); servers of 1, 2 and 6 slots at 100 ms (10, 20 and 60 requests a second) and 40
// slots at 400 ms (100 a second: a larger server at a rate this machine's event loop still keeps
// up with).
import { createServer } from 'node:http';
import { pipeline, timeout } from 'ebb';
import { aimd, bdp, concurrencyLimit, gradient2, isLimitExceededError, vegas } from 'ebb/resilience';
import { forkServer, listenForParent } from '../lib/child-server.mjs';

const argOf = (name) => process.argv.find((x) => x.startsWith(`--${name}=`))?.slice(name.length + 3);
const SECONDS = Number(argOf('seconds') ?? (process.argv.includes('--quick') ? 3 : 8));
const SERVERS = (argOf('servers') ?? '1x100,2x100,6x100,40x400').split(',').map((s) => {
  const [slots, serviceMs] = s.split('x').map(Number);
  return { slots, serviceMs };
});
const SUBJECTS = {
  none: () => undefined,
  'concurrencyLimit()': () => concurrencyLimit(),
  'aimd()': () => concurrencyLimit({ algorithm: aimd() }),
  'vegas()': () => concurrencyLimit({ algorithm: vegas() }),
  'gradient2()': () => concurrencyLimit({ algorithm: gradient2() }),
  'bdp({ initialLimit: 20 })': () => concurrencyLimit({ algorithm: bdp({ initialLimit: 20 }) }),
};
const chosen = argOf('subjects')?.split(',') ?? Object.keys(SUBJECTS);

if (process.argv.includes('--serve')) {
  // The child: one server per --slots/--service-ms, plus GET /stats (the most requests held at
  // once since the last /stats, which resets it).
  const slots = Number(argOf('slots'));
  const serviceMs = Number(argOf('service-ms'));
  let busy = 0;
  let maxInServer = 0;
  const waiting = [];
  const serve = (res) => {
    busy++;
    const overloaded = waiting.length > slots;
    setTimeout(
      () => {
        busy--;
        res.end('ok');
        const next = waiting.shift();
        if (next) serve(next);
      },
      overloaded ? 10 * serviceMs : serviceMs,
    );
  };
  const server = createServer((req, res) => {
    if (req.url === '/stats') {
      res.end(JSON.stringify({ maxInServer, inServer: busy + waiting.length }));
      maxInServer = 0;
      return;
    }
    if (busy < slots) serve(res);
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
  const out = [];
  for (const { slots, serviceMs } of SERVERS) {
    const { child, url } = await forkServer(import.meta.url, [`--slots=${slots}`, `--service-ms=${serviceMs}`]);
    out.push({ slots, serviceMs, results: await measure(url, slots, serviceMs) });
    child.disconnect();
  }
  process.stdout.write(`${JSON.stringify({ seconds: SECONDS, servers: out })}\n`);
}

async function measure(url, slots, serviceMs) {
  const capacityRps = (slots * 1000) / serviceMs;
  const maxInServer = async () => (await (await fetch(`${url}stats`)).json()).maxInServer;
  const get = async ({ signal }) => {
    const res = await fetch(url, { signal });
    await res.arrayBuffer();
    if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
  };
  const quantile = (sorted, q) =>
    sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : null;

  /** Waits (up to 60 s) until the server holds nothing: a phase's backlog must not load the next. */
  const drained = async () => {
    const until = performance.now() + 60_000;
    while (performance.now() < until) {
      const { inServer } = await (await fetch(`${url}stats`)).json();
      if (inServer === 0) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  async function phase(subject, rate, limiter) {
    await drained();
    await maxInServer(); // resets the server's count
    const latencies = [];
    let refused = 0;
    let failed = 0;
    // One attempt, bounded at 20 × the service time; a refusal is not retried.
    const limit = timeout(20 * serviceMs);
    const call = pipeline(limiter ? [limiter, limit] : [limit]);
    const pending = [];
    const t0 = performance.now();
    const interval = 1000 / rate;
    let sent = 0;
    while (performance.now() - t0 < SECONDS * 1000) {
      const wait = t0 + sent * interval - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      sent++;
      const start = performance.now();
      pending.push(
        call.execute(get).then(
          () => latencies.push(performance.now() - start),
          (e) => (isLimitExceededError(e) ? refused++ : failed++),
        ),
      );
    }
    await Promise.all(pending);
    const elapsed = (performance.now() - t0) / 1000;
    latencies.sort((a, b) => a - b);
    const r = (x) => (x === null ? null : Math.round(x * 10) / 10);
    return {
      subject,
      goodput: Math.round((latencies.length / elapsed / capacityRps) * 100) / 100,
      p50Ms: r(quantile(latencies, 0.5)),
      p99Ms: r(quantile(latencies, 0.99)),
      refused,
      failed,
      maxInServer: await maxInServer(),
      finalLimit: limiter ? limiter.limit : null,
    };
  }

  const results = [await phase('unloaded', capacityRps / 2)];
  for (const name of chosen) results.push(await phase(name, capacityRps * 1.5, SUBJECTS[name]()));
  const unloadedP99 = results[0].p99Ms;
  for (const row of results) {
    row.p99VsUnloaded = row.p99Ms === null ? null : Math.round((row.p99Ms / unloadedP99) * 100) / 100;
  }
  return results;
}
