// Runs a fleet of rate-process.mjs processes against one limiter and lines their per-second series
// up on one clock (every process starts at a wall-clock time given to it). Shared by
// test/redis/fleet-rate.test.ts and `npm run bench -- redis`. Plain JavaScript so both can use it.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * The member's half of the start: tells the parent it is ready (`ready` on stdout) and resolves
 * with the fleet's start (ms since the epoch), the one line the parent writes to its stdin.
 */
export function readyForStart() {
  process.stdout.write('ready\n');
  return new Promise((resolve) => {
    let line = '';
    process.stdin.on('data', (d) => {
      line += d;
      if (line.includes('\n')) {
        process.stdin.pause();
        resolve(Number(line.trim()));
      }
    });
  });
}

const PROCESSES = {
  rate: fileURLToPath(new URL('./rate-process.mjs', import.meta.url)),
  throttle: fileURLToPath(new URL('./throttle-process.mjs', import.meta.url)),
};

/**
 * Starts one process per entry of `members` (`{ atS, seconds, library }`: its start, in seconds
 * after the fleet's start, its length, and its Redis client library), each with `clients` loops,
 * and resolves with their parsed reports (in `members` order). The fleet starts `leadMs` after
 * the last process reported ready (loaded, connected, first lease held). `initialRatePerSecond` goes to each
 * controller (for `local`, pass each process's part). Every child is bounded by its own
 * watchdog; one that fails rejects the whole run with its stderr. `process: 'throttle'` runs
 * throttle-process.mjs instead (then `clients` is each process's offered requests a second, and
 * `extra` its k and windowMs); `onStart(ms)` is told the fleet's start (ms since the epoch); `env`
 * is added to each child's environment (rate-process.mjs reads EBB_MAX_RATE, EBB_SAMPLE_MS,
 * EBB_TRACE_GRANTS).
 */
export async function runRateFleet({
  process: which = 'rate',
  extra = [],
  onStart = () => {},
  url,
  redisUrl = '',
  name,
  kind,
  members,
  clients = 10,
  leadMs = 500,
  initialRatePerSecond,
  env = {},
}) {
  const children = members.map((m, i) => {
    const args = [
      PROCESSES[which],
      url,
      redisUrl,
      name,
      kind,
      m.library ?? (i % 2 === 0 ? 'node-redis' : 'ioredis'),
      String(clients),
      String(Math.round(m.atS * 1000)),
      String(m.seconds),
      ...(initialRatePerSecond === undefined ? [] : [String(initialRatePerSecond)]),
      ...extra.map(String),
    ];
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    let readyResolve;
    const ready = new Promise((resolve) => {
      readyResolve = resolve;
    });
    child.stdout.on('data', (d) => {
      out += d;
      if (out.startsWith('ready\n')) readyResolve();
    });
    child.stderr.on('data', (d) => {
      err = (err + d).slice(-4000);
    });
    const done = new Promise((resolve, reject) => {
      child.once('exit', (code) => {
        readyResolve();
        if (code !== 0) reject(new Error(`rate-process ${i} exited ${code}: ${err}`));
        else {
          try {
            resolve({ ...JSON.parse(out.trim().split('\n').pop() ?? ''), atS: m.atS, seconds: m.seconds });
          } catch (error) {
            reject(new Error(`rate-process ${i} printed no report (${error}): ${out.slice(-500)} ${err}`));
          }
        }
      });
    });
    done.catch(() => {});
    return { child, ready, done };
  });
  // Every process loaded, connected and holding its first lease: then one start for all.
  await Promise.all(children.map((c) => c.ready));
  const start = Date.now() + leadMs;
  for (const c of children) c.child.stdin.end(`${start}\n`);
  onStart(start);
  return Promise.all(children.map((c) => c.done));
}

/** A process's per-second series shifted onto the fleet's clock (its first second is its `atS`). */
export function onFleetClock(report, key) {
  const out = [];
  for (let s = 0; s < report[key].length; s++) out[report.atS + s] = report[key][s];
  return out;
}

/** Sum over [from, to) of a series with holes. */
export const total = (series, from, to) => {
  let s = 0;
  for (let i = from; i < to; i++) s += series[i] ?? 0;
  return s;
};

/** Jain's fairness index, (Σx)² / (n · Σx²). */
export const jain = (xs) => {
  const s = xs.reduce((a, b) => a + b, 0);
  const q = xs.reduce((a, b) => a + b * b, 0);
  return q === 0 ? 1 : (s * s) / (xs.length * q);
};

/**
 * The fleet's figures: per-second totals of 200s and 429s, the second it converged (the first of
 * three in a row that each accept at least 90 % of `limit` — the definition of
 * `npm run bench -- limits`), and over [from, to): accepted r/s, its share of the limit, the 429
 * share of attempts, and Jain's index over the processes alive for the whole span.
 */
export function summarize(reports, limit, { from, to }) {
  const length = Math.max(...reports.map((r) => r.atS + r.ok.length));
  const ok = Array.from({ length }, (_, s) => reports.reduce((a, r) => a + (onFleetClock(r, 'ok')[s] ?? 0), 0));
  const throttled = Array.from({ length }, (_, s) =>
    reports.reduce((a, r) => a + (onFleetClock(r, 'throttled')[s] ?? 0), 0),
  );
  let convergedAtS = null;
  for (let s = 0; s + 2 < length; s++) {
    if ([0, 1, 2].every((k) => (ok[s + k] ?? 0) >= 0.9 * limit)) {
      convergedAtS = s;
      break;
    }
  }
  const alive = reports.filter((r) => r.atS <= from && r.atS + r.seconds >= to);
  const perProcess = alive.map((r) => total(onFleetClock(r, 'ok'), from, to) / (to - from));
  const accepted = total(ok, from, to) / (to - from);
  const attempts = total(ok, from, to) + total(throttled, from, to);
  return {
    ok,
    throttled,
    convergedAtS,
    acceptedPerSecond: accepted,
    ofLimit: accepted / limit,
    throttledShare: attempts === 0 ? 0 : total(throttled, from, to) / attempts,
    perProcess,
    jain: jain(perProcess),
  };
}
