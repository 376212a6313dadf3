// adaptiveRate with and without the server's hints, against real limiters on 127.0.0.1
// (test/rate/support/limiters.mjs): the same setting, the same 40 client loops through
// `withRetry`, once with the limiter silent (as in `limits.mjs`) and once with it sending
// `Retry-After` on its 429s (nginx, HAProxy) and the IETF `RateLimit` field computed from its
// stick table (HAProxy). Real time: the numbers depend on the machine and its load (printed).
//
//   node figures/limits-hints.mjs [--quick]
//
// Prints one JSON document on stdout ({ markdown, results }) and progress on stderr.
import os from 'node:os';
import { adaptiveRate } from 'ebb/rate';
import { cv, runFleet, sum } from '../../test/rate/support/fleet.mjs';
import { available, startLimiter } from '../../test/rate/support/limiters.mjs';

const quick = process.argv.includes('--quick');
const SECONDS = quick ? 12 : 20;
const SETTLED = 5;
const CLIENTS = 40;
const log = (text) => process.stderr.write(`limits-hints: ${text}\n`);
const round = (x, d = 1) => (Number.isFinite(x) ? Number(x.toFixed(d)) : null);

const SETTINGS = [
  { name: 'nginx 50 r/s, burst 5', limiter: 'nginx', ratePerSecond: 50, burst: 5 },
  { name: 'nginx 10 r/s, burst 0', limiter: 'nginx', ratePerSecond: 10, burst: 0 },
  { name: 'HAProxy 50 r/s (1 s window)', limiter: 'haproxy', ratePerSecond: 50 },
];
const HINTS = {
  nginx: [
    { id: 'none', hints: {} },
    { id: 'Retry-After: 1', hints: { retryAfter: 1 } },
  ],
  haproxy: [
    { id: 'none', hints: {} },
    { id: 'Retry-After: 1', hints: { retryAfter: 1 } },
    { id: 'RateLimit (r, t=1)', hints: { rateLimit: true } },
    { id: 'both', hints: { retryAfter: 1, rateLimit: true } },
  ],
};

const { found, hint } = available();
if (hint) log(hint);
const rows = [];
for (const s of SETTINGS) {
  if (!found.includes(s.limiter)) continue;
  for (const h of HINTS[s.limiter]) {
    log(`${s.name} × hints: ${h.id} (${SECONDS} s)`);
    const limiter = await startLimiter(s.limiter, { ratePerSecond: s.ratePerSecond, burst: s.burst, ...h.hints });
    let r;
    try {
      r = await runFleet({ url: limiter.url, rate: adaptiveRate(), clients: CLIENTS, seconds: SECONDS });
    } finally {
      await limiter.stop();
    }
    const ok = sum(r.ok, SETTLED, SECONDS);
    const throttled = sum(r.throttled, SETTLED, SECONDS);
    const span = SECONDS - SETTLED;
    rows.push({
      limiter: s.name,
      'server hints': h.id,
      'accepted r/s': round(ok / span),
      '% of limit': round((100 * ok) / span / s.ratePerSecond, 0),
      '429 share %': round((100 * throttled) / Math.max(1, ok + throttled), 2),
      CV: round(cv(r.ok, SETTLED, SECONDS), 3),
      'cuts > 25 %': r.cuts.filter((c) => c.t >= SETTLED && c.to / c.from < 0.75).length,
      'lost (final 429 or error)': r.outcome.final429 + Object.values(r.outcome.errors).reduce((a, b) => a + b, 0),
      'served per second': r.ok.slice(0, SECONDS).join(' '),
      load: round(os.loadavg()[0], 1),
    });
  }
}

const columns = rows.length ? Object.keys(rows[0]) : [];
const table = [
  `| ${columns.join(' | ')} |`,
  `| ${columns.map(() => '---').join(' | ')} |`,
  ...rows.map((row) => `| ${columns.map((c) => String(row[c] ?? '—')).join(' | ')} |`),
].join('\n');
const markdown = `adaptiveRate, ${CLIENTS} client loops, ${SECONDS} s each, figures after second ${SETTLED}; ${os.cpus().length} CPUs, load average at start ${os
  .loadavg()
  .map((x) => x.toFixed(2))
  .join(' ')}.\n\n${table}\n`;
process.stdout.write(`${JSON.stringify({ markdown, results: rows })}\n`);
