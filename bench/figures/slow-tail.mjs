// Hedging against a slow tail, with a real node:http server on 127.0.0.1: each response takes
// BASE_MS, except a seeded 5 % that take 20 × BASE_MS. WORKERS workers call it in a loop for
// SECONDS per phase:
//   none       plain calls;
//   hedged (defaults)  ebb's hedging() with its defaults: a learned p95 delay, the default budget;
//   hedged     ebb's hedging() with a learned p90 delay (20 samples to learn) and its default
//              budget (hedges ≤ the larger of 5 % of calls and 1 a second, over 10 s). p90, not the default p95: with exactly 5 % of
//              responses slow, the 95th percentile falls at the edge of the slow tail itself;
//   hedged (fixed) ebb's hedging() after a fixed 2 × BASE_MS with a 10 % budget (hedgeBudget
//              percent 0.1): `ebb simulate slow-tail` shows why the learned
//              delay with a 5 % budget cannot cut a 5 % tail — fast calls whose latency jitters
//              past the learned percentile spend the budget the slow ones need;
//   overload   hedged (learned p90, default budget), but every response is slow (the service is overloaded): the budget must
//              hold the extra requests to its share.
// Reported: p50/p95/p99 of call latency, the p99 over the phase's own p95 and over the p95 of
// "none" (the unhedged service), extra requests (hedges / calls), and the responses the
// server saw cut off by their client (the losers' sockets closed mid-response).
//
// The server runs in a child process, so the clients' work cannot delay its timers. A first
// version ran both in one process at 10 ms a response with 8 workers: on a busy 2-core machine a
// 10 ms response took 30–100 ms end to end, and hedging learned the machine's delays (103 ms), not
// the server's tail. At 50 ms (1 s for the slow ones) and 4 workers, the event loop's own delays
// are small beside the service time.
//
// `node figures/slow-tail.mjs [--quick] [--seconds=N]` prints one JSON document. Default 8 s a
// phase (--quick: 3 s).
import { createServer } from 'node:http';
import { hedgeBudget, hedging } from 'ebb/resilience';
import { forkServer, listenForParent } from '../lib/child-server.mjs';

const arg = (name, fallback) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.slice(name.length + 3)) : fallback;
};
const SECONDS = arg('seconds', process.argv.includes('--quick') ? 3 : 8);
const BASE_MS = 50;
const WORKERS = 4;

if (process.argv.includes('--serve')) {
  // The child: the slow-tail server; GET /stats returns and resets its counts, POST /all-slow
  // makes every response slow. It tells its parent the port, and exits when the parent goes.
  let seed = 12345;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  let allSlow = false;
  let cutOff = 0;
  let served = 0;
  const server = createServer((req, res) => {
    if (req.url === '/stats') {
      res.end(JSON.stringify({ served, cutOff }));
      served = 0;
      cutOff = 0;
      return;
    }
    if (req.url === '/all-slow') {
      allSlow = true;
      res.end('ok');
      return;
    }
    served++;
    const slow = allSlow || rand() < 0.05;
    const timer = setTimeout(() => res.end('ok'), slow ? 20 * BASE_MS : BASE_MS);
    res.on('close', () => {
      if (!res.writableFinished) {
        cutOff++;
        clearTimeout(timer);
      }
    });
  });
  listenForParent(server);
} else {
  await main();
}

async function main() {
  const { child, url } = await forkServer(import.meta.url);
  const stats = async () => (await fetch(`${url}stats`)).json();

  const get = async (signal) => {
    const res = await fetch(url, { signal });
    await res.arrayBuffer();
    return res.status;
  };
  const q = (sorted, p) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] * 10) / 10;

  async function phase(subject, hedger, share = 0.05) {
    await stats(); // resets the server's counts
    const latencies = [];
    const t0 = performance.now();
    const worker = async () => {
      while (performance.now() - t0 < SECONDS * 1000) {
        const start = performance.now();
        try {
          await (hedger ? hedger.run(get, { method: 'GET' }) : get(undefined));
          latencies.push(performance.now() - start);
        } catch {}
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));
    latencies.sort((a, b) => a - b);
    // The losers' sockets close a moment after the winner settles: let the server see them go.
    await new Promise((r) => setTimeout(r, 200));
    const { served, cutOff } = await stats();
    return {
      subject,
      calls: latencies.length,
      p50Ms: q(latencies, 0.5),
      p95Ms: q(latencies, 0.95),
      p99Ms: q(latencies, 0.99),
      extraRequests: hedger ? Math.round((hedger.stats.hedges / hedger.stats.calls) * 1000) / 1000 : 0,
      serverRequests: served,
      cutOffByClient: cutOff,
      learnedDelayMs: hedger ? Math.round(hedger.delayMs * 10) / 10 : null,
      // The budget's cap (each phase fits in its 10-s window): the larger of its share of the
      // calls and 1 a second over the window.
      hedgesWithinBudget: hedger ? hedger.stats.hedges <= Math.max(share * hedger.stats.calls, 10) : null,
    };
  }

  const results = [];
  results.push(await phase('none'));
  results.push(await phase('hedged (defaults)', hedging()));
  results.push(await phase('hedged', hedging({ percentile: 0.9 })));
  results.push(
    await phase('hedged (fixed)', hedging({ delayMs: 2 * BASE_MS, budget: hedgeBudget({ percent: 0.1 }) }), 0.1),
  );
  await fetch(`${url}all-slow`, { method: 'POST' }).then((r) => r.arrayBuffer());
  results.push(await phase('overload (all slow), hedged', hedging({ percentile: 0.9 })));
  for (const r of results) {
    r.p99OverOwnP95 = Math.round((r.p99Ms / r.p95Ms) * 100) / 100;
    r.p99OverNoneP95 = Math.round((r.p99Ms / results[0].p95Ms) * 100) / 100;
  }
  child.disconnect();
  process.stdout.write(
    `${JSON.stringify({ baseMs: BASE_MS, slowShare: 0.05, slowFactor: 20, seconds: SECONDS, workers: WORKERS, results })}\n`,
  );
}
