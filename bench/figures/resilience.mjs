// A circuit breaker under an outage, against real node:http servers on 127.0.0.1.
//
// Each subject gets its own server, which answers 503 at once for OUTAGE ms from the start and
// 200 afterwards. WORKERS workers call it in a loop (a call, then THINK_MS of think time) for
// OUTAGE + AFTER ms. Each call is one operation with up to 2 attempts (50 ms backoff, full
// jitter), through:
//   - none:       ebb's retrying() alone;
//   - ebb:        ebb's pipeline([retrying(), circuitBreaker()]) (5 consecutive failures; open
//                 period 1 s doubling to 8 s, equal jitter; 1 probe; a refusal ends the call);
//   - cockatiel:  cockatiel 3's wrap(retry, circuitBreaker) with the same thresholds
//                 (ConsecutiveBreaker(5), halfOpenAfter: ExponentialBackoff 1 s → 8 s).
// Subjects run one after another (one at a time on a shared machine).
//
// Measured from the server's own arrival times and the breakers' state-change events:
//   duringOutage     requests the dead server received;
//   openings         open periods during the outage;
//   firstPeriod      requests arriving during the first open period (calls admitted before it
//                    opened, still in flight);
//   maxPerLaterPeriod the most requests any later open period let through (target: 1 probe);
//   periodsMs        each open period as the breaker reported it (ebb) or as measured between a
//                    break and the next half-open (cockatiel), rounded;
//   withinBackoff    every ebb period lies in its backoff step's [d/2, d);
//   recoveryMs       from the server's recovery to the breaker closing (no breaker: to the first
//                    success); lastPeriodMs the open period running at recovery; recoveryPeriods =
//                    recoveryMs / lastPeriodMs (target ≤ 2);
//   okPerSecondAfter successful calls per second in the last 3 s.
//
// `node figures/resilience.mjs [--quick] [--outage-ms=N] [--after-ms=N] [--subjects=none,ebb,cockatiel]`
// prints one JSON document on stdout. Default outage 30 s (the figure), then 20 s;
// --quick: 10 s; --max-open-ms caps the open period (default 8000). test/resilience/outage.test.ts runs a shortened outage and asserts on it.
import { once } from 'node:events';
import { createServer } from 'node:http';
import { defaultIsFailure, equalJitter, exponential, fullJitter, pipeline, retrying } from 'ebb';
import { circuitBreaker, isBrokenCircuitError } from 'ebb/resilience';

const arg = (name, fallback) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.slice(name.length + 3)) : fallback;
};
const quick = process.argv.includes('--quick');
const OUTAGE = arg('outage-ms', quick ? 10_000 : 30_000);
const AFTER = arg('after-ms', 20_000);
const WORKERS = 10;
const THINK_MS = 20;
const INITIAL_OPEN = 1_000;
const MAX_OPEN = arg('max-open-ms', 8_000);

