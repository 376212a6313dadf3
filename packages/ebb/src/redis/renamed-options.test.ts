// 1.0 renamed the time limit of one Redis call from `timeoutMs` to `commandTimeoutMs` (a name that
// says what it limits: `timeoutMs` alone appears nowhere in ebb). The old name is refused by every
// constructor of ebb/redis with a message that names the new one, not silently ignored.
import { describe, expect, it } from 'vitest';
import type { RedisScripts } from './client.js';
import { sharedAdaptiveThrottle } from './shared-adaptive-throttle.js';
import { sharedAwsRetryQuota } from './shared-aws-retry-quota.js';
import { sharedCircuitBreaker } from './shared-breaker.js';
import { sharedRate } from './shared-rate.js';
import { sharedRatioBudget } from './shared-ratio-budget.js';
import { sharedTokenBudget } from './shared-token-budget.js';

const refusing: RedisScripts = {
  evalSha: () => Promise.reject(new Error('ECONNREFUSED')),
  eval: () => Promise.reject(new Error('ECONNREFUSED')),
};

const constructors: Record<string, (o: Record<string, unknown>) => { close(): Promise<void> }> = {
  sharedRate: (o) => sharedRate(o as never),
  sharedTokenBudget: (o) => sharedTokenBudget(o as never),
  sharedRatioBudget: (o) => sharedRatioBudget(o as never),
  sharedAwsRetryQuota: (o) => sharedAwsRetryQuota(o as never),
  sharedAdaptiveThrottle: (o) => sharedAdaptiveThrottle(o as never),
  sharedCircuitBreaker: (o) => sharedCircuitBreaker(o as never),
};

describe('the Redis call deadline is `commandTimeoutMs`; the 0.x name `timeoutMs` is refused with the new name', () => {
  for (const [name, make] of Object.entries(constructors)) {
    it(`${name}: \`timeoutMs\` throws a TypeError naming \`commandTimeoutMs\``, () => {
      expect(() => make({ client: refusing, name: 'x', timeoutMs: 100 })).toThrow(TypeError);
      expect(() => make({ client: refusing, name: 'x', timeoutMs: 100 })).toThrow(
        new RegExp(`^${name}\\(\\): the option \`timeoutMs\` was renamed: pass \`commandTimeoutMs\``),
      );
    });

    it(`${name}: \`commandTimeoutMs\` is taken and checked (0 is refused by that name)`, async () => {
      expect(() => make({ client: refusing, name: 'x', commandTimeoutMs: 0 })).toThrow(/`commandTimeoutMs`/);
      const made = make({ client: refusing, name: 'x', commandTimeoutMs: 250 });
      await made.close();
    });
  }
});
