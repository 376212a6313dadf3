import { DEV } from '../core/dev.js';
import { LIMIT_MS, type Rule } from '../core/validate.js';
import type { Jitter } from './jitter.js';

/** The options every curve accepts besides its own, and `withOptions()` changes. All durations are milliseconds. */
export interface LimitOptions {
  /**
   * How delays are randomized: a value such as `fullJitter` (the default), `equalJitter`,
   * `noJitter` or `proportionalJitter(0.2)`. See {@link Jitter}.
   */
  readonly jitter?: Jitter;
  /**
   * Truncation: after `ceiling` failures the delay stops growing — rows after row `ceiling`
   * repeat it (802.3's backoff limit of 10; the Qiita article's N). Default: none.
   */
  readonly ceiling?: number;
  /**
   * Caps the un-randomized delay before jitter, so proportional or additive jitter can still
   * exceed it (Google's `maxIntervalMillis`, gRPC's `MAX_BACKOFF`). Default: none.
   */
  readonly maxIntervalMs?: number;
  /**
   * Hard cap: no delay is longer, with or without jitter. `Infinity` for none. Default: 20 s
   * for `exponential()` unless `maxIntervalMs` is given; none for the other curves.
   */
  readonly maxDelayMs?: number;
  /**
   * Total calls of the operation, the first included (`3` means one call and two retries).
   * Default 5, unless a finite `maxElapsedMs` stops the policy instead. `Infinity` retries
   * until success, on purpose.
   */
  readonly maxAttempts?: number;
  /**
   * Time budget of the whole operation: the executor gives up rather than sleep past it.
   * Default: none.
   */
  readonly maxElapsedMs?: number;
}

/** The limits every curve accepts besides `jitter`, with their rules. @internal */
export const LIMITS: Readonly<Record<Exclude<keyof LimitOptions, 'jitter'>, Rule>> = {
  ceiling: {
    whole: true,
    min: 1,
    infinity: true,
    ...(DEV && { fix: 'It is the failure count after which delays stop growing, such as 10.' }),
  },
  maxIntervalMs: LIMIT_MS,
  maxDelayMs: { infinity: true, ...(DEV && { fix: 'It caps every wait, such as 20000 for 20 s; Infinity for none.' }) },
  maxAttempts: {
    whole: true,
    min: 1,
    infinity: true,
    ...(DEV && { fix: '`maxAttempts` counts calls, the first included: 3 means one call and two retries.' }),
  },
  maxElapsedMs: LIMIT_MS,
};

/** The attempts a policy allows when neither `maxAttempts` nor a finite `maxElapsedMs` is given. @internal */
export const DEFAULT_ATTEMPTS = 5;
