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
//              overloaded): the budget must hold the extra requests to its share — with 4 workers
//              (32 calls: its floor of 1 a second binds) and with OVERLOAD_WORKERS (enough calls
//              that 5 % of them is more than the floor: its share binds).
// Then the same server with SPREAD fast responses: each takes BASE_MS × e^(σZ), Z standard
// normal, σ = SIGMA — a log-normal with median BASE_MS, the shape of one server's latencies in
// "The Tail at Scale" (Dean and Barroso, CACM 2013, table 1: p50 1 ms, p95 5 ms, p99 10 ms,
// which σ = 1 fits at both points) — and a seeded 5 % that take 20 × their own draw
// (docs/resilience.md works out why hedging can meet the target here and not on the narrow
// server above):
//   spread: none              plain calls, SPREAD_WORKERS workers, SPREAD_SECONDS;
//   spread: hedged (defaults) hedging() with every default: the learned p95, hedgeBudget();
//   spread: hedged (learned p95, budget 10 %)  the same delay with room in the budget: the p95
//              delay needs 5 % on average, as much as the default budget grants.
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
// `node figures/slow-tail.mjs [--quick] [--seconds=N] [--spread-seconds=N] [--seed=N] [--only=spread]`
// prints one JSON document. Default 8 s a narrow phase, and 30 s a spread one measured after 10 s
// of warm-up (--quick: 3 s; 6 s after 2), seed 12345; --only=spread runs the spread phases alone.
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import { seeded } from 'ebb';
import { hedgeBudget, hedging } from 'ebb/resilience';
import { forkServer, listenForParent } from '../lib/child-server.mjs';

const arg = (name, fallback) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.slice(name.length + 3)) : fallback;
};
const QUICK = process.argv.includes('--quick');
const SECONDS = arg('seconds', QUICK ? 3 : 8);
// The spread phases need more calls for a p99 (2,000 calls: 20 above it): 8 workers, 30 s
// measured after 10 s of warm-up.
const SPREAD_SECONDS = arg('spread-seconds', QUICK ? 6 : 30);
const ONLY_SPREAD = process.argv.includes('--only=spread');
// The server's draws (which responses are slow) start from this seed in every phase: phases are
// compared on the same draws, and runs with other seeds on other draws.
const SEED = arg('seed', 12345);
const BASE_MS = 50;
const WORKERS = 4;
const OVERLOAD_WORKERS = 40;
const SPREAD_WORKERS = 8;
const SIGMA = 1;

