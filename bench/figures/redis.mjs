// Issue 13, Must show 4 (for the shared budgets and the shared rate), and Must show 1 as figures:
// what sharing a retry budget or a rate through Redis costs
// at steady state. One process sends 50 requests a second (open loop) to a real node:http server
// for a few seconds with `sharedTokenBudget` on a real redis-server (started here on a free
// 127.0.0.1 port, no persistence, stopped by PID), once per client library, and once with the
// local `tokenBudget` for the latency baseline. Redis's own counters (`INFO commandstats`, reset
// with `CONFIG RESETSTAT` after the first sync) give the commands per request.
// Prints one JSON document on stdout; progress on stderr. `--quick`: 3 s instead of 10 s (the fleet: 12 s
// instead of 25 s).
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { constant, noJitter, pipeline, retrying } from 'ebb';
import { adaptiveRate, tokenBudget } from 'ebb/rate';
import { sharedRate, sharedTokenBudget } from 'ebb/redis';
import { simulateSharedRateCost } from 'ebb/sim';
import { createClient } from 'redis';
import { connectRedis, startRedis } from '../../test/redis/support/redis-server.mjs';

const quick = process.argv.includes('--quick');
const SECONDS = quick ? 3 : 10;
const RATE = 50;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The tests' starter: a free 127.0.0.1 port, its own directory and pid file, no persistence,
// stopped by PID.
const redisServer = await startRedis();
const { port } = redisServer;
const http = createServer((_req, res) => res.writeHead(200).end('ok'));
await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${http.address().port}/`;

const admin = createClient({ url: `redis://127.0.0.1:${port}` });
admin.on('error', () => {});
for (let i = 0; i < 100; i++) {
  try {
    await admin.connect();
    break;
  } catch {
    await sleep(50);
  }
}

async function commandsSinceReset() {
  const info = await admin.info('commandstats');
  let n = 0;
  for (const m of info.matchAll(/^cmdstat_(evalsha|script\|load|eval):calls=(\d+)/gm)) n += Number(m[2]);
  return n;
}

/** 50 requests a second for `seconds`, open loop, with `options` (a budget or a rate); returns latencies (ms) and the count. */
async function load({ rate, ...options }, seconds = SECONDS) {
  const latencies = [];
  const retry = retrying({ backoff: constant({ delayMs: 10, jitter: noJitter, maxAttempts: 3 }), ...options });
  const through = pipeline(rate ? [retry, rate] : [retry]);
  const pending = [];
  const start = performance.now();
  const total = RATE * seconds;
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const t0 = performance.now();
    pending.push(
      through
        .execute(async () => {
          const res = await fetch(url);
          await res.arrayBuffer();
        })
        .then(() => latencies.push(performance.now() - t0)),
    );
  }
  await Promise.all(pending);
  return { requests: total, latencies };
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

const rows = [];
// Warm-up (JIT, the first connections), not measured.
await load({}, 1);
process.stderr.write(`redis figure: local tokenBudget, ${SECONDS} s at ${RATE} r/s\n`);
const baseline = await load({ budget: tokenBudget() });
rows.push({
  subject: 'tokenBudget (local)',
  requests: baseline.requests,
  commandsPerRequest: 0,
  p50Ms: pct(baseline.latencies, 0.5),
  p99Ms: pct(baseline.latencies, 0.99),
});

for (const kind of ['node-redis', 'ioredis']) {
  process.stderr.write(`redis figure: sharedTokenBudget with ${kind}\n`);
  const { client, quit } = await connectRedis(kind, `redis://127.0.0.1:${port}`);
  const budget = sharedTokenBudget({ client, name: `bench-${kind}` });
  await budget.ready();
  await admin.configResetStat();
  const r = await load({ budget });
  await budget.close();
  const commands = await commandsSinceReset();
  rows.push({
    subject: `sharedTokenBudget (${kind})`,
    requests: r.requests,
    commandsPerRequest: commands / r.requests,
    p50Ms: pct(r.latencies, 0.5),
    p99Ms: pct(r.latencies, 0.99),
  });
  quit();
}

