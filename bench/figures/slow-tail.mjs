// Hedging against a slow tail, with a real node:http server on 127.0.0.1: each response takes
// BASE_MS, except a seeded 5 % that take 20 × BASE_MS. WORKERS workers call it in a loop for
// SECONDS per phase:
//   none       plain calls;
//   hedged (defaults)  ebb's hedging() with its defaults: a learned p95 delay, the default budget;
//   hedged (learned p99)  ebb's hedging() with a learned p99 delay and its default budget
//              (hedges ≤ the larger of 5 % of calls and 1 a second, over 10 s): an attempt at a
//              delay just above the fast responses, so that the 5 % budget goes to the slow ones
//              (docs/resilience.md works out why the default p95 cannot do that, and why a
//              learned p99 locks onto the slow responses instead);
//   hedged (3 ×, 4 × BASE_MS)  a fixed delay above the fast responses with the default budget;
//   hedged (2 × BASE_MS, 10 %) ebb's hedging() after a fixed 2 × BASE_MS with a 10 % budget (hedgeBudget
//              percent 0.1): `ebb simulate slow-tail` shows why the learned
//              delay with a 5 % budget cannot cut a 5 % tail — fast calls whose latency jitters
//              past the learned percentile spend the budget the slow ones need;
//   overload   hedged (3 × BASE_MS, default budget), but every response is slow (the service is
//              overloaded): the budget must hold the extra requests to its share.
// Reported: p50/p95/p99 of call latency, the p99 over the phase's own p95 and over the p95 of
// "none" (the unhedged service), extra requests (hedges / calls), the responses the server saw
// cut off by their client (the losers' sockets closed mid-response), the share of the server's
// responses that were slow (the seeded draw: about 5 %, never exactly), and the share of calls
// that still took the slow time (neither hedged nor saved by their hedge): the p99 is cut only
// when that share is under 1 %; and the p99 of the calls faster than that (where a fixed delay
// must sit to leave the budget to the slow calls).
//
// The server runs in a child process, so the clients' work cannot delay its timers. A first
// version ran both in one process at 10 ms a response with 8 workers: on a busy 2-core machine a
// 10 ms response took 30–100 ms end to end, and hedging learned the machine's delays (103 ms), not
// the server's tail. At 50 ms (1 s for the slow ones) and 4 workers, the event loop's own delays
// are small beside the service time.
//
// `node figures/slow-tail.mjs [--quick] [--seconds=N] [--seed=N]` prints one JSON document.
// Default 8 s a phase (--quick: 3 s), seed 12345.
import { createServer } from 'node:http';
import { hedgeBudget, hedging } from 'ebb/resilience';
import { forkServer, listenForParent } from '../lib/child-server.mjs';

const arg = (name, fallback) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.slice(name.length + 3)) : fallback;
};
const SECONDS = arg('seconds', process.argv.includes('--quick') ? 3 : 8);
// The server's draws (which responses are slow) start from this seed in every phase: phases are
// compared on the same draws, and runs with other seeds on other draws.
const SEED = arg('seed', 12345);
const BASE_MS = 50;
const WORKERS = 4;

if (process.argv.includes('--serve')) {
  // The child: the slow-tail server; GET /stats?seed=N returns and resets its counts and restarts
  // its draws from seed N, so every phase of a run meets the same sequence of slow responses;
  // POST /all-slow makes every response slow. It tells its parent the port, and exits when the
  // parent goes.
  let seed = 12345;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  let allSlow = false;
  let cutOff = 0;
  let served = 0;
  let slowServed = 0;
  const server = createServer((req, res) => {
    if (req.url.startsWith('/stats')) {
      seed = Number(new URL(req.url, 'http://x').searchParams.get('seed') ?? seed);
      res.end(JSON.stringify({ served, slowServed, cutOff }));
      served = 0;
      slowServed = 0;
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
    if (slow) slowServed++;
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
  const stats = async () => (await fetch(`${url}stats?seed=${SEED}`)).json();

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
          await (hedger ? hedger.run(({ signal }) => get(signal), { method: 'GET' }) : get(undefined));
          latencies.push(performance.now() - start);
        } catch {}
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));
    latencies.sort((a, b) => a - b);
    // The losers' sockets close a moment after the winner settles: let the server see them go.
    await new Promise((r) => setTimeout(r, 200));
    const { served, slowServed, cutOff } = await stats();
    const fast = latencies.filter((ms) => ms < 0.9 * 20 * BASE_MS);
    const slowCalls = latencies.length - fast.length;
    return {
      subject,
      calls: latencies.length,
      p50Ms: q(latencies, 0.5),
      p95Ms: q(latencies, 0.95),
      p99Ms: q(latencies, 0.99),
      extraRequests: hedger ? Math.round((hedger.stats.hedges / hedger.stats.calls) * 1000) / 1000 : 0,
      serverRequests: served,
      serverSlowShare: Math.round((slowServed / served) * 1000) / 1000,
      callsStillSlowShare: Math.round((slowCalls / latencies.length) * 1000) / 1000,
      fastP99Ms: q(fast, 0.99),
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
  results.push(await phase('hedged (learned p99)', hedging({ percentile: 0.99 })));
  results.push(await phase('hedged (150 ms)', hedging({ delayMs: 3 * BASE_MS })));
  results.push(await phase('hedged (200 ms)', hedging({ delayMs: 4 * BASE_MS })));
  results.push(
    await phase(
      'hedged (100 ms, budget 10 %)',
      hedging({ delayMs: 2 * BASE_MS, budget: hedgeBudget({ percent: 0.1 }) }),
      0.1,
    ),
  );
  await fetch(`${url}all-slow`, { method: 'POST' }).then((r) => r.arrayBuffer());
  results.push(await phase('overload (all slow), hedged (150 ms)', hedging({ delayMs: 3 * BASE_MS })));
  for (const r of results) {
    r.p99OverOwnP95 = Math.round((r.p99Ms / r.p95Ms) * 100) / 100;
    r.p99OverNoneP95 = Math.round((r.p99Ms / results[0].p95Ms) * 100) / 100;
  }
  child.disconnect();
  process.stdout.write(
    `${JSON.stringify({ baseMs: BASE_MS, slowShare: 0.05, slowFactor: 20, seconds: SECONDS, workers: WORKERS, seed: SEED, results })}\n`,
  );
}
