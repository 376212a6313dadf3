import { Backoff, type BackoffPolicy, type BackoffRun } from '../backoff/backoff.js';
import { constant } from '../backoff/constant.js';
import { decorrelatedJitter } from '../backoff/decorrelated.js';
import { exponential } from '../backoff/exponential.js';
import { equalJitter } from '../backoff/jitter-equal.js';
import { fullJitter } from '../backoff/jitter-full.js';
import { noJitter } from '../backoff/jitter-none.js';
import { seeded } from '../core/random.js';
import { checkKeys, count, invalid, mistyped, nonNegative, optionsObject } from '../core/validate.js';
import { detached } from './detached.js';
import { EventQueue } from './event-queue.js';
import { atMost, SIM_LIMITS } from './limits.js';
import { type NetworkModel, networkDelay } from './network.js';
import { type ProgressCallback, progressOption } from './progress.js';

/** The strategies of Brooker's experiment, by the names the blog post uses. */
export type BrookerStrategy = 'none' | 'exponential' | 'full' | 'equal' | 'decorrelated';

/** Options of {@link brookerStrategies}. */
export interface BrookerOptions {
  /** `base` in the post's formulas, in ms. Default 5. */
  readonly baseMs?: number;
  /** `cap`, in ms. Default 2000. */
  readonly capMs?: number;
}

/**
 * The five strategies of M. Brooker, "Exponential Backoff and Jitter" (AWS Architecture Blog,
 * 2015), as ebb policies, with the post's `base` and `cap`. Its simulator
 * (aws-samples/aws-arch-backoff-simulator) computes `expo(n) = min(cap, base · 2^n)` for the n-th
 * failed attempt, n from 1, so the first wait tops out at `2 · base`:
 *
 * - `none`: retry at once — `constant({ delayMs: 0 })`.
 * - `exponential`: `min(cap, base · 2^n)` — `exponential({ initialDelayMs: 2·base, multiplier: 2, maxDelayMs: cap })`.
 * - `full`: `U[0, min(cap, base · 2^n)]` — the same with `jitter: fullJitter`.
 * - `equal`: `v/2 + U[0, v/2]` — the same with `jitter: equalJitter`.
 * - `decorrelated`: `min(cap, U[base, 3 · previous])` from `previous = base` —
 *   `exponential({ initialDelayMs: base, multiplier: 3, maxDelayMs: cap, jitter: decorrelatedJitter })`.
 *
 * None of them stops by itself, as in the post: each says `maxAttempts: Infinity` explicitly, so
 * `retry()` accepts them too.
 */
export function brookerStrategies(options?: BrookerOptions): Record<BrookerStrategy, Backoff> {
  const where = 'brookerStrategies()';
  const o = optionsObject(where, options) as BrookerOptions;
  checkKeys(where, o, ['baseMs', 'capMs']);
  const base = nonNegative(where, 'baseMs', o.baseMs, 5);
  const cap = nonNegative(where, 'capMs', o.capMs, 2_000);
  if (base === 0) invalid(where, 'baseMs', 0, 'a number > 0', 'The post uses 5 ms.');
  const expo = { initialDelayMs: 2 * base, multiplier: 2, maxDelayMs: cap, maxAttempts: Infinity };
  return {
    none: constant({ delayMs: 0, jitter: noJitter, maxAttempts: Infinity }),
    exponential: exponential({ ...expo, jitter: noJitter }),
    full: exponential({ ...expo, jitter: fullJitter }),
    equal: exponential({ ...expo, jitter: equalJitter }),
    decorrelated: exponential({
      initialDelayMs: base,
      multiplier: 3,
      maxDelayMs: cap,
      jitter: decorrelatedJitter,
      maxAttempts: Infinity,
    }),
  };
}

/** Options of {@link simulateContention}. */
export interface ContentionOptions {
  /** Clients, each making one write. Default 50. */
  readonly clients?: number;
  /** The policies to compare, by name. Default {@link brookerStrategies}(). */
  readonly strategies?: Readonly<Record<string, BackoffPolicy>>;
  /** Runs per strategy; results are averaged. Default 100, as in the post. */
  readonly runs?: number;
  /** One-way network delay. Default `|N(10, 2)|` ms. */
  readonly network?: NetworkModel;
  /** Seed: each strategy's runs use `seeded(seed)` afresh. Default 1. */
  readonly seed?: number;
  /** Called as the runs progress (done and total in runs). */
  readonly onProgress?: ProgressCallback;
}

