// Closed-loop rate control against real rate limiters (issue 16): nginx `limit_req` (a leaky
// bucket) and HAProxy stick-table rate limiting (`http_req_rate`, a sliding window), each started
// on 127.0.0.1 from a generated config (test/rate/support/limiters.mjs), against 40 client loops
// through `withRetry` sharing one controller — ebb's `adaptiveRate`, `awsAdaptiveRate` (the AWS
// SDK's CUBIC bucket), `adaptiveThrottle` (the SRE book's client-side throttling) — and plain
// retry, side by side. Real time: the numbers depend on the machine and its load (printed).
//
//   node figures/limits.mjs [--quick] [--chart=FILE.png] [--only=PART,…] [--adaptive-only]
//                           [--no-spread] [--no-collision] [--no-yield | --yield=N] [--trace]
//                           [--seconds=N]
//
// --only runs some parts only, to iterate on one setting: a matrix setting as `nginx-10`,
// `haproxy-500` (limiter and rate), or `halving`, `independent`, `priorities`;
// --adaptive-only runs adaptiveRate alone in the matrix and the halving scenario;
// --seconds=N runs each scenario N seconds instead of 20 (the independent processes report Jain's
// index for each 15 s after the first 5 as well, to see whether their shares stay together);
// --trace adds, per matrix run and per halving run, the 429s per second, the controller's rate
// every 100 ms and its cuts (`results.rateTraces`), to see where a cold start's (or a doubled
// limit's) seconds and 429s go.
//
// Prints one JSON document on stdout ({ markdown, results }) and progress on stderr. Without
// nginx or haproxy it says which command installs them, and measures what it can.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { adaptiveRate, adaptiveThrottle, awsAdaptiveRate } from 'ebb/rate';
import { cv, jain, runFleet, sum } from '../../test/rate/support/fleet.mjs';
import { available, INSTALL, startLimiter } from '../../test/rate/support/limiters.mjs';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
// --smoke: one short run of each part, to check the figure works (not for figures).
const smoke = args.includes('--smoke');
const withTrace = args.includes('--trace');
const chartFile = args.find((a) => a.startsWith('--chart='))?.slice('--chart='.length);
const only = args
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
const part = (name) => !only || only.includes(name);
const secondsFlag = args.find((a) => a.startsWith('--seconds='));
const SECONDS = secondsFlag ? Number(secondsFlag.slice('--seconds='.length)) : smoke ? 6 : quick ? 10 : 20;
if (secondsFlag !== undefined && !(Number.isInteger(SECONDS) && SECONDS >= 10)) {
  process.stderr.write(
    `limits: --seconds expects a whole number of seconds ≥ 10, got ${JSON.stringify(secondsFlag)}\n`,
  );
  process.exit(2);
}
const SETTLED = smoke ? 2 : 5; // "after convergence": from second 5 on
const CLIENTS = 40;
const log = (text) => process.stderr.write(`limits: ${text}\n`);