// The shared rate (issue 13, Must show 4 for the rate): the same open loop, paced by a sharedRate
// whose fleet rate (100 r/s, this process alone) is above the offered 50 r/s, so the figure is the
// cost of leasing, not of waiting; the local baseline is an adaptiveRate at the same rate.
process.stderr.write(`redis figure: local adaptiveRate, ${SECONDS} s at ${RATE} r/s\n`);
const rateBaseline = await load({ rate: adaptiveRate({ initialRatePerSecond: 2 * RATE }) });
rows.push({
  subject: 'adaptiveRate (local)',
  requests: rateBaseline.requests,
  commandsPerRequest: 0,
  p50Ms: pct(rateBaseline.latencies, 0.5),
  p99Ms: pct(rateBaseline.latencies, 0.99),
});
for (const kind of ['node-redis', 'ioredis']) {
  process.stderr.write(`redis figure: sharedRate with ${kind}\n`);
  const { client, quit } = await connectRedis(kind, `redis://127.0.0.1:${port}`);
  const rate = sharedRate({ client, name: `bench-rate-${kind}`, initialRatePerSecond: 2 * RATE });
  await rate.ready();
  await admin.configResetStat();
  const r = await load({ rate });
  const stats = rate.stats;
  await rate.close();
  const commands = await commandsSinceReset();
  rows.push({
    subject: `sharedRate (${kind})`,
    requests: r.requests,
    commandsPerRequest: commands / r.requests,
    p50Ms: pct(r.latencies, 0.5),
    p99Ms: pct(r.latencies, 0.99),
    fallbacks: stats.fallbacks,
  });
  quit();
}

// Issue 13, Must show 1, as figures: 5 processes × 10 loops against nginx limit_req 50 r/s
// (burst 5), once through one sharedRate (a sixth process joins at 60 % of the run), once with an
// adaptiveRate in each process. The same run as test/redis/fleet-rate.test.ts, which asserts it.
let fleet = null;
if (existsSync('/usr/sbin/nginx')) {
  const { startLimiter } = await import('../../test/rate/support/limiters.mjs');
  const { runRateFleet, summarize } = await import('../../test/redis/support/rate-fleet.mjs');
  const FLEET_S = quick ? 12 : 25;
  const JOIN_S = Math.round(FLEET_S * 0.6);
  const LIMIT = 50;
  const nginx = await startLimiter('nginx', { ratePerSecond: LIMIT, burst: 5 });
  try {
    const five = Array.from({ length: 5 }, () => ({ atS: 0, seconds: FLEET_S }));
    const figures = (reports, label) => {
      const convergedAtS = summarize(reports, LIMIT, { from: 0, to: FLEET_S }).convergedAtS ?? FLEET_S;
      const x = summarize(reports, LIMIT, { from: convergedAtS, to: FLEET_S });
      const row = {
        convergedAtS,
        acceptedPerSecond: x.acceptedPerSecond,
        percentOfLimit: 100 * x.ofLimit,
        throttledPercent: 100 * x.throttledShare,
        jain: x.jain,
      };
      process.stderr.write(`redis figure: ${label} ${JSON.stringify(row)}; ok/s ${JSON.stringify(x.ok)}\n`);
      return row;
    };
    process.stderr.write(`redis figure: fleet, 5 processes + 1 joining, one sharedRate, ${FLEET_S} s\n`);
    const shared = await runRateFleet({
      url: nginx.url('/full'),
      redisUrl: `redis://127.0.0.1:${port}`,
      name: 'bench-fleet',
      kind: 'shared',
      members: [...five, { atS: JOIN_S, seconds: FLEET_S - JOIN_S }],
      initialRatePerSecond: 2 * LIMIT,
    });
    const beforeJoin = summarize(shared, LIMIT, { from: 3, to: JOIN_S });
    const afterJoin = summarize(shared, LIMIT, { from: JOIN_S + 2, to: FLEET_S });
    const joinWindow = summarize(shared, LIMIT, { from: JOIN_S, to: JOIN_S + 2 });
    process.stderr.write(`redis figure: fleet, 5 processes, each its own adaptiveRate, ${FLEET_S} s\n`);
    const local = await runRateFleet({
      url: nginx.url('/full'),
      name: 'bench-local',
      kind: 'local',
      members: five,
      initialRatePerSecond: (2 * LIMIT) / 5,
    });
    const commands = shared.reduce((a, r) => a + r.stats.commands, 0);
    const requests = shared.reduce((a, r) => a + r.logical, 0);
    fleet = {
      'one sharedRate': {
        ...figures(shared, 'shared'),
        jainBeforeJoin: beforeJoin.jain,
        jainAfterJoin: afterJoin.jain,
        throttledAtJoin: joinWindow.throttled.slice(JOIN_S, JOIN_S + 2).reduce((a, b) => a + b, 0),
        commandsPerRequest: commands / requests,
      },
      'an adaptiveRate each': figures(local, 'local'),
    };
  } finally {
    await nginx.stop();
  }
}

