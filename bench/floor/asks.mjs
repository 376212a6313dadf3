// The asks of the typical import beyond the floor (bench/floor/floor.mjs), in the order
// bench/figures/floor.mjs adds them, and how a build of the prototype turns them on.
import { fileURLToPath } from 'node:url';
import { bundleSize } from '../lib/bundle-size.mjs';

/** The prototype's source. */
export const FLOOR_SOURCE = fileURLToPath(new URL('./floor.mjs', import.meta.url));

/** [flag, what it adds]; `messages` is a build (development / production), not a row. */
export const ASKS = [
  ['PRINTING', 'policies print: toString, toJSON, inspect, formatMs'],
  ['UNKNOWN', 'unknown options refused (retry(), exponential())'],
  ['RULE', 'default isFailure: bugs (TypeError, …) are no failure, a failed fetch is'],
  ['HINTS', 'server hints: retryAfterMs, maxRetryAfterMs, throttled'],
  ['BUDGET', 'a retry budget hook (tryAcquireRetry, recordSuccess, recordFailure)'],
  ['HOOKS', 'four hooks: onFailedAttempt, onRetry, onGiveUp, onSuccess'],
  ['CLOCK', 'clock (checked now, sleep), random (checked draws), unref'],
  ['ELAPSED', 'a time budget: maxElapsedMs, elapsedMs in contexts and RetryError'],
  ['QUEUE', 'the run as one object on its timer (memory per waiting retry); abort cuts an attempt'],
  ['LAZY', 'no clock reading on the success path unless something reads elapsed time'],
  ['FAST', 'the success path: attempt 1 as the operation’s promise and one reaction'],
  ['GUARD', 'a thrown value’s properties read inside a try (a throwing getter reads as absent)'],
];

/** esbuild's `define` for the asks in `on` (flag names), `messages` choosing the full messages. */
export const defineAsks = (on, messages) => {
  const define = { ASK_MESSAGES: String(Boolean(messages)) };
  for (const [flag] of ASKS) define[`ASK_${flag}`] = String(on.includes(flag));
  return define;
};

/** The typical import written against the prototype, as bench/figures/size.mjs writes it against ebb. */
export const typicalEntry = `import { exponential, retry } from ${JSON.stringify(FLOOR_SOURCE)};
const backoff = exponential({ initialDelayMs: 100, maxDelayMs: 20_000, maxAttempts: 5 });
export const call = (op) => retry(op, { backoff });`;

/** The prototype with the asks in `on`: the whole module (every export) or the typical import, bundled. */
export const buildFloor = (
  on,
  { messages = false, entry = `export * from ${JSON.stringify(FLOOR_SOURCE)};`, minify = true } = {},
) => bundleSize(entry, { define: defineAsks(on, messages), minify });