// --no-spread: adaptiveRate with a `random` of 0, which draws no spread of its rises (the law as
// it was before the spread), to compare both on the same build and the same machine load.
const noSpread = args.includes('--no-spread');
// --no-collision: adaptiveRate without the charge of throttles at a rate that held (the law's rule
// [charge.collision]: the law as it was before it), to compare both on the same build. It sets
// the rule's constant, LAW.collisionCharge, to 0 in the built library's table, which a controller
// reads when it is made (here and in the client processes of the independent scenario).
const noCollision = args.includes('--no-collision');
// --no-yield: likewise without the base steps such a throttle gives back ([collision.yield]):
// LAW.collisionYield set to 0. Both flags together: the law before either rule. --yield=N gives
// back N steps instead of the library's (LAW.collisionYield), to try another value on the same build.
const noYield = args.includes('--no-yield');
const yieldFlag = args.find((a) => a.startsWith('--yield='));
const yieldSteps = noYield ? 0 : yieldFlag === undefined ? undefined : Number(yieldFlag.slice('--yield='.length));
if (yieldSteps !== undefined && !(yieldSteps >= 0)) {
  process.stderr.write(`limits: --yield expects a number of steps ≥ 0, got ${JSON.stringify(yieldFlag)}\n`);
  process.exit(2);
}
if (noCollision || yieldSteps !== undefined) {
  const { LAW } = await import('../../packages/ebb/dist/rate/law.js');
  if (noCollision) LAW.collisionCharge = 0;
  if (yieldSteps !== undefined) LAW.collisionYield = yieldSteps;
}
const CONTROLLERS = [
  { id: 'adaptiveRate', make: () => adaptiveRate(noSpread ? { random: () => 0 } : {}) },
  { id: 'awsAdaptiveRate', make: () => awsAdaptiveRate() },
  { id: 'adaptiveThrottle (SRE, K = 2)', make: () => adaptiveThrottle() },
  { id: 'plain retry', make: () => undefined },
].filter((c) => !args.includes('--adaptive-only') || c.id === 'adaptiveRate');
const ALL_SETTINGS = [
  { limiter: 'nginx', ratePerSecond: 10, burst: 0 },
  { limiter: 'nginx', ratePerSecond: 50, burst: 5 },
  { limiter: 'nginx', ratePerSecond: 500, burst: 50 },
  { limiter: 'haproxy', ratePerSecond: 10, burst: 0 },
  { limiter: 'haproxy', ratePerSecond: 50, burst: 0 },
  { limiter: 'haproxy', ratePerSecond: 500, burst: 0 },
];
const SETTINGS = (smoke ? [ALL_SETTINGS[1], ALL_SETTINGS[4]] : ALL_SETTINGS).filter((s) =>
  part(`${s.limiter}-${s.ratePerSecond}`),
);

const { found, hint } = available();
if (hint) log(hint);
const settingName = (s) =>
  s.limiter === 'nginx'
    ? `nginx ${s.ratePerSecond} r/s, burst ${s.burst}`
    : `HAProxy ${s.ratePerSecond} r/s (1 s window)`;
const round = (x, d = 1) => (Number.isFinite(x) ? Number(x.toFixed(d)) : null);

/** The first second from which `ok` stays within the band for 3 seconds running, from `from` on. */
function convergedAt(ok, from, low, high) {
  for (let s = from; s + 3 <= ok.length; s++) {
    if ([0, 1, 2].every((k) => (ok[s + k] ?? 0) >= low && (ok[s + k] ?? 0) <= high)) return s - from;
  }
  return null;
}

/** The summary row of one run: figures over [SETTLED, seconds). */
function summarize(r, limit, burst, seconds) {
  const ok = sum(r.ok, SETTLED, seconds);
  const throttled = sum(r.throttled, SETTLED, seconds);
  const span = seconds - SETTLED;
  const late = r.cuts.filter((c) => c.t >= SETTLED);
  return {
    'accepted r/s': round(ok / span),
    '% of limit': round((100 * ok) / span / limit, 0),
    '429 share %': round((100 * throttled) / Math.max(1, ok + throttled), 2),
    'sent r/s': round((ok + throttled) / span, 0),
    CV: round(cv(r.ok, SETTLED, seconds), 3),
    'converged at s': convergedAt(r.ok, 0, 0.9 * limit, limit + burst + 1),
    'cuts > 25 %': late.filter((c) => c.to / c.from < 0.75).length,
    'all cuts': late.length,
    'lost (final 429 or error)': r.outcome.final429 + Object.values(r.outcome.errors).reduce((a, b) => a + b, 0),
  };
}

const results = {
  machine: {},
  matrix: [],
  traces: {},
  rateTraces: {},
  halving: [],
  independent: null,
  priorities: null,
};
results.machine = {
  cpus: os.cpus().length,
  loadAtStart: os.loadavg().map((x) => round(x, 2)),
  node: process.version,
  // adaptiveRate's law as run: the spread of its rises, the charge of throttles at a rate that held.
  law: { spread: !noSpread, collisionCharge: !noCollision, collisionYield: yieldSteps ?? 'default' },
};

