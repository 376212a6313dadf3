// Timer accuracy on the real clock: 10,000 operations fail once and wait, all at the same time,
// and are retried after a scheduled wait; lateness = (time of attempt 2 − time attempt 1 failed)
// − scheduled wait. Waits are spread evenly (BASE_MS + i mod SPREAD_MS), so that about ten
// retries fall due each millisecond rather than all at once. Operations start ten per event-loop
// turn, so each failure is handled at once (a lateness is not the time spent handling 9,999 other
// first failures) and all are launched well before the first falls due: `maxWaiting` reports how
// many were waiting together. `timer` is the baseline: a bare setTimeout per operation.
//
// `node figures/timers.mjs SUBJECT [--quick]` prints
//   { subject, node, n, maxWaiting, launchMs, lateMs: { p50, p99, min, max }, early }
//   (early: retries that came before their time)
import { percentile } from '../lib/stats.mjs';
import { loadSubject } from '../subjects.mjs';

const [id] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const quick = process.argv.includes('--quick');
const N = 10_000;
const BASE_MS = 1_000;
const PER_TURN = 10;
const SPREAD_MS = quick ? 300 : 1_000;
const now = () => performance.now();

const delayOf = (i) => BASE_MS + (i % SPREAD_MS);
const failedAt = new Float64Array(N);
const lateMs = new Float64Array(N);
let done = 0;
let failed = 0;
let maxWaiting = 0;
let finished;
const all = new Promise((resolve) => {
  finished = resolve;
});
const record = (i) => {
  lateMs[i] = now() - failedAt[i] - delayOf(i);
  if (++done === N) finished();
};

const fail = (i) => {
  failedAt[i] = now();
  failed++;
  if (failed - done > maxWaiting) maxWaiting = failed - done;
};
const turn = () => new Promise((resolve) => setImmediate(resolve));

let launch;
if (id === 'timer') {
  launch = (i) => {
    fail(i);
    setTimeout(() => record(i), delayOf(i));
  };
} else {
  const subject = await loadSubject(id);
  const error = Object.assign(new Error('503 Service Unavailable'), {
    status: 503,
    $metadata: { httpStatusCode: 503 },
  });
  // One configured call per distinct wait, built before the clock starts.
  const calls = Array.from({ length: SPREAD_MS }, (_, k) => subject.retryOnce(BASE_MS + k));
  const ops = Array.from({ length: N }, (_, i) => {
    let attempt = 0;
    return () => {
      if (++attempt === 1) {
        fail(i);
        return Promise.reject(error);
      }
      record(i);
      return Promise.resolve(i);
    };
  });
  launch = (i) =>
    calls[i % SPREAD_MS](ops[i]).then(undefined, (e) => {
      throw new Error(`${id}: operation ${i} failed: ${e}`);
    });
}
const launchedAt = now();
for (let i = 0; i < N; i++) {
  launch(i);
  if ((i + 1) % PER_TURN === 0) await turn();
}
const launchMs = now() - launchedAt;
await all;
const sorted = Array.from(lateMs).sort((a, b) => a - b);
const early = sorted.filter((x) => x < 0).length;
const round = (x) => Math.round(x * 1000) / 1000;
process.stdout.write(
  `${JSON.stringify({
    subject: id,
    node: process.version,
    n: N,
    maxWaiting,
    launchMs: Math.round(launchMs),
    lateMs: {
      p50: round(percentile(sorted, 50)),
      p99: round(percentile(sorted, 99)),
      min: round(sorted[0]),
      max: round(sorted[N - 1]),
    },
    early,
  })}\n`,
);
