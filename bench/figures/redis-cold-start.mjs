// Issue 13, Must show 1 on a loaded machine: the shared rate's cold start and its 429s, with the
// machine's load average beside each run. The fleet of test/redis/fleet-rate.test.ts — 5 Node.js
// processes × 10 closed loops through one sharedRate (initial rate 100 r/s) against nginx
// limit_req 50 r/s, burst 5; a sixth process joins at s 14 of 24 — run `--runs` times, each with
// `--burn` CPU-burning child processes started first (busy loops, each bounded to the run's length
// plus 30 s, killed by PID at the end) so that the fleet competes for the CPU as it does on a busy
// machine. Redis (no persistence) and nginx are started here on free 127.0.0.1 ports and stopped
// by PID. Per run: the convergence second (the first of three in a row each accepting ≥ 90 % of
// the limit), from max(that, 3) on: accepted r/s, the 429 share, Jain's index; the sixth's 429s
// while joining; where the 429s were (each one's second and its fleet epoch), and the fleet's
// changes of rate as Redis held them (polled every 50 ms). Prints one JSON document on stdout,
// progress on stderr.
//   node bench/figures/redis-cold-start.mjs [--runs=3] [--burn=8] [--warmup=20]
// (`--warmup`: seconds the burners run before the fleet starts, so the load average has risen.)
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { startLimiter } from '../../test/rate/support/limiters.mjs';
import { onFleetClock, runRateFleet, summarize, total } from '../../test/redis/support/rate-fleet.mjs';
import { startRedis } from '../../test/redis/support/redis-server.mjs';

const option = (name, fallback) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a === undefined ? fallback : Number(a.slice(name.length + 3));
};
const RUNS = option('runs', 3);
const BURN = option('burn', 8);
const WARMUP_S = option('warmup', 20);
const LIMIT = 50;
const SECONDS = 24;
const JOIN_AT_S = 14;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const redisServer = await startRedis();
const { port } = redisServer;
const nginx = await startLimiter('nginx', { ratePerSecond: LIMIT, burst: 5 });
const poll = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 0 });
const burners = [];
const runs = [];
try {
  for (let run = 0; run < RUNS; run++) {
    const bound = WARMUP_S + SECONDS + 30;
    for (let i = 0; i < BURN; i++) {
      burners.push(
        spawn(process.execPath, ['-e', `const end = Date.now() + ${bound * 1000}; while (Date.now() < end) {}`], {
          stdio: 'ignore',
        }),
      );
    }
    process.stderr.write(`cold start run ${run + 1}/${RUNS}: ${BURN} burners, ${WARMUP_S} s warm-up\n`);
    await sleep(WARMUP_S * 1000);
    const loadBefore = loadavg()[0];
    const name = `cold-${run}`;
    const changes = [];
    let last = '';
    let fleetStart = Number.NaN;
    const poller = setInterval(async () => {
      const h = await poll.hgetall(`ebb:{${name}}:rate`).catch(() => ({}));
      if (!h.r || h.r + h.e === last) return;
      last = h.r + h.e;
      changes.push([Math.round(Date.now() - fleetStart) / 1000, Number(Number(h.r).toFixed(1)), Number(h.e)]);
    }, 50);
    const five = Array.from({ length: 5 }, () => ({ atS: 0, seconds: SECONDS }));
    const reports = await runRateFleet({
      url: nginx.url('/full'),
      redisUrl: `redis://127.0.0.1:${port}`,
      name,
      kind: 'shared',
      members: [...five, { atS: JOIN_AT_S, seconds: SECONDS - JOIN_AT_S }],
      initialRatePerSecond: 2 * LIMIT,
      onStart: (start) => {
        fleetStart = start;
      },
    });
    clearInterval(poller);
    const loadAfter = loadavg()[0];
    for (const b of burners.splice(0)) if (b.exitCode === null && b.signalCode === null) b.kill('SIGKILL');
    const convergedAtS = summarize(reports, LIMIT, { from: 0, to: SECONDS }).convergedAtS;
    const from = Math.max(convergedAtS ?? SECONDS - 1, 3);
    const x = summarize(reports, LIMIT, { from, to: SECONDS });
    const join = summarize(reports, LIMIT, { from: JOIN_AT_S, to: JOIN_AT_S + 2 });
    const row = {
      loadBefore,
      loadAfter,
      convergedAtS,
      acceptedPerSecond: x.acceptedPerSecond,
      percentOfLimit: 100 * x.ofLimit,
      throttledPercent: 100 * x.throttledShare,
      jain: x.jain,
      throttledWhileJoining: total(join.throttled, JOIN_AT_S, JOIN_AT_S + 2),
      okPerSecond: x.ok,
      throttles: reports.flatMap((r, i) =>
        r.throttles.map(([t, epoch]) => ({ process: i, t: Number((t + r.atS).toFixed(2)), epoch })),
      ),
      fallbacks: reports.map((r) => r.stats.fallbacks),
      lateStartMs: reports.map((r) => r.lateMs),
      fleetRateChanges: changes,
      throttledPerSecond: Array.from({ length: SECONDS }, (_, s) =>
        reports.reduce((a, r) => a + (onFleetClock(r, 'throttled')[s] ?? 0), 0),
      ),
    };
    process.stderr.write(
      `  load ${loadBefore.toFixed(1)} → ${loadAfter.toFixed(1)}: converged at s ${convergedAtS}; from s ${from}: ${row.acceptedPerSecond.toFixed(1)} r/s (${row.percentOfLimit.toFixed(1)} %), 429s ${row.throttledPercent.toFixed(2)} %, Jain ${row.jain.toFixed(3)}; 429s while the sixth joins: ${row.throttledWhileJoining}\n`,
    );
    runs.push(row);
    // The load average falls slowly: each run gets its own warm-up, from a machine without burners.
    await sleep(2000);
  }
} finally {
  for (const b of burners) if (b.exitCode === null && b.signalCode === null) b.kill('SIGKILL');
  poll.disconnect();
  await nginx.stop();
  await redisServer.stop();
}
process.stdout.write(`${JSON.stringify({ limit: LIMIT, seconds: SECONDS, burners: BURN, runs })}\n`);