// The SRE throttle shared by a fleet, beside a throttle in each process: nginx limit_req 20 r/s
// (burst 5), K = 2, open loops of one attempt each at 3 × the limit in all. Two shapes: four
// long-lived processes (15 r/s each), where the book's rule bounds the load either way (about
// K × what is accepted), and a churn of short-lived processes (each 2 s at 15 r/s, a new one every
// 0.5 s, 4 alive at once: serverless invocations), where a process with its own throttle starts
// with empty counts and sends everything until its own requests are refused. The same processes
// as test/redis/throttle-fleet.test.ts, which asserts the shared case.
let throttle = null;
if (existsSync('/usr/sbin/nginx')) {
  const { startLimiter } = await import('../../test/rate/support/limiters.mjs');
  const { runRateFleet } = await import('../../test/redis/support/rate-fleet.mjs');
  const LIMIT = 20;
  const K = 2;
  const LONG_S = quick ? 8 : 12;
  const CHURN = quick ? 8 : 16;
  const nginx = await startLimiter('nginx', { ratePerSecond: LIMIT, burst: 5 });
  const sum = (xs) => xs.reduce((a, b) => a + (b ?? 0), 0);
  const figures = (reports, seconds) => {
    const asked = sum(reports.map((r) => sum(r.asked)));
    const local = sum(reports.map((r) => sum(r.local)));
    const sent = sum(reports.map((r) => sum(r.sent)));
    const ok = sum(reports.map((r) => sum(r.ok)));
    // A process's first second: what it sent of what it asked (a fresh local throttle sends all).
    const firstAsked = sum(reports.map((r) => r.asked[0]));
    const firstSent = sum(reports.map((r) => r.sent[0]));
    return {
      asked,
      rejectedLocallyPercent: (100 * local) / asked,
      sent,
      acceptedPerSecond: ok / seconds,
      sentPerAccepted: sent / ok,
      throttledPercentOfSent: (100 * (sent - ok)) / sent,
      firstSecondSentPercent: (100 * firstSent) / firstAsked,
      errors: sum(reports.map((r) => sum(Object.values(r.errors)))),
    };
  };
  try {
    throttle = {};
    for (const shape of ['long-lived', 'churn']) {
      const members =
        shape === 'long-lived'
          ? Array.from({ length: 4 }, () => ({ atS: 0, seconds: LONG_S }))
          : Array.from({ length: CHURN }, (_, i) => ({ atS: i * 0.5, seconds: 2 }));
      const seconds = shape === 'long-lived' ? LONG_S : (CHURN - 1) * 0.5 + 2;
      for (const kind of ['shared', 'local']) {
        process.stderr.write(`redis figure: SRE throttle, ${shape}, ${kind}, ${members.length} processes\n`);
        const reports = await runRateFleet({
          process: 'throttle',
          url: nginx.url('/full'),
          redisUrl: `redis://127.0.0.1:${port}`,
          name: `bench-sre-${shape}`,
          kind,
          clients: 15,
          members,
          extra: [K, 60_000],
        });
        const row = figures(reports, seconds);
        process.stderr.write(`redis figure: ${JSON.stringify(row)}\n`);
        throttle[`${shape}, ${kind === 'shared' ? 'one sharedAdaptiveThrottle' : 'an adaptiveThrottle each'}`] = row;
      }
    }
  } finally {
    await nginx.stop();
  }
}

// Issue 13, Must show 6's figure: the leasing protocol's cost for 1,000 processes (ebb/sim's
// model of it: renewals, lapsed-lease asks, throttle reports), against the fleet's request rate.
const simulated = [10, 100, 1000, 2000, 5000, 10_000, 50_000, 100_000].map((requestsPerSecond) => {
  const r = simulateSharedRateCost({ processes: 1000, requestsPerSecond, durationMs: quick ? 20_000 : 60_000 });
  return {
    requestsPerSecond,
    commandsPerSecond: r.commandsPerSecond,
    commandsPerRequest: r.commandsPerRequest,
    meanLiveLeases: r.meanLiveLeases,
  };
});
for (const r of simulated) {
  process.stderr.write(
    `simulated, 1000 processes: ${String(r.requestsPerSecond).padStart(6)} r/s -> ${r.commandsPerSecond.toFixed(1)} commands/s (${r.commandsPerRequest.toFixed(4)} a request), ${r.meanLiveLeases.toFixed(0)} live leases\n`,
  );
}

await admin.destroy();
await new Promise((resolve) => http.close(resolve));
await redisServer.stop();

for (const r of rows) {
  process.stderr.write(
    `${r.subject.padEnd(32)} ${String(r.requests).padStart(5)} requests  ${r.commandsPerRequest.toFixed(4)} commands/request  p50 ${r.p50Ms.toFixed(1)} ms  p99 ${r.p99Ms.toFixed(1)} ms\n`,
  );
}
process.stdout.write(
  `${JSON.stringify({ ratePerSecond: RATE, seconds: SECONDS, results: rows, fleet, throttle, simulated })}\n`,
);
