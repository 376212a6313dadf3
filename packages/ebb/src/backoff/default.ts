import { Backoff } from './backoff.js';
import { exponentialCurve } from './exponential.js';
import { fullJitter } from './jitter-full.js';
import { DEFAULT_ATTEMPTS } from './limits.js';

/**
 * ebb's default policy (`presets.default`, and what `retry()` uses when given no `backoff`):
 * exponential from 100 ms, ×2, capped at 20 s, full jitter, 5 attempts in all. It is
 * `exponential()` with no options (default.test.ts holds the two equal).
 *
 * Why these numbers:
 * - **Full jitter** spreads a crowd of clients that failed together over the whole window, so
 *   they do not come back together; in Brooker's simulation (AWS Architecture Blog, 2015,
 *   reproduced by `ebb simulate contention`) it does the least work and finishes first.
 * - **100 ms, ×2** retries quickly after a blip (the first wait averages 50 ms) and halves the
 *   retry rate each round when the trouble persists.
 * - **20 s cap** is the AWS SDKs' `MAXIMUM_RETRY_DELAY`: long enough for a service to shed
 *   load, short enough that a client is still there when it recovers.
 * - **5 attempts** bound the extra load a caller adds during an outage to at most 5× and the
 *   wait to at most 1.5 s (100 + 200 + 400 + 800 ms), so failures surface quickly; retry
 *   budgets (`ebb/rate`) bound the fleet-wide amplification further.
 */
export const defaultBackoff: Backoff = /* @__PURE__ */ new Backoff(
  // exponential() with no options, built from its values: they need no checking, and a bundle
  // that uses only the default policy (`retry(op)`, `withRetry(fetch)`) then carries neither
  // `exponential()` nor the option checks behind it. default.test.ts holds the two equal.
  [
    {
      curve: exponentialCurve(100, 2),
      jitter: fullJitter,
      ceiling: Infinity,
      maxIntervalMs: Infinity,
      maxDelayMs: 20_000,
      rows: Infinity,
    },
  ],
  DEFAULT_ATTEMPTS,
  Infinity,
);

/**
 * The default policy in one line, as it prints without the curve's name: `100 ms ×2, 20 s cap,
 * full jitter, 5 attempts`. The preset catalog's title (and through it the CLI's help) reads
 * this, so that a change of the values changes every description. @internal
 */
export function defaultSummary(): string {
  return String(defaultBackoff).replace(/^exponential /, '');
}