/** One strategy's averages over the runs of {@link simulateContention}. */
export interface ContentionResult {
  readonly strategy: string;
  readonly clients: number;
  readonly runs: number;
  /** Writes sent to the server per run ("calls" in the post: the work done). */
  readonly calls: number;
  /** Time until the last client finished, in ms. */
  readonly timeMs: number;
  /** Clients per run whose policy gave up before their write succeeded. */
  readonly gaveUp: number;
}

const READ = 0;
const READ_REPLY = 1;
const WRITE = 2;
const WRITE_REPLY = 3;

/**
 * Brooker's contention experiment ("Exponential Backoff and Jitter", AWS Architecture Blog,
 * 2015): `clients` clients start together, and each makes one optimistic-concurrency write to
 * one shared row. A client reads the row's version, then writes conditionally on it; the write
 * fails if another client's write landed in between, and the client backs off (`run.next()` of
 * its own run of the strategy) and starts over. Each message crosses the network in
 * `|N(10, 2)|` ms. A run ends when the last client is done; its time and its count of writes
 * ("calls", the work) are averaged over `runs` runs.
 *
 * The post's findings, which the tests check at 50 clients: un-jittered exponential backoff
 * does more work and takes longer than any jittered strategy; full and decorrelated jitter
 * finish in a fraction of its time with fewer calls; equal jitter sits between them.
 *
 * @example
 * simulateContention({ clients: 50, runs: 20 }).map((r) => [r.strategy, r.calls, r.timeMs])
 */
export function simulateContention(options?: ContentionOptions): ContentionResult[] {
  const where = 'simulateContention()';
  const o = optionsObject(where, options) as ContentionOptions;
  checkKeys(where, o, ['clients', 'strategies', 'runs', 'network', 'seed', 'onProgress']);
  const n = atMost(
    where,
    'clients',
    count(where, 'clients', o.clients, 50, 1, false, 'The post uses 10 to 50 clients.'),
    SIM_LIMITS.clients,
    'The post uses 10 to 50 clients.',
  );
  const runs = atMost(
    where,
    'runs',
    count(where, 'runs', o.runs, 100, 1, false, 'The post averages 100 runs.'),
    SIM_LIMITS.runs / n,
    'Fewer runs or clients: runs × clients is bounded.',
  );
  const seed = count(where, 'seed', o.seed, 1, 0, false, 'Any whole number; equal seeds give equal runs.');
  const onProgress = progressOption(where, o.onProgress);
  const strategies = o.strategies ?? brookerStrategies();
  const entries = Object.entries(optionsObject(where, strategies));
  if (entries.length === 0) mistyped(where, 'strategies', strategies, 'an object with at least one policy');
  for (const [name, policy] of entries) {
    if (!(policy instanceof Backoff) && !(typeof policy === 'object' && policy && typeof policy.start === 'function')) {
      mistyped(
        where,
        `strategies.${name}`,
        policy,
        'a backoff policy',
        'Take one from brookerStrategies() or presets.',
      );
    }
  }
  networkDelay(where, o.network, Math.random); // validates before any run

  const queue = new EventQueue(n);
  const kind = new Uint8Array(n);
  const seen = new Float64Array(n);
  const ok = new Uint8Array(n);
  const policyRuns: BackoffRun[] = new Array(n);
  const results: ContentionResult[] = [];
  let done = 0;
  for (const [name, policy] of entries) {
    const random = seeded(seed);
    const delay = networkDelay(where, o.network, random);
    let calls = 0;
    let time = 0;
    let gaveUp = 0;
    for (let r = 0; r < runs; r++) {
      queue.clear();
      let version = 0;
      let last = 0;
      for (let i = 0; i < n; i++) {
        kind[i] = READ;
        policyRuns[i] = policy.start(random);
        queue.push(delay(), i);
      }
      while (queue.size > 0) {
        const t = queue.peekTime();
        const i = queue.pop();
        switch (kind[i]) {
          case READ:
            seen[i] = version;
            kind[i] = READ_REPLY;
            queue.push(t + delay(), i);
            break;
          case READ_REPLY:
            kind[i] = WRITE;
            queue.push(t + delay(), i);
            break;
          case WRITE:
            calls++;
            ok[i] = seen[i] === version ? 1 : 0;
            if (ok[i]) version++;
            kind[i] = WRITE_REPLY;
            queue.push(t + delay(), i);
            break;
          default: {
            last = t;
            if (ok[i]) break;
            const wait = (policyRuns[i] as BackoffRun).next();
            if (wait < 0) {
              gaveUp++;
              break;
            }
            kind[i] = READ;
            queue.push(t + delay() + wait, i);
          }
        }
      }
      time += last;
      onProgress?.(++done, runs * entries.length);
    }
    results.push({ strategy: name, clients: n, runs, calls: calls / runs, timeMs: time / runs, gaveUp: gaveUp / runs });
  }
  return detached(results);
}