// ---------- the matrix ----------
for (const setting of SETTINGS) {
  if (!found.includes(setting.limiter)) continue;
  for (const c of CONTROLLERS) {
    log(`${settingName(setting)} × ${c.id} (${SECONDS} s)`);
    const limiter = await startLimiter(setting.limiter, setting);
    let r;
    try {
      r = await runFleet({ url: limiter.url, rate: c.make(), clients: CLIENTS, seconds: SECONDS });
    } finally {
      await limiter.stop();
    }
    results.matrix.push({
      limiter: settingName(setting),
      controller: c.id,
      ...summarize(r, setting.ratePerSecond, setting.burst, SECONDS),
      load: round(os.loadavg()[0], 1),
    });
    results.traces[`${settingName(setting)} | ${c.id}`] = r.ok.slice(0, SECONDS);
    if (withTrace) {
      results.rateTraces[`${settingName(setting)} | ${c.id}`] = {
        throttled: r.throttled.slice(0, SECONDS),
        rate: r.trace.map((x) => [x.t, round(x.rate, 2)]),
        cuts: r.cuts.map((x) => [x.t, round(x.from, 2), round(x.to, 2)]),
      };
    }
  }
}

// ---------- the limit halves, then doubles back ----------
const PHASE = smoke ? 4 : quick ? 8 : 12;
const halvingSetting = { limiter: 'nginx', ratePerSecond: 50, burst: 5 };
if (found.includes('nginx') && part('halving')) {
  for (const c of CONTROLLERS) {
    log(`halving: nginx 50 → 25 → 50 r/s × ${c.id} (${3 * PHASE} s)`);
    const limiter = await startLimiter('nginx', halvingSetting);
    let r;
    try {
      r = await runFleet({
        url: limiter.url,
        path: (t) => (t >= PHASE && t < 2 * PHASE ? '/half' : '/full'),
        rate: c.make(),
        clients: CLIENTS,
        seconds: 3 * PHASE,
      });
    } finally {
      await limiter.stop();
    }
    const steady = (from, to) => r.cuts.filter((x) => x.t >= from && x.t < to && x.to / x.from < 0.75).length;
    results.halving.push({
      controller: c.id,
      'r/s at 50': round(sum(r.ok, SETTLED, PHASE) / (PHASE - SETTLED)),
      'r/s at 25 (last 5 s)': round(sum(r.ok, 2 * PHASE - 5, 2 * PHASE) / 5),
      'r/s at 50 again (last 5 s)': round(sum(r.ok, 3 * PHASE - 5, 3 * PHASE) / 5),
      's to converge after halving': convergedAt(r.ok.slice(0, 2 * PHASE), PHASE, 0.9 * 25, 25 + 5 + 1),
      's to converge after doubling': convergedAt(r.ok, 2 * PHASE, 0.9 * 50, 50 + 5 + 1),
      '429 share %': round((100 * sum(r.throttled)) / Math.max(1, sum(r.ok) + sum(r.throttled)), 2),
      '429 share % after doubling': round(
        (100 * sum(r.throttled, 2 * PHASE, 3 * PHASE)) /
          Math.max(1, sum(r.ok, 2 * PHASE, 3 * PHASE) + sum(r.throttled, 2 * PHASE, 3 * PHASE)),
        2,
      ),
      'cuts > 25 % with the limit unchanged':
        steady(SETTLED, PHASE) + steady(PHASE + 2, 2 * PHASE) + steady(2 * PHASE + 2, 3 * PHASE),
    });
    results.traces[`halving | ${c.id}`] = r.ok.slice(0, 3 * PHASE);
    if (withTrace) {
      results.rateTraces[`halving | ${c.id}`] = {
        throttled: r.throttled.slice(0, 3 * PHASE),
        rate: r.trace.map((x) => [x.t, round(x.rate, 2)]),
        cuts: r.cuts.map((x) => [x.t, round(x.from, 2), round(x.to, 2)]),
      };
    }
  }
}

