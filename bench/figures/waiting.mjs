// N retries waiting at once in one process (issue 15's third target): heap bytes per waiting
// retry, and what scheduling and firing one more retry costs while N others wait.
//
// Every operation is ebb's `retry(op, { backoff: constant(...) })` on the system clock, so every
// wait is an entry in the process-wide timer queue (a binary min-heap; core/timer-queue.ts):
//
// 1. Baseline: K probes against an empty queue (see 3).
// 2. N operations fail once and wait an hour: heap used after GC, per operation. The check that
//    each made exactly one attempt and none settled is the memory figure's (memory.mjs).
// 3. Rounds of K probes, each failing once and waiting PROBE_MS, added among the N:
//    - schedule: CPU time from launching the K probes until every first failure has been handled
//      and its wait queued (a synchronous `onRetry` counts them), per probe;
//    - fire: the thread is kept busy until every probe is due, so that one turn of the queue pops
//      all K; CPU time from the first to the last second attempt of that turn, per probe (each
//      pop sinks the heap's last entry from the top through log2(N) levels; then the second
//      attempt starts, synchronously).
// 4. The queue alone (TimerQueue from packages/ebb/src/core/timer-queue.ts): N bare entries,
//    then rounds of K adds of an earlier entry and K pops of the top, per operation, without the
//    executor.
// Times of steps 1 and 3 are CPU time (user + system: on a shared machine, wall time counts the
// other processes), the median over the rounds; those of step 4, a few hundred µs a round, are
// the fastest round's wall time (a round the scheduler did not interrupt).
//
// `node --expose-gc figures/waiting.mjs N [--quick]` prints
//   { node, n, probes, bytesPerRetry, baseline: { scheduleNs, fireNs }, scheduleNs, fireNs,
//     queue: { addNs, popNs, addLevels } }   (addLevels: heap levels an add climbed, on average)
import { fileURLToPath } from 'node:url';
import { constant, noJitter, retry } from 'ebb';
import { build } from 'esbuild';

// The queue alone (step 4) is the library's TimerQueue, internal and not exported, compiled from
// its source by esbuild: the build's output names and chunks its modules as it likes.
const timerQueueSource = fileURLToPath(new URL('../../packages/ebb/src/core/timer-queue.ts', import.meta.url));
const compiled = await build({
  entryPoints: [timerQueueSource],
  bundle: true,
  format: 'esm',
  write: false,
  logLevel: 'silent',
});
const { TimerQueue } = await import(
  `data:text/javascript;base64,${Buffer.from(compiled.outputFiles[0].text).toString('base64')}`
);

const n = Number(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 100_000);
const quick = process.argv.includes('--quick');
// K probes a round, well below the smallest N, so that the heap stays about N entries deep.
const K = 1_000;
const ROUNDS = quick ? 5 : 31;
/** Rounds of the queue alone (step 4): each is about 0.3 ms. */
const QUEUE_ROUNDS = quick ? 21 : 201;
const WAIT_MS = 3_600_000;
const PROBE_MS = 5;
const BATCH = 10_000;
const now = () => performance.now();
/** CPU time of the process (user + system, ms): on a shared machine, wall time counts the others. */
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
if (typeof globalThis.gc !== 'function') throw new Error('run with --expose-gc');
if (!Number.isSafeInteger(n) || n < 1) throw new Error(`expected N >= 1, got ${process.argv[2]}`);

const turn = () => new Promise((r) => setImmediate(r));
async function settleGc() {
  for (let i = 0; i < 4; i++) {
    globalThis.gc();
    await turn();
  }
}

