// Retry amplification during a total outage: a node:http server on 127.0.0.1 answers 503 to
// every request; 1,000 operations (50 at a time) each call retry() with up to 3 attempts, with
// no budget and with each of ebb/rate's budgets (a fresh one per subject, shared by all 1,000
// operations). Amplification = requests the server received / operations.
//
// `node figures/amplification.mjs [--quick]` prints one JSON document on stdout and a table on
// stderr. The run is short either way (--quick is accepted for bench/run.mjs and changes nothing).
import { once } from 'node:events';
import { createServer } from 'node:http';
import { exponential, fullJitter, retry } from 'ebb';
import { awsRetryQuota, ratioBudget, tokenBudget } from 'ebb/rate';

const REQUESTS = 1000;
const MAX_ATTEMPTS = 3;
const CONCURRENCY = 50;

const subjects = [
  { subject: 'plain retries', budget: 'none', make: () => undefined },
  { subject: 'tokenBudget', budget: 'maxTokens 10, tokenRatio 0.1 (10 %)', make: () => tokenBudget() },
  {
    subject: 'ratioBudget',
    budget: 'percentCanRetry 0.2, minRetriesPerSecond 10, ttl 10 s',
    make: () => ratioBudget(),
  },
  { subject: 'awsRetryQuota', budget: '500 tokens, 14 a transient retry', make: () => awsRetryQuota() },
];

let received = 0;
const server = createServer((_req, res) => {
  received++;
  res.statusCode = 503;
  res.end('unavailable');
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const url = `http://127.0.0.1:${server.address().port}/`;

const call = async () => {
  const res = await fetch(url);
  await res.arrayBuffer();
  if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
};
// Waits of a few ms: the outage outlasts them all, and the run stays well inside one ttl.
const backoff = exponential({ initialDelayMs: 2, multiplier: 2, jitter: fullJitter, maxAttempts: MAX_ATTEMPTS });

const results = [];
for (const s of subjects) {
  received = 0;
  const budget = s.make();
  let next = 0;
  const reasons = {};
  const started = performance.now();
  const worker = async () => {
    while (next < REQUESTS) {
      next++;
      try {
        await retry(call, { backoff, budget });
        throw new Error('the outage server answered 200');
      } catch (error) {
        const reason = error?.reason ?? error?.message;
        reasons[reason] = (reasons[reason] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  results.push({
    subject: s.subject,
    budget: s.budget,
    requests: REQUESTS,
    received,
    amplification: received / REQUESTS,
    gaveUpForAttempts: reasons.attempts ?? 0,
    gaveUpForBudget: reasons.budget ?? 0,
    ms: Math.round(performance.now() - started),
  });
}
server.closeAllConnections();
server.close();

const doc = { requests: REQUESTS, maxAttempts: MAX_ATTEMPTS, concurrency: CONCURRENCY, results };
process.stderr.write(
  [
    `Total outage (every response 503): ${REQUESTS} operations, ${MAX_ATTEMPTS} attempts each, ${CONCURRENCY} at a time`,
    '',
    `${'subject'.padEnd(15)} ${'received'.padStart(8)} ${'amplification'.padStart(13)} ${'refused'.padStart(8)}`,
    ...results.map(
      (r) =>
        `${r.subject.padEnd(15)} ${String(r.received).padStart(8)} ${`${r.amplification.toFixed(3)}×`.padStart(13)} ${String(r.gaveUpForBudget).padStart(8)}`,
    ),
    '',
  ].join('\n'),
);
process.stdout.write(`${JSON.stringify(doc)}\n`);
