import { checkKeys, count, invalid, optionsObject } from '../core/validate.js';
import type { BudgetSuccess, RetryBudget } from '../retry/options.js';

/** Options of {@link tokenBudget}. */
export interface TokenBudgetOptions {
  /** The bucket's size and starting level; retries stop at or below half of it. A whole number > 0. Default 10. */
  readonly maxTokens?: number;
  /** Tokens a success puts back, with at most 3 decimals (gRPC's precision). Default 0.1. */
  readonly tokenRatio?: number;
}

/** The budget {@link tokenBudget} returns. */
export interface TokenBudget extends RetryBudget {
  /** Takes one token (not below 0). `retry()` calls it for every retryable failure. */
  recordFailure(error?: unknown): void;
  /** True while more than `maxTokens / 2` tokens remain. */
  tryAcquireRetry(error?: unknown): boolean;
  /** Puts `tokenRatio` back (not above `maxTokens`). */
  recordSuccess(context?: BudgetSuccess): void;
  /** Tokens now, from 0 to `maxTokens`. */
  readonly tokens: number;
}

/**
 * gRPC's retry throttling (gRFC A6, `retryThrottling`) as a retry budget: a bucket of
 * `maxTokens` tokens, full at first. Every retryable failure takes 1 token (never below 0),
 * every successful operation puts `tokenRatio` back (never above `maxTokens`), and a retry is
 * allowed only while more than `maxTokens / 2` remain. So retries stop once failures outnumber
 * successes by about `1 / tokenRatio` to 1 — 10 % with the default 0.1 — and resume as soon as
 * successes lift the bucket over half.
 *
 * Counted in thousandths of a token as gRPC's C core does, so that 0.1 added ten times is
 * exactly 1; the decrement-then-check order follows grpc-go's `retryThrottler.throttle()`,
 * which counts the failure even when no retry could follow (the last attempt included). The
 * gRFC's example values are the defaults: `maxTokens` 10, `tokenRatio` 0.1.
 *
 * **When to use:** any client that should stop retrying, fleet-wide in its process, while a
 * service is mostly failing. Share one budget per service: pass the same object as `budget`
 * to every `retry()`.
 *
 * **Gotchas:** the first request is never refused, only retries. During a total outage the
 * budget allows `maxTokens / 2` retries, then none until successes come back.
 *
 * @example
 * const budget = tokenBudget({ maxTokens: 10, tokenRatio: 0.1 });
 * await retry(() => call(), { budget }); // RetryError reason 'budget' when refused
 */
export function tokenBudget(options?: TokenBudgetOptions): TokenBudget {
  const where = 'tokenBudget()';
  const o = optionsObject(where, options) as TokenBudgetOptions;
  checkKeys(where, o, ['maxTokens', 'tokenRatio']);
  const maxTokens = count(where, 'maxTokens', o.maxTokens, 10, 1, false, 'For example 10, as in gRFC A6.');
  // grpc-go and grpc-js refuse a retryThrottling whose maxTokens is outside (0, 1000].
  if (maxTokens > 1000) invalid(where, 'maxTokens', maxTokens, 'at most 1000', 'gRPC refuses more than 1000.');
  const ratio = o.tokenRatio === undefined ? 0.1 : o.tokenRatio;
  // gRFC A6: "Up to 3 decimal places are supported"; gRPC's C core reads the thousandths and
  // ignores further digits (0.5466 counts as 0.546). The 1e-9 absorbs binary representation
  // (1.005 · 1000 = 1004.9999999999999). grpc-js rounds instead (toFixed(3): 0.547).
  // Number.isFinite is false for anything but a finite number (no coercion): '0.1' and null give NaN.
  const milliRatio = Number.isFinite(ratio) ? Math.floor(ratio * 1000 + 1e-9) : Number.NaN;
  if (!(milliRatio >= 1)) {
    invalid(where, 'tokenRatio', ratio, 'a finite number >= 0.001', 'For example 0.1, as in gRFC A6.');
  }
  const max = maxTokens * 1000;
  const threshold = max / 2;
  let milli = max;
  return {
    get tokens() {
      return milli / 1000;
    },
    recordFailure() {
      milli = Math.max(milli - 1000, 0);
    },
    tryAcquireRetry() {
      return milli > threshold;
    },
    recordSuccess() {
      milli = Math.min(milli + milliRatio, max);
    },
  };
}
