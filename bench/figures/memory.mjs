// Heap bytes per pending retry: N operations that failed once and now sit in their backoff
// sleep, against N bare pending timers. Run as `node --expose-gc figures/memory.mjs SUBJECT N`;
// prints { subject, bytesPerOp }.
import { subjects } from '../subjects.mjs';

const [name, nText] = process.argv.slice(2);
const n = Number(nText ?? 100_000);
const SLEEP_MS = 3_600_000;

async function settleGc() {
  for (let i = 0; i < 4; i++) {
    globalThis.gc();
    await new Promise((r) => setImmediate(r));
  }
}

await settleGc();
const before = process.memoryUsage().heapUsed;
const keep = [];
if (name === 'timer') {
  for (let i = 0; i < n; i++) keep.push(new Promise((r) => setTimeout(r, SLEEP_MS)));
} else {
  const subject = (await subjects()).find((s) => s.name === name);
  if (!subject) throw new Error(`unknown subject ${name}`);
  const start = subject.pendingAfterOneFailure(SLEEP_MS);
  for (let i = 0; i < n; i++) keep.push(start());
}
// Let every operation fail once and reach its sleep.
for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
await settleGc();
const after = process.memoryUsage().heapUsed;
process.stdout.write(`${JSON.stringify({ subject: name, bytesPerOp: (after - before) / n, pending: keep.length })}\n`);
process.exit(0);
