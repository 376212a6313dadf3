// Success-path overhead of a composed pipeline, in one process: an attempt timeout, a retry, a
// circuit breaker and a concurrency limit around `() => Promise.resolve(1)`, beside the same
// composition in cockatiel (its `wrap` of retry, breaker and timeout — it has no concurrency
// limit) and p-retry's plain `pRetry(fn)`, against the bare call and the floor. Every subject is
// measured in the same process in interleaved rounds (bench/lib/success-path.mjs), so that drift
// and noise fall on all alike.
//
// `node figures/pipeline.mjs [--quick]` prints one JSON object:
//   { node, loadAverage: [before, after], subjects: { id: { nsPerCall, overBareNs, timesFloor } } }
// each the median over the rounds (mitata's p50 of each).
import * as root from 'ebb';
import * as resilience from 'ebb/resilience';
import { baseEntries, composedPipelines, entryOf, fn, printMedians } from '../lib/success-path.mjs';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 2 : 5;
const MIN_CPU_TIME_NS = (quick ? 120 : 300) * 1e6;

const { composed, standard } = composedPipelines({ ...root, ...resilience });
const c = await import('cockatiel-3');
const cockatiel = c.wrap(
  c.retry(c.handleAll, { maxAttempts: 3, backoff: new c.ExponentialBackoff() }),
  c.circuitBreaker(c.handleAll, { halfOpenAfter: 10_000, breaker: new c.ConsecutiveBreaker(5) }),
  c.timeout(10_000, c.TimeoutStrategy.Cooperative),
);
const { default: pRetry } = await import('p-retry-7');

const entries = baseEntries();
entries.push(await entryOf('ebb retry(fn)', () => root.retry(fn)));
entries.push(
  await entryOf('ebb pipeline: retrying, circuitBreaker, concurrencyLimit, timeout (per attempt)', () =>
    composed.execute(fn),
  ),
);
entries.push(await entryOf('ebb pipeline: the same inside a total timeout', () => standard.execute(fn)));
entries.push(await entryOf('cockatiel 3.2.1 wrap(retry, circuitBreaker, timeout)', () => cockatiel.execute(fn)));
entries.push(await entryOf('p-retry 7.1.1 pRetry(fn)', () => pRetry(fn)));

await printMedians(entries, ROUNDS, MIN_CPU_TIME_NS);