// ---------- K independent processes ----------
const K = 5;
if (found.includes('nginx') && part('independent')) {
  log(`independent: ${K} processes × 8 loops, each its own adaptiveRate, nginx 50 r/s burst 5 (${SECONDS} s)`);
  const limiter = await startLimiter('nginx', halvingSetting);
  let docs;
  try {
    const client = fileURLToPath(new URL('../../test/rate/support/client.mjs', import.meta.url));
    docs = await Promise.all(
      Array.from({ length: K }, () => {
        const child = spawn(
          process.execPath,
          [
            ...process.execArgv,
            client,
            limiter.url(),
            String(SECONDS),
            '8',
            noSpread ? 'adaptive-no-spread' : 'adaptive',
            ...(noCollision ? ['no-collision'] : []),
            ...(yieldSteps === undefined ? [] : [`yield=${yieldSteps}`]),
          ],
          {
            stdio: ['ignore', 'pipe', 'inherit'],
          },
        );
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
        });
        return new Promise((resolve, reject) =>
          child.once('exit', (code) =>
            code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`client exited ${code}`)),
          ),
        );
      }),
    );
  } finally {
    await limiter.stop();
  }
  for (const [i, d] of docs.entries()) log(`  process ${i + 1}, accepted per second: ${d.ok.join(' ')}`);
  const each = docs.map((d) => sum(d.ok, SETTLED, SECONDS) / (SECONDS - SETTLED));
  const throttled = docs.reduce((a, d) => a + sum(d.throttled, SETTLED, SECONDS), 0);
  const total = each.reduce((a, b) => a + b, 0);
  results.independent = {
    processes: K,
    'per process r/s': each.map((x) => round(x)).join(', '),
    'total r/s': round(total),
    '% of limit': round((100 * total) / 50, 0),
    "Jain's fairness": round(jain(each), 3),
    '429 share %': round((100 * throttled) / Math.max(1, throttled + total * (SECONDS - SETTLED)), 2),
  };
  // Each 15 s after the first 5, when the run holds two or more: whether the shares stay together.
  const windows = [];
  for (let from = SETTLED; from + 15 <= SECONDS; from += 15) {
    windows.push(round(jain(docs.map((d) => sum(d.ok, from, from + 15))), 3));
  }
  if (windows.length > 1) results.independent["Jain's fairness, each 15 s"] = windows.join(', ');
}

// ---------- priorities ----------
if (found.includes('nginx') && part('priorities')) {
  log(`priorities: open loop 100 r/s offered (20 % high) against nginx 50 r/s burst 5 (${SECONDS} s)`);
  const limiter = await startLimiter('nginx', halvingSetting);
  let r;
  try {
    r = await runFleet({
      url: limiter.url,
      rate: adaptiveRate(),
      offeredPerSecond: 100,
      classOf: (i) => (i % 5 === 0 ? 'high' : 'low'),
      deadlineMs: 3000,
      seconds: SECONDS,
    });
  } finally {
    await limiter.stop();
  }
  const pct = (c) => round((100 * c.ok) / Math.max(1, c.requests), 2);
  results.priorities = {
    offered: '100 r/s, every 5th request high (20 %), deadline 3 s each',
    'high: requests': r.classes.high?.requests,
    'high: success %': pct(r.classes.high ?? { ok: 0, requests: 0 }),
    'low: requests': r.classes.low?.requests,
    'low: success %': pct(r.classes.low ?? { ok: 0, requests: 0 }),
    'accepted r/s after 5 s': round(sum(r.ok, SETTLED, SECONDS) / (SECONDS - SETTLED)),
  };
}
results.machine.loadAtEnd = os.loadavg().map((x) => round(x, 2));

