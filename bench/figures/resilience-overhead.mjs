// Success-path overhead of the ebb/resilience mechanisms, beside cockatiel 3's breaker: the time
// per call of an operation that returns a resolved promise at once, through
//   floor            the operation alone (awaited);
//   retry            ebb's retry() with no hook;
//   retry + breaker  a pipeline: retrying() with a circuitBreaker inside;
//   retry + limit    a pipeline: retrying() with a concurrencyLimit (aimd) inside;
//   retry + limit (bdp)  the same with bdp(): per sample a delivery-rate sample and a scan of its
//                    10 rounds' means;
//   breaker.run      the breaker without retry();
//   hedging.run      hedging with a fixed delay (one hedge timer for all calls, re-armed lazily);
//   hedging.run (learned)  hedging with its defaults: a learned p95 delay (a sorted window of the
//                    last 1,000 latencies updated per call) and hedgeBudget();
//   hedging.run, signal read  the fixed-delay hedging with an operation that reads its attempt's
//                    `signal` (as one that passes it to fetch does): the AbortController is made;
//   AbortController  `new AbortController()` and the operation called with its signal: what any
//                    call that hands its attempt a fresh signal pays (hedging does, once a call);
//   cockatiel        cockatiel 3.2.1's circuitBreaker(handleAll, ConsecutiveBreaker(5)).execute.
// Each is run ROUNDS times for N calls (sequentially awaited); the median ns per call and its
// ratio to the floor are printed as one JSON document. Timing on a shared machine: read the
// ratios, not the absolute numbers.
//
// `node figures/resilience-overhead.mjs [--quick] [--before=DIR]`: with --before, DIR is an
// older build of ebb (a copy of packages/ebb/dist) whose hedging subjects run too, in the same
// rounds, interleaved with this build's: a paired before/after in one process.
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { pipeline, retry, retrying } from 'ebb';
import { aimd, bdp, circuitBreaker, concurrencyLimit, hedging } from 'ebb/resilience';

const quick = process.argv.includes('--quick');
const N = quick ? 20_000 : 100_000;
const ROUNDS = quick ? 3 : 7;
const op = () => Promise.resolve(1);

const c = await import('cockatiel-3');
const cockatiel = c.circuitBreaker(c.handleAll, { halfOpenAfter: 10_000, breaker: new c.ConsecutiveBreaker(5) });
const breaker = circuitBreaker();
const limiter = concurrencyLimit({ algorithm: aimd() });
const bdpLimiter = concurrencyLimit({ algorithm: bdp() });
const withBreaker = pipeline([retrying(), breaker]);
const withLimit = pipeline([retrying(), limiter]);
const withBdp = pipeline([retrying(), bdpLimiter]);
const hedger = hedging({ delayMs: 1_000 });
const learned = hedging();
const withSignal = (signal) => Promise.resolve(signal);
const readsSignal = ({ signal }) => Promise.resolve(signal);
const beforeDir = process.argv.find((a) => a.startsWith('--before='))?.slice('--before='.length);
const before = beforeDir ? await import(pathToFileURL(`${beforeDir}/resilience.js`).href) : undefined;
const hedgerBefore = before?.hedging({ delayMs: 1_000 });
const learnedBefore = before?.hedging();

const subjects = {
  floor: () => op(),
  retry: () => retry(op),
  'retry + breaker': () => withBreaker.execute(op),
  'retry + limit': () => withLimit.execute(op),
  'retry + limit (bdp)': () => withBdp.execute(op),
  'breaker.run': () => breaker.run(op),
  'hedging.run': () => hedger.run(op),
  'hedging.run (learned)': () => learned.run(op),
  'hedging.run, signal read': () => hedger.run(readsSignal),
  ...(before && {
    'hedging.run (before)': () => hedgerBefore.run(op),
    'hedging.run (learned, before)': () => learnedBefore.run(op),
  }),
  'AbortController + op(signal)': () => withSignal(new AbortController().signal),
  'cockatiel 3.2.1 breaker': () => cockatiel.execute(op),
};

async function time(f) {
  for (let i = 0; i < 1_000; i++) await f();
  const t = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await f();
  return Number(process.hrtime.bigint() - t) / N;
}

const load0 = loadavg()[0];
const samples = Object.fromEntries(Object.keys(subjects).map((k) => [k, []]));
for (let r = 0; r < ROUNDS; r++) for (const [k, f] of Object.entries(subjects)) samples[k].push(await time(f));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const floor = median(samples.floor);
const results = Object.entries(samples).map(([subject, xs]) => ({
  subject,
  nsPerCall: Math.round(median(xs)),
  ratioToFloor: Math.round((median(xs) / floor) * 100) / 100,
}));
process.stdout.write(`${JSON.stringify({ calls: N, rounds: ROUNDS, loadAverage: [load0, loadavg()[0]], results })}\n`);
