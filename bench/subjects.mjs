// The libraries measured, each driven the way its own documentation shows. Loading is lazy
// (`load()`), so that the outage figure can install fake timers before any library reads the
// clock, and so that a runtime below a peer's `engines` never loads it.
//
// Every loaded subject provides:
//   successPath(fn)     → () => Promise   one call that succeeds at once, with the library's defaults
//   retryOnce(ms)       → (op) => Promise  at most two attempts, exactly `ms` ms apart (no jitter)
//   outage.default(op)  → Promise          the library's default call
//   outage.recommended(op) → Promise       its documented, jittered configuration
//   outage.patient(op)  → Promise          (ebb only) its default policy with a 2-minute budget
//                                          instead of 5 attempts: ebb's jitter when clients
//                                          outlast the outage, as the peers' defaults do
//   calls               { default, recommended, … }  those calls, as Markdown
import { readFileSync } from 'node:fs';
import { reference } from './lib/reference.mjs';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
/** The peers that need Node.js >= 22, installed apart (bench/node22/package.json). */
const node22 = JSON.parse(readFileSync(new URL('./node22/package.json', import.meta.url), 'utf8'));
/** The exact version pinned in bench/package.json or bench/node22 ("npm:p-retry@7.1.1" → "7.1.1"). */
const pinned = (dep) => (pkg.devDependencies[dep] ?? node22.devDependencies[dep]).replace(/^npm:.*@/, '');
const ebbVersion = JSON.parse(readFileSync(new URL('../packages/ebb/package.json', import.meta.url), 'utf8')).version;

/**
 * The error type the AWS SDK's retry middleware derives from an error before it asks the
 * strategy for a retry token (@smithy/core, retry/middleware-retry/retryMiddleware.js,
 * getRetryErrorType, with the status lists of service-error-classification/constants.js):
 * 429 is THROTTLING; 500, 502, 503, 504 are TRANSIENT; other 5xx SERVER_ERROR (not retried).
 */
function awsErrorType(error) {
  const status = error?.$metadata?.httpStatusCode ?? error?.status;
  if (status === 429) return 'THROTTLING';
  if (status === 500 || status === 502 || status === 503 || status === 504) return 'TRANSIENT';
  if (status >= 500 && status <= 599) return 'SERVER_ERROR';
  return 'CLIENT_ERROR';
}

/**
 * One call through a StandardRetryStrategy, driven as the SDK's retry middleware drives it
 * (retryMiddleware.js, the RetryStrategyV2 branch): take the initial token, call, and on failure
 * ask `refreshRetryTokenForRetry` for the next token (it refuses by throwing: then the call
 * fails with the last error), sleep the token's `getRetryDelay()`, try again; `recordSuccess`
 * on success. In @smithy/util-retry 4.6 the strategy itself waits inside
 * `refreshRetryTokenForRetry` and hands back a token whose delay is 0; the loop still honours
 * the token's delay, as the middleware does.
 */