async function startServer(t0) {
  const arrivals = [];
  const server = createServer((_req, res) => {
    const t = performance.now() - t0.value;
    arrivals.push(t);
    res.statusCode = t < OUTAGE ? 503 : 200;
    res.end(t < OUTAGE ? 'down' : 'ok');
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, arrivals, url: `http://127.0.0.1:${server.address().port}/` };
}

const get = async (url, signal) => {
  const res = await fetch(url, { signal });
  await res.arrayBuffer();
  if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
};

async function loadCockatiel() {
  const c = await import('cockatiel-3');
  return c;
}

async function runSubject(name) {
  const t0 = { value: 0 };
  const { server, arrivals, url } = await startServer(t0);
  const events = []; // { at, to, openMs? }
  const oks = [];
  let firstOk = Number.NaN;
  const now = () => performance.now() - t0.value;
  let call;
  if (name === 'none' || name === 'ebb') {
    const breaker =
      name === 'ebb'
        ? circuitBreaker({
            consecutiveFailures: 5,
            openBackoff: exponential({
              initialDelayMs: INITIAL_OPEN,
              maxDelayMs: MAX_OPEN,
              jitter: equalJitter,
              maxAttempts: Infinity,
            }),
            onStateChange: (c) => events.push({ at: now(), to: c.to, openMs: c.openMs }),
          })
        : undefined;
    // The breaker inside the retry; its refusal ends the call at once (cockatiel's setup below
    // does the same: its retry does not handle BrokenCircuitError), so the figure measures the
    // breaker's fail-fast rather than a retry waiting out the open period.
    const retry = retrying({
      backoff: exponential({ initialDelayMs: 50, jitter: fullJitter, maxAttempts: 2 }),
      isFailure: (o) => !isBrokenCircuitError(o.error) && defaultIsFailure(o),
    });
    const through = pipeline(breaker ? [retry, breaker] : [retry]);
    call = () => through.execute(({ signal }) => get(url, signal));
  } else {
    const c = await loadCockatiel();
    const breaker = c.circuitBreaker(c.handleAll, {
      halfOpenAfter: new c.ExponentialBackoff({ initialDelay: INITIAL_OPEN, maxDelay: MAX_OPEN }),
      breaker: new c.ConsecutiveBreaker(5),
    });
    breaker.onBreak(() => events.push({ at: now(), to: 'open' }));
    breaker.onHalfOpen(() => events.push({ at: now(), to: 'half-open' }));
    breaker.onReset(() => events.push({ at: now(), to: 'closed' }));
    const policy = c.wrap(
      c.retry(
        c.handleWhen((e) => !(e instanceof c.BrokenCircuitError)),
        {
          maxAttempts: 1,
          backoff: new c.ExponentialBackoff({ initialDelay: 50 }),
        },
      ),
      breaker,
    );
    call = () => policy.execute(() => get(url));
  }
  t0.value = performance.now();
  const end = OUTAGE + AFTER;
  const worker = async () => {
    while (now() < end) {
      try {
        await call();
        const t = now();
        oks.push(t);
        if (t >= OUTAGE && Number.isNaN(firstOk)) firstOk = t;
      } catch {}
      await new Promise((r) => setTimeout(r, THINK_MS));
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
  server.closeAllConnections?.();
  server.close();

  const during = arrivals.filter((t) => t < OUTAGE);
  const opens = events.filter((e) => e.to === 'open' && e.at < OUTAGE);
  const perPeriod = opens.map((o, i) => {
    const until = i + 1 < opens.length ? opens[i + 1].at : OUTAGE;
    return during.filter((t) => t >= o.at && t < until).length;
  });
  const periodsMs = opens.map((o) => {
    if (o.openMs !== undefined) return Math.round(o.openMs);
    const half = events.find((e) => e.to === 'half-open' && e.at > o.at);
    return half ? Math.round(half.at - o.at) : null;
  });
  const withinBackoff =
    name === 'ebb'
      ? opens.every((o, k) => {
          const d = Math.min(INITIAL_OPEN * 2 ** k, MAX_OPEN);
          return o.openMs >= d / 2 && o.openMs < d;
        })
      : null;
  const closed = events.find((e) => e.to === 'closed' && e.at >= OUTAGE);
  const lastOpen = [...events].reverse().find((e) => e.to === 'open' && e.at < OUTAGE);
  const lastPeriodMs = lastOpen ? (lastOpen.openMs ?? periodsMs.at(-1)) : null;
  const recoveryMs = name === 'none' ? firstOk - OUTAGE : closed ? closed.at - OUTAGE : null;
  return {
    subject: name === 'cockatiel' ? 'cockatiel 3.2.1' : name,
    duringOutage: during.length,
    openings: opens.length,
    firstPeriod: perPeriod[0] ?? null,
    maxPerLaterPeriod: perPeriod.length > 1 ? Math.max(...perPeriod.slice(1)) : null,
    periodsMs: periodsMs.join(' '),
    withinBackoff,
    recoveryMs: recoveryMs === null ? null : Math.round(recoveryMs),
    lastPeriodMs: lastPeriodMs === null ? null : Math.round(lastPeriodMs),
    recoveryPeriods: recoveryMs !== null && lastPeriodMs ? Number((recoveryMs / lastPeriodMs).toFixed(2)) : null,
    okPerSecondAfter: Math.round(oks.filter((t) => t >= end - 3_000).length / 3),
  };
}

const results = [];
const only = process.argv
  .find((x) => x.startsWith('--subjects='))
  ?.slice('--subjects='.length)
  .split(',');
for (const name of only ?? ['none', 'ebb', 'cockatiel']) results.push(await runSubject(name));
process.stdout.write(
  `${JSON.stringify({ outageMs: OUTAGE, afterMs: AFTER, workers: WORKERS, thinkMs: THINK_MS, results })}\n`,
);
