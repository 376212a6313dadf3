import { Backoff, type BackoffPolicy, saidForever } from './backoff.js';

/**
 * Refuses a `Backoff` that would retry forever by accident: no `maxAttempts`, no `maxElapsedMs`,
 * and no explicit `maxAttempts: Infinity`. `retry()` and `poll()` call it before the first
 * attempt, so `retry(op, { backoff: exponential() })` fails at once with a `RangeError` that
 * names the fix, instead of retrying in lockstep for ever with waits that never stop growing.
 *
 * A policy that should run until it succeeds says so: `exponential({ maxAttempts: Infinity })`
 * or `.withMaxAttempts(Infinity)`. Presets whose source retries until success (`grpcConnect`,
 * `truncatedBinary`) say it for their caller; the others stop by attempts or by a time budget.
 * A custom `BackoffPolicy` (not a `Backoff`) is the caller's own business and is not refused.
 *
 * @param where the caller, for the message, such as `'retry()'`.
 * @internal
 */
export function assertBounded(where: string, policy: BackoffPolicy): void {
  if (
    policy instanceof Backoff &&
    policy.maxAttempts === Infinity &&
    policy.maxElapsedMs === Infinity &&
    !saidForever(policy)
  ) {
    throw new RangeError(
      `${where}: the backoff policy never stops (no maxAttempts, no maxElapsedMs) — add maxAttempts: 5 or maxElapsedMs ` +
        '(or .withMaxAttempts(5)), or say maxAttempts: Infinity (.withMaxAttempts(Infinity)) to retry forever.',
    );
  }
}
