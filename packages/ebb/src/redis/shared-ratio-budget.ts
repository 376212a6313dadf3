import { optionsObject } from '../core/validate.js';
import { type RatioBudget, type RatioBudgetOptions, ratioBudget, ratioTerms } from '../rate/ratio-budget.js';
import type { BudgetSuccess } from '../retry/options.js';
import { WINDOW_SCRIPT } from './scripts.js';
import { SHARED_KEYS, type SharedControls, type SharedOptions, SharedState, withControls } from './shared-state.js';
import { checkRedisKeys, pick, validateAs } from './validate-as.js';

/** Options of {@link sharedRatioBudget}: those of `ratioBudget` plus the shared ones (its `clock` serves both). */
export interface SharedRatioBudgetOptions extends RatioBudgetOptions, SharedOptions {}

/** The budget {@link sharedRatioBudget} returns. */
export interface SharedRatioBudget extends RatioBudget, SharedControls {}

/**
 * `ratioBudget` (Finagle's `RetryBudget`) with its window in Redis: retries may add at most
 * `percentCanRetry` of the requests the whole fleet made in the last `ttlMs`, plus one reserve of
 * `minRetriesPerSecond` for the fleet (not one per process). The window is a hash of ten slices
 * on the Redis server's clock ({@link WINDOW_SCRIPT}). Requests are summed locally and sent every
 * `syncIntervalMs`; a retry's withdrawal is sent at once.
 *
 * **Gotchas:** while Redis fails, the local window does not expire old deposits: the local
 * budget then allows `percentCanRetry` of the requests since the last answer, not of the last
 * `ttlMs`.
 */
export function sharedRatioBudget(options: SharedRatioBudgetOptions): SharedRatioBudget {
  const where = 'sharedRatioBudget()';
  const o = optionsObject(where, options) as SharedRatioBudgetOptions;
  checkRedisKeys(where, o, ['percentCanRetry', 'minRetriesPerSecond', 'ttlMs', ...SHARED_KEYS]);
  validateAs(where, 'ratioBudget()', () =>
    ratioBudget(pick(o as never, ['percentCanRetry', 'minRetriesPerSecond', 'ttlMs', 'clock'])),
  );
  // Finagle's arithmetic, ratioBudget's own: integer tokens with three decimals.
  const percent = o.percentCanRetry ?? 0.2;
  const minPerSecond = o.minRetriesPerSecond ?? 10;
  const ttlMs = o.ttlMs ?? 10_000;
  const terms = ratioTerms(percent, minPerSecond, ttlMs);
  const { deposit, withdrawal } = terms;
  const never = percent === 0 && minPerSecond === 0;
  const state = new SharedState(where, o, {
    kind: 'ratio-budget',
    script: WINDOW_SCRIPT,
    // Slices take withdrawals too: a slice may hold down to -2^53.
    args: [String(ttlMs / 10), '10', String(-(2 ** 53))],
    initial: 0,
    min: -(2 ** 53) * 10,
    max: 2 ** 53 * 10,
    windowMs: ttlMs,
    apply: (level, delta) => level + delta,
  });
  const balance = (level: number) => (never ? 0 : Math.max(0, terms.balance(level)));
  return withControls(
    state,
    {
      get balance() {
        return balance(state.level);
      },
      recordRequest() {
        if (deposit !== 0) state.change(deposit, false);
      },
      tryAcquireRetry() {
        if (never || state.mode === 'syncing' || terms.balance(state.level) < 1) return false;
        state.change(-withdrawal, true);
        return true;
      },
      recordSuccess(_context?: BudgetSuccess) {},
    },
    balance,
  );
}