async function awsMiddlewareCall(strategy, operation) {
  let token = await strategy.acquireInitialRetryToken('');
  for (;;) {
    try {
      const value = await operation();
      strategy.recordSuccess(token);
      return value;
    } catch (error) {
      try {
        token = await strategy.refreshRetryTokenForRetry(token, { error, errorType: awsErrorType(error) });
      } catch {
        throw error;
      }
      const delay = token.getRetryDelay();
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/**
 * Operations per StandardRetryStrategy in `retryOnce`: a strategy is one SDK client, and its
 * retry quota (500 tokens, 14 per transient retry in the 2026 configuration this version
 * ships) admits 35 retries; 30 operations share one, so none is refused.
 */
const AWS_OPERATIONS_PER_CLIENT = 30;

/** `module`: a package name, or a file of bench/node22 that re-exports one. */
async function loadCockatiel(module) {
  const { ConstantBackoff, ExponentialBackoff, handleAll, retry } = await import(module);
  // The README's example ("retry three times, with exponential backoff"); one policy serves
  // many calls, as the README says a builder can.
  const documented = retry(handleAll, { maxAttempts: 3, backoff: new ExponentialBackoff() });
  // The default: `retry(policy, {})` retries forever with ConstantBackoff(0).
  const bare = retry(handleAll, {});
  return {
    successPath: (fn) => () => documented.execute(fn),
    retryOnce: (ms) => {
      const policy = retry(handleAll, { maxAttempts: 1, backoff: new ConstantBackoff(ms) });
      return (op) => policy.execute(op);
    },
    outage: { default: (op) => bare.execute(op), recommended: (op) => documented.execute(op) },
    calls: {
      default: '`retry(handleAll, {}).execute(op)`',
      recommended: '`retry(handleAll, { maxAttempts: 3, backoff: new ExponentialBackoff() }).execute(op)`',
    },
  };
}

/** `module`: a package name, or a file of bench/node22 that re-exports one. */
async function loadPRetry(module) {
  const { default: pRetry } = await import(module);
  return {
    successPath: (fn) => () => pRetry(fn),
    retryOnce: (ms) => (op) => pRetry(op, { retries: 1, minTimeout: ms, factor: 1 }),
    outage: {
      default: (op) => pRetry(op),
      // The README's example ({ retries: 5 }) with its jitter option, `randomize`.
      recommended: (op) => pRetry(op, { retries: 5, randomize: true }),
    },
    calls: { default: '`pRetry(op)`', recommended: '`pRetry(op, { retries: 5, randomize: true })`' },
  };
}

/**
 * Every subject, in table order. `minNode` is the lowest Node.js major its `engines` allows;
 * `outageConfigs` the outage configurations it has (default: default and recommended).
 */
export const SUBJECTS = [
  {
    id: 'ebb',
    label: `ebb ${ebbVersion}`,
    minNode: 20,
    outageConfigs: ['default', 'recommended', 'patient'],
    async load() {
      const { constant, noJitter, presets, retry, withOptions } = await import('ebb');
      const patient = withOptions(presets.default, { maxAttempts: Infinity, maxElapsedMs: 120_000 });
      return {
        successPath: (fn) => () => retry(fn),
        retryOnce: (ms) => {
          const backoff = constant({ delayMs: ms, jitter: noJitter, maxAttempts: 2 });
          return (op) => retry(op, { backoff });
        },
        // presets.default (100 ms × 2, full jitter, 20 s cap, 5 attempts) is the default and
        // the README's recommendation: the two rows are the same call.
        outage: {
          default: (op) => retry(op),
          recommended: (op) => retry(op),
          patient: (op) => retry(op, { backoff: patient }),
        },
        calls: {
          default: '`retry(op)`',
          recommended: '`retry(op)`: the default is the recommendation',
          patient:
            '`retry(op, { backoff: withOptions(presets.default, { maxAttempts: Infinity, maxElapsedMs: 120_000 }) })`',
        },
      };
    },
  },
  {
    id: 'reference',
    label: 'reference loop',
    minNode: 20,
    async load() {
      return {
        successPath: (fn) => () => reference(fn),
        retryOnce: (ms) => {
          const delay = () => ms;
          return (op) => reference(op, 2, delay);
        },
        outage: { default: (op) => reference(op), recommended: (op) => reference(op) },
        calls: { default: '`reference(op)`', recommended: '`reference(op)`' },
      };
    },
  },
  {
    id: 'p-retry-7',
    label: `p-retry ${pinned('p-retry-7')}`,
    minNode: 20,
    load: () => loadPRetry('p-retry-7'),
  },
  {
    id: 'p-retry-9',
    label: `p-retry ${pinned('p-retry-9')}`,
    minNode: 22,
    load: () => loadPRetry('./node22/p-retry-9.mjs'),
  },
  {
    id: 'exponential-backoff',
    label: `exponential-backoff ${pinned('exponential-backoff')}`,
    minNode: 20,
    async load() {
      const { backOff } = await import('exponential-backoff');
      return {
        successPath: (fn) => () => backOff(fn),
        retryOnce: (ms) => (op) => backOff(op, { numOfAttempts: 2, startingDelay: ms, timeMultiple: 1 }),
        outage: { default: (op) => backOff(op), recommended: (op) => backOff(op, { jitter: 'full' }) },
        calls: { default: '`backOff(op)`', recommended: "`backOff(op, { jitter: 'full' })`" },
      };
    },
  },
  {
    id: 'async-retry',
    label: `async-retry ${pinned('async-retry')}`,
    minNode: 20,
    async load() {
      const { default: asyncRetry } = await import('async-retry');
      return {
        successPath: (fn) => () => asyncRetry(fn),
        retryOnce: (ms) => (op) => asyncRetry(op, { retries: 1, minTimeout: ms, factor: 1, randomize: false }),
        // The default already randomizes (×U[1, 2]); the README's example sets retries: 5.
        outage: { default: (op) => asyncRetry(op), recommended: (op) => asyncRetry(op, { retries: 5 }) },
        calls: { default: '`asyncRetry(op)`', recommended: '`asyncRetry(op, { retries: 5 })`' },
      };
    },
  },
  {
    id: 'cockatiel-3',
    label: `cockatiel ${pinned('cockatiel-3')}`,
    minNode: 20,
    load: () => loadCockatiel('cockatiel-3'),
  },
  {
    id: 'cockatiel-4',
    label: `cockatiel ${pinned('cockatiel-4')}`,
    minNode: 22,
    load: () => loadCockatiel('./node22/cockatiel-4.mjs'),
  },
  {
    id: 'aws',
    label: `@smithy/util-retry ${pinned('@smithy/util-retry')}`,
    minNode: 20,
    async load() {
      const { StandardRetryStrategy } = await import('@smithy/util-retry');
      // One strategy is one SDK client; the success path shares one, as calls on a client do.
      const client = new StandardRetryStrategy();
      return {
        successPath: (fn) => () => awsMiddlewareCall(client, fn),
        retryOnce: (ms) => {
          const backoff = { computeNextBackoffDelay: () => ms, setDelayBase() {} };
          let strategy;
          let calls = 0;
          return (op) => {
            if (calls++ % AWS_OPERATIONS_PER_CLIENT === 0) {
              strategy = new StandardRetryStrategy({ maxAttempts: 2, backoff });
            }
            return awsMiddlewareCall(strategy, op);
          };
        },
        // Each simulated client is its own SDK client with its own retry quota. Standard mode
        // (full jitter, 3 attempts) is both the default and AWS's recommendation.
        outage: {
          default: (op) => awsMiddlewareCall(new StandardRetryStrategy(), op),
          recommended: (op) => awsMiddlewareCall(new StandardRetryStrategy(), op),
        },
        calls: {
          default: 'the SDK middleware loop over `new StandardRetryStrategy()`, one per client',
          recommended: 'the same: standard mode is the recommendation',
        },
      };
    },
  },
];

/** The subjects this Node.js major may run (their `engines`), or those named in `ids`. */
export function subjectsFor(major = Number(process.versions.node.split('.')[0]), ids = undefined) {
  return SUBJECTS.filter((s) => s.minNode <= major && (ids === undefined || ids.includes(s.id)));
}

/** Loads the subjects this runtime may run (all, or those named), each with its id and label. */
export async function loadSubjects(ids = undefined) {
  const out = [];
  for (const s of subjectsFor(undefined, ids)) out.push({ id: s.id, label: s.label, ...(await s.load()) });
  return out;
}

/** Loads one subject by id; throws naming the known ids. */
export async function loadSubject(id) {
  const s = SUBJECTS.find((x) => x.id === id);
  if (!s) throw new Error(`unknown subject ${id}; subjects: ${SUBJECTS.map((x) => x.id).join(', ')}`);
  return { id: s.id, label: s.label, ...(await s.load()) };
}
