import { readNow } from '../core/boundary.js';
import { type Clock, clockOption } from '../core/clock.js';
import { checkKeys, count, inRange, invalid, optionsObject } from '../core/validate.js';
import { WindowedAdder } from '../rate/windowed-adder.js';
import type { RetryBudget } from '../retry/options.js';

/** Options of {@link hedgeBudget}. */
export interface HedgeBudgetOptions {
  /** Hedges allowed per call, from 0 to 1. Default 0.05 (5 %). */
  readonly percent?: number;
  /** Hedges a second allowed however few the calls, a whole number ≥ 0. Default 1. */
  readonly minPerSecond?: number;
  /** The window calls and hedges are counted over, a whole number of ms from 1000 to 60 000. Default 10 000. */
  readonly windowMs?: number;
  /** Time source; default the system clock. */
  readonly clock?: Clock;
}

/** The budget {@link hedgeBudget} returns. */
export interface HedgeBudget extends RetryBudget {
  /** Counts one call. `hedging()` calls it once per call. */
  recordRequest(): void;
  /** Grants one hedge if the window's hedges stay within the budget, and counts it. */
  tryAcquireRetry(error?: unknown): boolean;
  /** Does nothing: the budget counts calls and hedges. */
  recordSuccess(): void;
  /** Hedges the budget would grant now. */
  readonly balance: number;
}

/**
 * The default budget of `hedging()`: hedges in the last `windowMs` ≤ the larger of `percent` ×
 * the calls in it and `minPerSecond` × its seconds. A busy client hedges at most `percent` of its
 * calls — the floor is *within* that share, not on top of it as in `ratioBudget` (Finagle's
 * `RetryBudget`, where 1 a second on ~50 calls a second adds 2 points to a 5 % budget); a quiet
 * client still hedges now and then. Under an overload where every call is slow it adds at most
 * `percent` of the calls, or `minPerSecond` requests a second when that is more.
 *
 * @example
 * const hedger = hedging({ budget: hedgeBudget({ percent: 0.1 }) });
 */
export function hedgeBudget(options?: HedgeBudgetOptions): HedgeBudget {
  const where = 'hedgeBudget()';
  const o = optionsObject(where, options) as HedgeBudgetOptions;
  checkKeys(where, o, ['percent', 'minPerSecond', 'windowMs', 'clock']);
  const percent = inRange(where, 'percent', o.percent, 0.05, 0, 1, 'For example 0.05 for 5 %.');
  const minPerSecond = count(where, 'minPerSecond', o.minPerSecond, 1, 0, false, 'For example 1.');
  const windowMs = count(where, 'windowMs', o.windowMs, 10_000, 1, false, 'For example 10000.');
  if (windowMs < 1_000 || windowMs > 60_000) {
    invalid(where, 'windowMs', windowMs, 'a whole number from 1000 to 60000', 'For example 10000.');
  }
  const clock = clockOption(where, o.clock);
  // The two windows must cover the same span. A WindowedAdder moves to its next slice when it is
  // touched a slice's time after the last move, so an adder touched only at hedges (a few a
  // second) kept slices longer than the calls' (touched at every call): its window stretched to
  // 12 s and more against the calls' 10, and the budget granted about 4 % of the calls for a
  // 5 % share. Every operation reads the clock once and touches both adders at that reading,
  // so they move together, slice for slice.
  let at = readNow(clock);
  const now = () => at;
  const calls = new WindowedAdder(windowMs, 10, now);
  const hedges = new WindowedAdder(windowMs, 10, now);
  const floor = minPerSecond * (windowMs / 1_000);
  const allowed = (): number => {
    at = readNow(clock);
    return Math.max(percent * calls.sum(), floor) - hedges.sum();
  };
  return {
    get balance() {
      return Math.max(0, Math.floor(allowed()));
    },
    recordRequest() {
      at = readNow(clock);
      calls.add(1);
      hedges.add(0);
    },
    tryAcquireRetry() {
      if (allowed() < 1 - 1e-9) return false; // 1e-9: 0.05 × 60 calls is 3.0000000000000004
      hedges.add(1);
      return true;
    },
    recordSuccess() {},
  };
}
