// A fleet against nginx's default limit_req, without burst (docs/redis.md, "A fleet that paces as
// one client"): six Node.js processes sharing one sharedRate, and at the same time against a
// second nginx with the same limit six with an adaptiveRate each (test/redis/no-burst-fleet.test.ts
// asserts one run of each setting). Both start at the limit in all; figures from second 5 to the
// end; the load average beside each run. Then the timer lateness of six processes pacing at the
// members' rate, measured the same way (a setTimeout to each turn, how late it fired), which
// bounds what time division can do on this machine: a turn later than the slack the fleet's rate
// leaves below the limit costs a 429 at a limiter without burst.
//   node bench/figures/redis-no-burst.mjs [--runs=2] [--seconds=25] [--limits=10,30]
// Prints a markdown table on stdout; progress on stderr. Bounded: every child has its watchdog.
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startLimiter } from '../../test/rate/support/limiters.mjs';
import { runRateFleet, summarize } from '../../test/redis/support/rate-fleet.mjs';
import { startRedis } from '../../test/redis/support/redis-server.mjs';

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;

if (process.argv.includes('--probe')) {
  // One prober: wakes every `period` ms for `seconds` and reports how late each wake-up was.
  const period = Number(arg('period', '100'));
  const seconds = Number(arg('probe-seconds', '5'));
  setTimeout(() => process.exit(3), (seconds + 10) * 1000).unref();
  const late = [];
  const start = performance.now();
  let next = start + period;
  while (performance.now() - start < seconds * 1000) {
    await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
    late.push(performance.now() - next);
    next += period;
  }
  process.stdout.write(`${JSON.stringify(late)}\n`);
  process.exit(0);
}

const RUNS = Number(arg('runs', '2'));
const SECONDS = Number(arg('seconds', '25'));
const LIMITS = arg('limits', '10,30').split(',').map(Number);
const PROCESSES = 6;
const FROM_S = 5;
const self = fileURLToPath(import.meta.url);
const load = () => loadavg()[0].toFixed(1);

/** Six probers at once, each waking every `period` ms for 5 s: every wake-up's lateness in ms. */
async function lateness(period) {
  const runs = Array.from({ length: PROCESSES }, () => {
    const child = spawn(process.execPath, [self, '--probe', `--period=${period}`, '--probe-seconds=5'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    return new Promise((resolve) => child.once('exit', () => resolve(JSON.parse(out || '[]'))));
  });
  return (await Promise.all(runs)).flat().sort((a, b) => a - b);
}
const q = (xs, p) => xs[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? Number.NaN;

const rows = [];
const redis = await startRedis();
try {
  for (const limit of LIMITS) {
    for (let run = 1; run <= RUNS; run++) {
      const [forShared, forLocal] = await Promise.all([
        startLimiter('nginx', { ratePerSecond: limit, burst: 0 }),
        startLimiter('nginx', { ratePerSecond: limit, burst: 0 }),
      ]);
      try {
        const before = load();
        process.stderr.write(`no burst, ${limit} r/s, run ${run}: ${SECONDS} s, load ${before}\n`);
        const members = Array.from({ length: PROCESSES }, () => ({ atS: 0, seconds: SECONDS }));
        const [shared, local] = await Promise.all([
          runRateFleet({
            url: forShared.url('/full'),
            redisUrl: redis.url,
            name: `no-burst-${limit}-${run}-${Date.now()}`,
            kind: 'shared',
            members,
            clients: 4,
            initialRatePerSecond: limit,
          }),
          runRateFleet({
            url: forLocal.url('/full'),
            name: 'local',
            kind: 'local',
            members,
            clients: 4,
            initialRatePerSecond: limit / PROCESSES,
          }),
        ]);
        const s = summarize(shared, limit, { from: FROM_S, to: SECONDS });
        const l = summarize(local, limit, { from: FROM_S, to: SECONDS });
        const late = await lateness((PROCESSES * 1000) / limit);
        // The slack a fleet at 0.95 × the limit leaves between two members' turns.
        const slack = 1000 / (0.95 * limit) - 1000 / limit;
        rows.push({
          limit,
          run,
          load: `${before} → ${load()}`,
          shared: { accepted: s.acceptedPerSecond, ofLimit: s.ofLimit, throttled: s.throttledShare },
          independent: { accepted: l.acceptedPerSecond, ofLimit: l.ofLimit, throttled: l.throttledShare },
          lateness: {
            p50: q(late, 0.5),
            p90: q(late, 0.9),
            p99: q(late, 0.99),
            slack,
            beyond: late.filter((x) => x > slack).length / late.length,
          },
        });
      } finally {
        await forShared.stop();
        await forLocal.stop();
      }
    }
  }
} finally {
  await redis.stop();
}

const pct = (x) => `${(100 * x).toFixed(1)} %`;
const ms = (x) => x.toFixed(1);
const lines = [
  '| limit (no burst) | run | load | shared: accepted r/s (of the limit) | shared: 429s | independent: accepted r/s | independent: 429s | timer lateness p50 / p90 / p99 ms | slack at 0.95 × the limit | turns later than it |',
  '| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...rows.map(
    (r) =>
      `| ${r.limit} r/s | ${r.run} | ${r.load} | ${r.shared.accepted.toFixed(1)} (${pct(r.shared.ofLimit)}) | ${pct(r.shared.throttled)} | ${r.independent.accepted.toFixed(1)} (${pct(r.independent.ofLimit)}) | ${pct(r.independent.throttled)} | ${ms(r.lateness.p50)} / ${ms(r.lateness.p90)} / ${ms(r.lateness.p99)} | ${ms(r.lateness.slack)} ms | ${pct(r.lateness.beyond)} |`,
  ),
];
process.stdout.write(`${lines.join('\n')}\n\n${JSON.stringify(rows)}\n`);
