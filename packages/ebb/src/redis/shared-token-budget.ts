import { optionsObject } from '../core/validate.js';
import { type TokenBudget, type TokenBudgetOptions, tokenBudget } from '../rate/token-budget.js';
import type { BudgetSuccess } from '../retry/options.js';
import { LEVEL_SCRIPT } from './scripts.js';
import { SHARED_KEYS, type SharedControls, type SharedOptions, SharedState, withControls } from './shared-state.js';
import { checkRedisKeys, pick, validateAs } from './validate-as.js';

/** Options of {@link sharedTokenBudget}: those of `tokenBudget` plus the shared ones. */
export interface SharedTokenBudgetOptions extends TokenBudgetOptions, SharedOptions {}

/** The budget {@link sharedTokenBudget} returns. */
export type { SharedControls };

export interface SharedTokenBudget extends TokenBudget, SharedControls {}

/**
 * `tokenBudget` (gRPC's retry throttling, gRFC A6) with its bucket in Redis: one bucket for every
 * process that uses the same `name`, across process lifetimes — so 200 short-lived processes share
 * `maxTokens / 2` retries during an outage instead of getting that many each.
 *
 * The bucket is a hash holding thousandths of a token, changed by {@link LEVEL_SCRIPT} (clamped to
 * [0, maxTokens], applied exactly once, checked and repaired). Each failure is sent at once (one `EVALSHA`, at most one in flight);
 * successes are summed locally and sent every `syncIntervalMs`. `tryAcquireRetry` reads the local
 * view (last answer plus local changes) and never waits: it answers `false` while the first sync
 * is pending (`await budget.ready()` first in a short-lived process), and from a local bucket
 * seeded with the last known level while Redis fails.
 *
 * **Gotchas:** changes in one batch are summed before the clamp, so a batch of successes at a
 * full bucket followed by failures counts slightly differently than one at a time. Another
 * process's failures are seen at its next send plus one round trip.
 *
 * @example
 * const budget = sharedTokenBudget({ client: redis, name: 'payments-api' });
 * await budget.ready();
 * await retry(() => call(), { budget });
 * await budget.close();
 */
export function sharedTokenBudget(options: SharedTokenBudgetOptions): SharedTokenBudget {
  const where = 'sharedTokenBudget()';
  const o = optionsObject(where, options) as SharedTokenBudgetOptions;
  checkRedisKeys(where, o, ['maxTokens', 'tokenRatio', ...SHARED_KEYS]);
  const local = validateAs(where, 'tokenBudget()', () => tokenBudget(pick(o as never, ['maxTokens', 'tokenRatio'])));
  const max = Math.round(local.tokens * 1000);
  const milliRatio = Math.round((o.tokenRatio ?? 0.1) * 1000);
  const threshold = max / 2;
  const state = new SharedState(where, o, {
    kind: 'token-budget',
    script: LEVEL_SCRIPT,
    args: ['0', String(max), '86400'],
    initial: max,
    min: 0,
    max,
    apply: (level, delta) => Math.min(max, Math.max(0, level + delta)),
  });
  return withControls(
    state,
    {
      get tokens() {
        return state.level / 1000;
      },
      recordFailure() {
        state.change(-1000, true);
      },
      tryAcquireRetry() {
        return state.mode !== 'syncing' && state.level > threshold;
      },
      recordSuccess(_context?: BudgetSuccess) {
        state.change(milliRatio, false);
      },
    },
    (level) => level / 1000,
  );
}
