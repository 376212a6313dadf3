import { check, checkKeys, optionsObject, type Rule } from '../core/validate.js';
import { Backoff } from './backoff.js';
import { exponentialCurve } from './exponential.js';
import { fullJitter } from './jitter-full.js';

/** Options of {@link grpcRetryPolicy}: gRFC A6's `retryPolicy`, durations in ms. */
export interface GrpcRetryPolicyOptions {
  /** Calls in all, the original included; required, >= 2. Values above `maxAttemptsLimit` count as the limit. */
  readonly maxAttempts: number;
  /** `initialBackoff` in ms; required, > 0. */
  readonly initialBackoffMs: number;
  /** `maxBackoff` in ms; required, > 0. */
  readonly maxBackoffMs: number;
  /** `backoffMultiplier`; required, > 0 (below 1 the waits shrink, as A6 allows). */
  readonly backoffMultiplier: number;
  /** The client-side cap on `maxAttempts`; default 5 (A6, "Limits on Retries and Hedges"). */
  readonly maxAttemptsLimit?: number;
}

/** A finite number > 0, as A6 requires of both backoffs and the multiplier. */
const positive = (fix: string): Rule => ({ min: Number.MIN_VALUE, expected: 'a finite number > 0', fix });

/**
 * A gRPC retry policy as gRFC A6 defines it ("Exponential Backoff"): retry n waits
 * `random(0, min(initialBackoff · backoffMultiplier^(n−1), maxBackoff))` — full jitter on a
 * capped curve — and `maxAttempts` counts calls, the original included, capped on the client at
 * 5: "higher values will be treated as equal to the maximum value". Validation follows A6's
 * service-config comments: `maxAttempts` >= 2, both backoffs and the multiplier > 0.
 *
 * Where implementations differ: grpc-go and grpc-java draw `random(0, x)` as A6 does; grpc-js
 * (1.14.7, `retrying-call.js`) instead multiplies by a ±20 % jitter. Pair with `tokenBudget()`
 * from `ebb/rate` (A6's retry throttling).
 *
 * @example
 * // A6's example: 4 attempts, .1s doubling to 1s
 * grpcRetryPolicy({ maxAttempts: 4, initialBackoffMs: 100, maxBackoffMs: 1_000, backoffMultiplier: 2 })
 */
export function grpcRetryPolicy(options: GrpcRetryPolicyOptions): Backoff {
  const where = 'grpcRetryPolicy()';
  const o = optionsObject(where, options) as Partial<GrpcRetryPolicyOptions>;
  checkKeys(where, o, ['maxAttempts', 'initialBackoffMs', 'maxBackoffMs', 'backoffMultiplier', 'maxAttemptsLimit']);
  const fixAttempts = 'A6 requires 2 or more: the original call and at least one retry.';
  const attempts = check(where, 'maxAttempts', o.maxAttempts, { whole: true, min: 2, fix: fixAttempts });
  const limit = check(
    where,
    'maxAttemptsLimit',
    o.maxAttemptsLimit,
    { whole: true, min: 2, fix: 'gRPC clients default to 5.' },
    5,
  );
  const initial = check(where, 'initialBackoffMs', o.initialBackoffMs, positive('For example 100 (A6: ".1s").'));
  const max = check(where, 'maxBackoffMs', o.maxBackoffMs, positive('For example 1000 (A6: "1s").'));
  const multiplier = check(where, 'backoffMultiplier', o.backoffMultiplier, positive('For example 2.'));
  return new Backoff(
    [
      {
        curve: exponentialCurve(initial, multiplier),
        jitter: fullJitter,
        ceiling: Infinity,
        maxIntervalMs: max,
        maxDelayMs: Infinity,
        rows: Infinity,
      },
    ],
    attempts < limit ? attempts : limit,
    Infinity,
  );
}