/** One round of step 3 (or 1): K probes among whatever waits now. */
async function probeRound() {
  let fireFrom = 0;
  let fireTo = 0;
  let seconds = 0;
  let firsts = 0;
  let inFirstTurn = 0;
  const backoff = constant({ delayMs: PROBE_MS, jitter: noJitter, maxAttempts: 2 });
  const error = new Error('503');
  const ops = [];
  // A synchronous onRetry: the executor queues the wait as soon as it returns, so one microtask
  // after the K-th call, every probe waits.
  let retrying = 0;
  let allQueued;
  const queued = new Promise((resolve) => {
    allQueued = resolve;
  });
  const onRetry = () => {
    if (++retrying === K) queueMicrotask(allQueued);
  };
  const t0 = cpu();
  for (let i = 0; i < K; i++) {
    let calls = 0;
    ops.push(
      retry(
        () => {
          if (++calls === 1) {
            firsts++;
            return Promise.reject(error);
          }
          // The first microtask after the first second attempt runs when the queue's turn ends.
          if (seconds === 0) {
            queueMicrotask(() => (inFirstTurn = seconds));
            fireFrom = cpu();
          } else if (seconds === K - 1) fireTo = cpu();
          seconds++;
          return Promise.resolve(i);
        },
        { backoff, onRetry },
      ),
    );
  }
  // Every first failure is handled in the microtasks after the loop; no timer can run between
  // them, so the probes' waits are all queued before the first of them falls due.
  await queued;
  const t1 = cpu();
  const queuedAt = now();
  if (firsts !== K || seconds !== 0) throw new Error(`probes: ${firsts} first attempts, ${seconds} second`);
  // Busy until every probe is due, so that the queue's next turn pops them all.
  while (now() < queuedAt + PROBE_MS + 2);
  const values = await Promise.all(ops);
  if (seconds !== K || values.length !== K) throw new Error(`probes: ${seconds} second attempts of ${K}`);
  if (inFirstTurn !== K) throw new Error(`one turn of the queue popped ${inFirstTurn} probes of ${K}`);
  return {
    scheduleNs: ((t1 - t0) * 1e6) / K,
    fireNs: ((fireTo - fireFrom) * 1e6) / (K - 1),
  };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
};

/** Step 3 (or 1): the median of ROUNDS rounds. */
async function probe() {
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push(await probeRound());
  return { scheduleNs: median(rounds.map((x) => x.scheduleNs)), fireNs: median(rounds.map((x) => x.fireNs)) };
}

// 1. Baseline, after one round to warm the code up.
await probe();
await settleGc();
const baseline = await probe();

// 2. N waiting retries.
let calls = 0;
const shared = new Error('503 Service Unavailable');
const fail = () => {
  calls++;
  return Promise.reject(shared);
};
const waitBackoff = constant({ delayMs: WAIT_MS, jitter: noJitter, maxAttempts: 2 });
const keep = new Array(n).fill(undefined);
await settleGc();
const before = process.memoryUsage().heapUsed;
for (let i = 0; i < n; i++) {
  keep[i] = retry(fail, { backoff: waitBackoff });
  if (i % BATCH === BATCH - 1) await turn();
}
for (let i = 0; i < 10; i++) await turn();
await settleGc();
const after = process.memoryUsage().heapUsed;
if (calls !== n) throw new Error(`expected ${n} first attempts, saw ${calls}`);
let settled = 0;
for (const p of keep)
  p.then(
    () => settled++,
    () => settled++,
  );
await turn();
if (settled !== 0) throw new Error(`${settled} operations settled instead of waiting`);
const bytesPerRetry = (after - before) / n;

// 3. Probes among the N.
await settleGc();
const among = await probe();

// 4. The queue alone.
const queue = new TimerQueue(true);
const entry = () => ({ dueAt: 0, order: 0, slot: -1, wake() {} });
const far = queue.now() + WAIT_MS;
for (let i = 0; i < n; i++) queue.add(entry(), far + i);
const probes = Array.from({ length: K }, entry);
const adds = [];
const pops = [];
let climbed = 0;
for (let r = 0; r < QUEUE_ROUNDS; r++) {
  const soon = queue.now() + WAIT_MS / 2;
  const a0 = now();
  // Earlier than every entry already there, later than the probe before: from the bottom to the
  // top of the heap's population, as a retry that starts waiting now does.
  for (let i = 0; i < K; i++) queue.add(probes[i], soon + i);
  const a1 = now();
  // Levels each add climbed: from the new leaf's depth to the depth where it settled (read after
  // the timing, from the slots the queue keeps on its entries).
  if (r === 0) {
    for (let i = 0; i < K; i++) climbed += Math.floor(Math.log2(n + i + 1)) - Math.floor(Math.log2(probes[i].slot + 1));
  }
  // The top is always the next probe: popping it is what a fire does.
  for (let i = 0; i < K; i++) queue.remove(probes[i]);
  const a2 = now();
  adds.push(((a1 - a0) * 1e6) / K);
  pops.push(((a2 - a1) * 1e6) / K);
}
if (queue.size !== n) throw new Error(`queue: ${queue.size} entries left, expected ${n}`);

process.stdout.write(
  `${JSON.stringify({
    node: process.version,
    n,
    probes: K,
    bytesPerRetry,
    baseline,
    scheduleNs: among.scheduleNs,
    fireNs: among.fireNs,
    queue: { addNs: Math.min(...adds), popNs: Math.min(...pops), addLevels: climbed / K },
  })}\n`,
);
process.exit(0);
