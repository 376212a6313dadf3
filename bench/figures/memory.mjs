// Heap bytes per pending retry: N operations that failed once and now sit in their backoff
// sleep (one hour), against N bare pending timers (`new Promise(r => setTimeout(r, ms))`).
//
// `node --expose-gc figures/memory.mjs SUBJECT N` prints { subject, node, bytesPerOp, n }.
// SUBJECT is `timer` or a subject id. The run checks that every operation was called exactly
// once and that none has settled, so the figure measures operations that really are waiting.
import { loadSubject } from '../subjects.mjs';

const [id, nText] = process.argv.slice(2);
const n = Number(nText ?? 100_000);
const SLEEP_MS = 3_600_000;

if (typeof globalThis.gc !== 'function') throw new Error('run with --expose-gc');

async function settleGc() {
  for (let i = 0; i < 4; i++) {
    globalThis.gc();
    await new Promise((r) => setImmediate(r));
  }
}

let calls = 0;
// A 503, which every subject retries (the AWS strategy asks for a transient status).
const shared = Object.assign(new Error('503 Service Unavailable'), { status: 503, $metadata: { httpStatusCode: 503 } });
const fail = () => {
  calls++;
  return Promise.reject(shared);
};
const start =
  id === 'timer' ? () => new Promise((r) => setTimeout(r, SLEEP_MS)) : (await loadSubject(id)).retryOnce(SLEEP_MS);
const go = id === 'timer' ? start : () => start(fail);

// Allocated before the first reading: the array's slots are not the operations' cost.
const keep = new Array(n).fill(undefined);
await settleGc();
const before = process.memoryUsage().heapUsed;
for (let i = 0; i < n; i++) keep[i] = go();
// Let every operation fail once and reach its sleep.
for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
await settleGc();
const after = process.memoryUsage().heapUsed;

if (id !== 'timer' && calls !== n) throw new Error(`${id}: expected ${n} first attempts, saw ${calls}`);
let settled = 0;
for (const p of keep)
  p.then(
    () => settled++,
    () => settled++,
  );
await new Promise((r) => setImmediate(r));
if (settled !== 0) throw new Error(`${id}: ${settled} operations settled instead of waiting`);

process.stdout.write(
  `${JSON.stringify({ subject: id, node: process.version, bytesPerOp: (after - before) / n, n })}\n`,
);
process.exit(0);
