// Issue 13, Must show 4 (for the shared budgets): what sharing a retry budget through Redis costs
// at steady state. One process sends 50 requests a second (open loop) to a real node:http server
// for a few seconds with `sharedTokenBudget` on a real redis-server (started here on a free
// 127.0.0.1 port, no persistence, stopped by PID), once per client library, and once with the
// local `tokenBudget` for the latency baseline. Redis's own counters (`INFO commandstats`, reset
// with `CONFIG RESETSTAT` after the first sync) give the commands per request.
// Prints one JSON document on stdout; progress on stderr. `--quick`: 3 s instead of 10 s.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as netServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constant, retry } from 'ebb';
import { tokenBudget } from 'ebb/rate';
import { sharedTokenBudget } from 'ebb/redis';
import { Redis } from 'ioredis';
import { createClient } from 'redis';

const quick = process.argv.includes('--quick');
const SECONDS = quick ? 3 : 10;
const RATE = 50;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const freePort = () =>
  new Promise((resolve, reject) => {
    const s = netServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const port = await freePort();
const dir = mkdtempSync(join(tmpdir(), 'ebb-bench-redis-'));
const server = spawn(
  '/usr/bin/redis-server',
  [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--pidfile',
    join(dir, 'redis.pid'),
    '--save',
    '',
    '--appendonly',
    'no',
  ],
  { stdio: 'ignore' },
);
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

/** 50 requests a second for `seconds`, open loop; returns latencies (ms) and the count. */
async function load(budget, seconds = SECONDS) {
  const latencies = [];
  const pending = [];
  const start = performance.now();
  const total = RATE * seconds;
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const t0 = performance.now();
    pending.push(
      retry(
        async () => {
          const res = await fetch(url);
          await res.arrayBuffer();
        },
        { backoff: constant({ delayMs: 10, maxAttempts: 3 }), budget },
      ).then(() => latencies.push(performance.now() - t0)),
    );
  }
  await Promise.all(pending);
  return { requests: total, latencies };
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

const rows = [];
// Warm-up (JIT, the first connections), not measured.
await load(undefined, 1);
process.stderr.write(`redis figure: local tokenBudget, ${SECONDS} s at ${RATE} r/s\n`);
const baseline = await load(tokenBudget());
rows.push({
  subject: 'tokenBudget (local)',
  requests: baseline.requests,
  commandsPerRequest: 0,
  p50Ms: pct(baseline.latencies, 0.5),
  p99Ms: pct(baseline.latencies, 0.99),
});

for (const kind of ['node-redis', 'ioredis']) {
  process.stderr.write(`redis figure: sharedTokenBudget with ${kind}\n`);
  let client;
  let quit;
  if (kind === 'ioredis') {
    client = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 0 });
    await new Promise((resolve) => client.once('ready', resolve));
    quit = () => client.disconnect();
  } else {
    client = createClient({ url: `redis://127.0.0.1:${port}` });
    client.on('error', () => {});
    await client.connect();
    quit = () => client.destroy();
  }
  const budget = sharedTokenBudget({ client, name: `bench-${kind}` });
  await budget.ready();
  await admin.configResetStat();
  const r = await load(budget);
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

await admin.destroy();
await new Promise((resolve) => http.close(resolve));
process.kill(server.pid, 'SIGTERM');
await new Promise((resolve) => server.once('exit', resolve));
rmSync(dir, { recursive: true, force: true });

for (const r of rows) {
  process.stderr.write(
    `${r.subject.padEnd(32)} ${String(r.requests).padStart(5)} requests  ${r.commandsPerRequest.toFixed(4)} commands/request  p50 ${r.p50Ms.toFixed(1)} ms  p99 ${r.p99Ms.toFixed(1)} ms\n`,
  );
}
process.stdout.write(`${JSON.stringify({ ratePerSecond: RATE, seconds: SECONDS, results: rows })}\n`);
