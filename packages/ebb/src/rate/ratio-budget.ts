import { readNow } from '../core/boundary.js';
import { type Clock, clockOption } from '../core/clock.js';
import { checkKeys, count, inRange, invalid, optionsObject } from '../core/validate.js';
import type { BudgetSuccess, RetryBudget } from '../retry/options.js';
import { WindowedAdder } from './windowed-adder.js';

/** Options of {@link ratioBudget}. */
export interface RatioBudgetOptions {
  /** Retries allowed per request made, from 0 to 1000: 0.2 allows one retry per five requests. Default 0.2. */
  readonly percentCanRetry?: number;
  /** Retries allowed per second on top, however few the requests (a whole number ≥ 0). Default 10. */
  readonly minRetriesPerSecond?: number;
  /** How long a request's credit lasts, a whole number of ms from 1000 to 60 000. Default 10 000. */
  readonly ttlMs?: number;
  /** Time source; default the system clock. */
  readonly clock?: Clock;
}

/** The budget {@link ratioBudget} returns. */
export interface RatioBudget extends RetryBudget {
  /** Deposits one request's credit. `retry()` calls it once per operation. */
  recordRequest(): void;
  /** Withdraws one retry's worth if the bucket holds it. */
  tryAcquireRetry(error?: unknown): boolean;
  /** Does nothing: Finagle's budget counts requests, not successes. */
  recordSuccess(context?: BudgetSuccess): void;
  /** Retries the budget would allow now (Finagle's `balance`). */
  readonly balance: number;
}

/** Finagle's `TokenRetryBudget.ScaleFactor`: integer tokens with three decimal places of precision. */
const SCALE = 1000;

/**
 * Finagle's arithmetic of a ratio budget over a window sum (`sum`: deposits minus withdrawals still
 * in the window) — what a request deposits, what a retry withdraws, and the balance in retries.
 * `ratioBudget` keeps the window in memory, `ebb/redis`'s `sharedRatioBudget` in Redis.
 */
export function ratioTerms(
  percent: number,
  minPerSecond: number,
  ttlMs: number,
): { readonly deposit: number; readonly withdrawal: number; balance(sum: number): number } {
  // With percentCanRetry and minRetriesPerSecond both 0 (Finagle's `Empty`), deposits are 0 and
  // there is no reserve: every retry is refused without a special case.
  const deposit = percent === 0 ? 0 : SCALE;
  // Finagle's `(ScaleFactor / percentCanRetry).toInt`: Scala's toInt saturates at Int.MaxValue,
  // so a tiny percentage (5e-324) withdraws 2^31 − 1, not Infinity (whose balance would be NaN).
  const withdrawal = percent === 0 ? 1 : Math.min(Math.floor(SCALE / percent), 2 ** 31 - 1);
  // The reserve, `reserveRetries × withdrawal` tokens, is kept in retries: in tokens it can pass
  // 2^53 (4,194,307 a second × 1 s × 2^31 − 1), where Finagle's Long arithmetic stays exact and
  // a double does not. The balance is Finagle's `(sum + reserve) / withdrawal`, a Long division
  // (towards zero), computed as reserveRetries + sum / withdrawal without the large product.
  const reserveRetries = minPerSecond * Math.floor(ttlMs / 1000);
  return {
    deposit,
    withdrawal,
    balance(sum: number): number {
      const whole = reserveRetries + Math.floor(sum / withdrawal);
      // Below zero (deposits expired before withdrawals), Long division rounds up, not down.
      return whole >= 0 ? whole : reserveRetries + Math.ceil(sum / withdrawal);
    },
  };
}

/**
 * Finagle's `RetryBudget` as a retry budget: retries may add at most `percentCanRetry` of the
 * requests made in the last `ttlMs`, plus `minRetriesPerSecond` × the ttl's whole seconds so
 * that a quiet client can still retry. With the defaults (20 %, 10/s, 10 s): about one retry
 * per five requests, plus 100 retries per 10 s.
 *
 * The arithmetic is Finagle's (`finagle-core/.../service/RetryBudget.scala`): integer tokens,
 * each request deposits 1000, a retry withdraws `floor(1000 / percentCanRetry)` (5000 at 20 %)
 * and succeeds while the bucket holds that many; the reserve is `minRetriesPerSecond ×
 * floor(ttl in s) × withdrawal`, always present; deposits and withdrawals expire from a
 * window of ten slices of `ttlMs / 10` (its `WindowedAdder`). Each operation deposits once
 * (`recordRequest`, called by `retry()` when it starts), as Finagle's retry filters do.
 *
 * **When to use:** a client whose traffic is steady enough that "retries ≤ 20 % of requests"
 * is the right cap; unlike {@link tokenBudget}, successes are not needed to keep retrying.
 *
 * **Gotchas:** with both `percentCanRetry` and `minRetriesPerSecond` at 0 the budget refuses
 * every retry (Finagle's `Empty`). During a total outage of N requests within one ttl it
 * allows `0.2 · N + 100` retries at the defaults, so amplification stays under 1.3× once N
 * reaches 1000.
 *
 * @example
 * const budget = ratioBudget({ percentCanRetry: 0.2 });
 * await Promise.all(urls.map((u) => retry(() => get(u), { budget })));
 */
export function ratioBudget(options?: RatioBudgetOptions): RatioBudget {
  const where = 'ratioBudget()';
  const o = optionsObject(where, options) as RatioBudgetOptions;
  checkKeys(where, o, ['percentCanRetry', 'minRetriesPerSecond', 'ttlMs', 'clock']);
  const percent = inRange(where, 'percentCanRetry', o.percentCanRetry, 0.2, 0, SCALE, 'For example 0.2 for 20 %.');
  const minPerSecond = count(where, 'minRetriesPerSecond', o.minRetriesPerSecond, 10, 0, false, 'For example 10.');
  const ttlMs = count(where, 'ttlMs', o.ttlMs, 10_000, 1, false, 'For example 10000.');
  if (ttlMs < 1000 || ttlMs > 60_000) {
    invalid(where, 'ttlMs', ttlMs, 'a whole number from 1000 to 60000', 'Finagle bounds the ttl to [1 s, 60 s].');
  }
  const clock = clockOption(where, o.clock);
  const terms = ratioTerms(percent, minPerSecond, ttlMs);
  const { deposit, withdrawal } = terms;
  const window = new WindowedAdder(ttlMs, 10, () => readNow(clock));
  const balance = (): number => terms.balance(window.sum());
  return {
    get balance() {
      return balance();
    },
    recordRequest() {
      window.add(deposit);
    },
    tryAcquireRetry() {
      if (balance() < 1) return false;
      window.add(-withdrawal);
      return true;
    },
    recordSuccess() {},
  };
}