if (process.argv.includes('--serve')) {
  // The child: the slow-tail server; GET /stats?seed=N&sigma=S returns and resets its counts,
  // restarts its draws from seed N, so every phase of a run meets the same sequence of slow
  // responses, and sets the fast responses' spread σ (0: all BASE_MS); POST /all-slow makes
  // every response slow, until the next /stats. It tells its parent the port, and exits when
  // the parent goes.
  // ebb's seeded generator: a first version drew from a 31-bit LCG, whose successive draws are
  // correlated — with three draws a response (slow or not, then two for the spread), 7.5 % of
  // the responses came out slow for a 5 % share.
  let rand = seeded(12345);
  let allSlow = false;
  let sigma = 0;
  // e^(σZ), Z by Box–Muller from two draws (1 − u keeps the logarithm finite).
  const spread = () =>
    sigma === 0 ? 1 : Math.exp(sigma * Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand()));
  let cutOff = 0;
  let served = 0;
  let slowServed = 0;
  const server = createServer((req, res) => {
    if (req.url.startsWith('/stats')) {
      const params = new URL(req.url, 'http://x').searchParams;
      rand = seeded(Number(params.get('seed') ?? 12345));
      sigma = Number(params.get('sigma') ?? 0);
      allSlow = false;
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
    const timer = setTimeout(() => res.end('ok'), BASE_MS * spread() * (slow ? 20 : 1));
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
  const stats = async (sigma = 0) => (await fetch(`${url}stats?seed=${SEED}&sigma=${sigma}`)).json();

  const get = async (signal) => {
    const res = await fetch(url, { signal });
    await res.arrayBuffer();
    return res.status;
  };
  const q = (sorted, p) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] * 10) / 10;

  async function phase(
    subject,
    hedger,
    { share = 0.05, workers = WORKERS, seconds = SECONDS, warmupSeconds = 0, sigma = 0, allSlow = false } = {},
  ) {
    await stats(sigma); // resets the server's counts, its draws and its mode
    if (allSlow) await fetch(`${url}all-slow`, { method: 'POST' }).then((r) => r.arrayBuffer());
    const latencies = [];
    // Calls begun in the warm-up run (the hedger learns its delay, the budget's window fills) but
    // are not measured: the phase measures a client in its steady state.
    const t0 = performance.now() + warmupSeconds * 1000;
    let atStart = { calls: 0, hedges: 0 };
    const warm =
      hedger && warmupSeconds > 0 ? setTimeout(() => (atStart = { ...hedger.stats }), warmupSeconds * 1000) : undefined;
    let load0 = loadavg()[0];
    const loadMark = setTimeout(() => (load0 = loadavg()[0]), warmupSeconds * 1000);
    const worker = async () => {
      while (performance.now() - t0 < seconds * 1000) {
        const start = performance.now();
        try {
          await (hedger ? hedger.run(({ signal }) => get(signal), { method: 'GET' }) : get(undefined));
          if (start >= t0) latencies.push(performance.now() - start);
        } catch {}
      }
    };
    // The hedger's counts as the budget's last 10-s window opens, for the extra requests of a
    // window of steady load (the whole phase's count also holds the floor's first window).
    let atWindow;
    const mark =
      hedger && seconds > 10
        ? setTimeout(() => (atWindow = { ...hedger.stats }), (warmupSeconds + seconds - 10) * 1000)
        : undefined;
    await Promise.all(Array.from({ length: workers }, worker));
    clearTimeout(mark);
    clearTimeout(warm);
    clearTimeout(loadMark);
    latencies.sort((a, b) => a - b);
    // The losers' sockets close a moment after the winner settles: let the server see them go.
    await new Promise((r) => setTimeout(r, 200));
    const { served, slowServed, cutOff } = await stats(sigma);
    // On the narrow server a call is slow when it took the slow time; the spread one has no
    // such line.
    const fast = latencies.filter((ms) => ms < 0.9 * 20 * BASE_MS);
    const slowCalls = latencies.length - fast.length;
    const narrow = sigma === 0;
    return {
      subject,
      workers,
      seconds,
      sigma,
      loadAverage: [Math.round(load0 * 100) / 100, Math.round(loadavg()[0] * 100) / 100],
      calls: latencies.length,
      p50Ms: q(latencies, 0.5),
      p95Ms: q(latencies, 0.95),
      p99Ms: q(latencies, 0.99),
      warmupSeconds,
      // Hedges per call begun after the warm-up.
      extraRequests: hedger
        ? Math.round(((hedger.stats.hedges - atStart.hedges) / (hedger.stats.calls - atStart.calls)) * 1000) / 1000
        : 0,
      serverRequests: served,
      serverSlowShare: Math.round((slowServed / served) * 1000) / 1000,
      callsStillSlowShare: narrow ? Math.round((slowCalls / latencies.length) * 1000) / 1000 : null,
      fastP99Ms: narrow ? q(fast, 0.99) : null,
      cutOffByClient: cutOff,
      learnedDelayMs: hedger ? Math.round(hedger.delayMs * 10) / 10 : null,
      // The last 10 s: calls begun and hedges sent in them, against the budget's cap there (the
      // larger of its share of the calls and 1 a second over its window).
      lastWindow: atWindow
        ? {
            calls: hedger.stats.calls - atWindow.calls,
            hedges: hedger.stats.hedges - atWindow.hedges,
            cap: Math.max(share * (hedger.stats.calls - atWindow.calls), 10),
          }
        : null,
    };
  }

  const results = [];
  if (!ONLY_SPREAD) {
    results.push(await phase('none'));
    results.push(await phase('hedged (defaults)', hedging()));
    results.push(await phase('hedged (learned p99)', hedging({ percentile: 0.99 })));
    results.push(await phase('hedged (150 ms)', hedging({ delayMs: 3 * BASE_MS })));
    results.push(await phase('hedged (200 ms)', hedging({ delayMs: 4 * BASE_MS })));
    results.push(
      await phase(
        'hedged (100 ms, budget 10 %)',
        hedging({ delayMs: 2 * BASE_MS, budget: hedgeBudget({ percent: 0.1 }) }),
        { share: 0.1 },
      ),
    );
    results.push(
      await phase('overload (all slow), hedged (150 ms)', hedging({ delayMs: 3 * BASE_MS }), { allSlow: true }),
    );
    // 20 s: the last 10 s (the budget's window) are past the first window, where the floor
    // grants 10 hedges to the first few calls.
    results.push(
      await phase(
        `overload (all slow), ${OVERLOAD_WORKERS} workers, hedged (150 ms)`,
        hedging({ delayMs: 3 * BASE_MS }),
        {
          allSlow: true,
          workers: OVERLOAD_WORKERS,
          seconds: QUICK ? SECONDS : 20,
        },
      ),
    );
  }
  const spread = { workers: SPREAD_WORKERS, seconds: SPREAD_SECONDS, warmupSeconds: QUICK ? 2 : 10, sigma: SIGMA };
  const spreadNone = await phase('spread: none', undefined, spread);
  results.push(spreadNone);
  results.push(await phase('spread: hedged (defaults)', hedging(), spread));
  results.push(
    await phase('spread: hedged (learned p95, budget 10 %)', hedging({ budget: hedgeBudget({ percent: 0.1 }) }), {
      ...spread,
      share: 0.1,
    }),
  );
  for (const r of results) {
    // Over the p95 of the unhedged phase of the same server.
    const none = r.sigma === 0 ? results[0] : spreadNone;
    r.p99OverOwnP95 = Math.round((r.p99Ms / r.p95Ms) * 100) / 100;
    r.p99OverNoneP95 = Math.round((r.p99Ms / none.p95Ms) * 100) / 100;
  }
  child.disconnect();
  process.stdout.write(
    `${JSON.stringify({ baseMs: BASE_MS, slowShare: 0.05, slowFactor: 20, spreadSigma: SIGMA, seed: SEED, results })}\n`,
  );
}