// ---------- the chart ----------
async function chart(file) {
  const rows = [];
  for (const [key, ok] of Object.entries(results.traces)) {
    const [scenario, controller] = key.split(' | ');
    if (scenario !== 'halving' && scenario !== 'nginx 50 r/s, burst 5') continue;
    for (const [second, accepted] of ok.entries()) {
      rows.push({
        scenario: scenario === 'halving' ? 'limit 50 → 25 → 50 r/s' : 'limit 50 r/s',
        controller,
        second,
        accepted,
      });
    }
  }
  const limitRows = [];
  for (let s = 0; s <= 3 * PHASE; s++)
    limitRows.push({ scenario: 'limit 50 → 25 → 50 r/s', second: s, limit: s >= PHASE && s < 2 * PHASE ? 25 : 50 });
  for (let s = 0; s <= SECONDS; s++) limitRows.push({ scenario: 'limit 50 r/s', second: s, limit: 50 });
  const missingNote = hint ? ` — ${hint}` : '';
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: {
      text: 'Accepted requests per second: 40 clients through withRetry against nginx limit_req (burst 5)',
      subtitle: `Re-run: npm run bench -- limits (needs nginx and haproxy: ${INSTALL})${missingNote}`,
    },
    background: 'white',
    facet: { row: { field: 'scenario', type: 'nominal', title: null } },
    spec: {
      width: 720,
      height: 200,
      layer: [
        {
          data: { values: limitRows },
          mark: { type: 'line', interpolate: 'step-after', color: '#999', strokeDash: [4, 3] },
          encoding: { x: { field: 'second', type: 'quantitative' }, y: { field: 'limit', type: 'quantitative' } },
        },
        {
          data: { values: rows },
          mark: { type: 'line', point: true },
          encoding: {
            x: { field: 'second', type: 'quantitative', title: 'second' },
            y: { field: 'accepted', type: 'quantitative', title: 'accepted r/s' },
            color: { field: 'controller', type: 'nominal', legend: { labelLimit: 320 } },
          },
        },
      ],
    },
    resolve: { scale: { x: 'independent' } },
  };
  // Facets need data at the top: put the layers' data through a union.
  const all = [...rows.map((r) => ({ ...r, kind: 'accepted' })), ...limitRows.map((r) => ({ ...r, kind: 'limit' }))];
  spec.data = { values: all };
  spec.spec.layer[0].data = undefined;
  spec.spec.layer[0].transform = [{ filter: "datum.kind === 'limit'" }];
  spec.spec.layer[1].data = undefined;
  spec.spec.layer[1].transform = [{ filter: "datum.kind === 'accepted'" }];
  const vegaLite = await import('vega-lite');
  const vega = await import('vega');
  const compiled = vegaLite.compile(spec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  const svg = await view.toSVG();
  const { Resvg } = await import('@resvg/resvg-js');
  const png = new Resvg(svg, { background: 'white', font: { loadSystemFonts: true } }).render().asPng();
  writeFileSync(file, png);
  writeFileSync(file.replace(/\.png$/, '.svg'), svg);
  log(`wrote ${file}`);
}
if (chartFile && Object.keys(results.traces).length) await chart(chartFile);

// ---------- Markdown ----------
const table = (rows) => {
  if (!rows.length) return '';
  const head = Object.keys(rows[0]);
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i < 2 ? '---' : '--:')).join('|')}|`,
    ...rows.map(
      (r) => `| ${head.map((k) => (r[k] === null || r[k] === undefined ? '—' : String(r[k]))).join(' | ')} |`,
    ),
  ].join('\n');
};
const list = (o) =>
  Object.entries(o)
    .map(([k, v]) => `- ${k}: ${v}`)
    .join('\n');
const md = [
  `Measured on ${results.machine.cpus} CPUs, Node.js ${results.machine.node}; load average ${results.machine.loadAtStart.join(' / ')} at the start, ${results.machine.loadAtEnd.join(' / ')} at the end (other work was running: real time, real sockets). ${CLIENTS} client loops, ${SECONDS} s a run; figures after second ${SETTLED}. "converged at s": the first second from which 3 seconds in a row accept 90 % of the limit or more (and no more than limit + burst + 1). "cuts > 25 %": multiplicative decreases of the controller's rate after second ${SETTLED}, the limit unchanged (adaptiveRate and awsAdaptiveRate; the SRE throttle and plain retry do not pace).`,
  ...(hint ? [`**Missing:** ${hint}.`] : []),
  table(results.matrix),
  ...(results.halving.length
    ? [
        `### The limit halves, then doubles back (nginx, burst 5; ${PHASE} s at 50, ${PHASE} s at 25, ${PHASE} s at 50)`,
        table(results.halving),
      ]
    : []),
  ...(results.independent
    ? [
        `### ${K} independent processes, each with its own adaptiveRate (8 loops each), one nginx limit of 50 r/s`,
        list(results.independent),
      ]
    : []),
  ...(results.priorities
    ? ['### Priorities under throttling (adaptiveRate, nginx 50 r/s burst 5)', list(results.priorities)]
    : []),
  ...(Object.keys(results.traces).length
    ? [
        '### Per-second accepted requests',
        table(Object.entries(results.traces).map(([k, ok]) => ({ run: k, 'accepted per second': ok.join(' ') }))),
      ]
    : []),
].join('\n\n');
process.stdout.write(`${JSON.stringify({ markdown: md, results })}\n`);
