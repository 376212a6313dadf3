// Hostile option values for the three shared budgets: each either throws a TypeError/RangeError
// that names the option, or builds a budget that works (asked and told without throwing).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import { LocalThrottleError } from '../rate/adaptive-throttle.js';
import { awsRetryQuota } from '../rate/aws-retry-quota.js';
import { ratioBudget } from '../rate/ratio-budget.js';
import type { RedisScripts } from './client.js';
import { sharedAdaptiveThrottle } from './shared-adaptive-throttle.js';
import { sharedAwsRetryQuota } from './shared-aws-retry-quota.js';
import { sharedRate } from './shared-rate.js';
import { sharedRatioBudget } from './shared-ratio-budget.js';
import { sharedTokenBudget } from './shared-token-budget.js';

// A Redis that refuses every call: the budgets go local at once, nothing is left pending.
const refusing: RedisScripts = {
  evalSha: () => Promise.reject(new Error('ECONNREFUSED')),
  eval: () => Promise.reject(new Error('ECONNREFUSED')),
};

const hostile = fc.oneof(
  fc.constantFrom(
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    -0,
    2 ** 53,
    1e308,
    -1,
    0,
    0.5,
    null,
    '',
    '10',
    '{x}',
  ),
  fc.anything(),
);

const builders = {
  sharedTokenBudget: {
    build: sharedTokenBudget,
    keys: [
      'maxTokens',
      'tokenRatio',
      'name',
      'prefix',
      'commandTimeoutMs',
      'syncIntervalMs',
      'onEvent',
      'clock',
      'client',
    ],
  },
  sharedAwsRetryQuota: {
    build: sharedAwsRetryQuota,
    keys: [
      'behaviour',
      'capacity',
      'costs',
      'noRetryIncrement',
      'classify',
      'name',
      'prefix',
      'commandTimeoutMs',
      'syncIntervalMs',
    ],
  },
  sharedRatioBudget: {
    build: sharedRatioBudget,
    keys: ['percentCanRetry', 'minRetriesPerSecond', 'ttlMs', 'name', 'prefix', 'commandTimeoutMs', 'syncIntervalMs'],
  },
} as const;

/** For the shared options, exactly which values must be refused. */
function mustRefuse(key: string, v: unknown): boolean {
  const str = typeof v === 'string' && !/[{}]/.test(v);
  switch (key) {
    case 'name':
      return !(str && v !== '');
    case 'prefix':
      return v !== undefined && !str;
    case 'commandTimeoutMs':
    case 'syncIntervalMs':
      return v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v >= 1);
    default:
      return false;
  }
}

describe('shared budgets refuse hostile options by name', () => {
  for (const [where, { build, keys }] of Object.entries(builders)) {
    it(`${where}: any value of any option throws naming it, or the budget works`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...keys), hostile, async (key, value) => {
          const clock = virtualClock();
          const options = { client: refusing, name: 'n', clock, [key]: value };
          let budget: ReturnType<typeof sharedTokenBudget> | undefined;
          try {
            budget = (build as (o: unknown) => ReturnType<typeof sharedTokenBudget>)(options);
          } catch (error) {
            expect(error instanceof TypeError || error instanceof RangeError).toBe(true);
            expect((error as Error).message).toContain(where);
            expect((error as Error).message).toContain(key); // `costs`, `costs.throttling`, "costs: unknown option"
            return;
          }
          expect(mustRefuse(key, value), `${key}: ${String(value)} was accepted`).toBe(false);
          await budget.ready();
          expect(budget.mode).toBe('local');
          // A throwing classify fails only this call, as its local twin does.
          try {
            budget.tryAcquireRetry(new Error('x'));
            budget.recordSuccess({ attempt: 2, lastError: new Error('x') });
          } catch (error) {
            expect(key).toBe('classify');
            void error;
          }
          await budget.close();
        }),
        { numRuns: 300 },
      );
    });
  }
});

describe('sharedAdaptiveThrottle refuses hostile options by name', () => {
  it('any value of any option throws naming it, or the throttle works (locally, Redis refusing)', async () => {
    const keys = [
      'k',
      'windowMs',
      'random',
      'name',
      'prefix',
      'commandTimeoutMs',
      'syncIntervalMs',
      'onEvent',
      'clock',
      'client',
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...keys), hostile, async (key, value) => {
        const options = { client: refusing, name: 'n', clock: virtualClock(), [key]: value };
        let throttle: ReturnType<typeof sharedAdaptiveThrottle>;
        try {
          throttle = sharedAdaptiveThrottle(options as never);
        } catch (error) {
          expect(error instanceof TypeError || error instanceof RangeError).toBe(true);
          expect((error as Error).message).toContain('sharedAdaptiveThrottle()');
          expect((error as Error).message).toContain(key);
          return;
        }
        expect(mustRefuse(key, value), `${key}: ${String(value)} was accepted`).toBe(false);
        await throttle.ready();
        expect(throttle.mode).toBe('local');
        for (let i = 0; i < 5; i++) {
          try {
            throttle.acquire();
            throttle.record('throttled');
          } catch (error) {
            expect(error).toBeInstanceOf(LocalThrottleError);
          }
        }
        expect(throttle.requests).toBe(5);
        expect(throttle.rejectionProbability).toBeGreaterThan(0);
        await throttle.close();
      }),
      { numRuns: 300 },
    );
  });
});

describe("sharedRatioBudget's arithmetic is ratioBudget's", () => {
  it('a tiny percentCanRetry withdraws 2^31 − 1, as Finagle and ratioBudget do: the balance is a number, never NaN', async () => {
    // Found beside ratioBudget's own fix: the shared budget computed floor(1000 / 5e-324) = Infinity,
    // a balance of NaN, and would have sent a withdrawal of -Infinity.
    for (const [percentCanRetry, minRetriesPerSecond] of [
      [5e-324, 10],
      [5e-324, 0],
      [1e-7, 3],
    ] as const) {
      const options = { percentCanRetry, minRetriesPerSecond, ttlMs: 1_000 };
      const local = ratioBudget({ ...options, clock: virtualClock() });
      const shared = sharedRatioBudget({ ...options, client: refusing, name: 'n', clock: virtualClock() });
      await shared.ready();
      expect(shared.mode).toBe('local');
      expect(shared.balance).toBe(local.balance);
      for (let i = 0; i < minRetriesPerSecond + 2; i++) {
        local.recordRequest();
        shared.recordRequest();
        expect(shared.tryAcquireRetry()).toBe(local.tryAcquireRetry());
        expect(Number.isFinite(shared.balance)).toBe(true);
        expect(shared.balance).toBe(Math.max(0, local.balance));
      }
      await shared.close();
    }
  });
});

describe("sharedAwsRetryQuota's costs are awsRetryQuota's", () => {
  it('with each behaviour and with explicit costs, a throttle, a transient error and a timeout cost what the local quota charges; a classify answer that is no kind is named, quoted in part', async () => {
    const errors = [
      Object.assign(new Error('slow down'), { status: 429 }),
      new Error('reset'),
      Object.assign(new Error('late'), { name: 'TimeoutError' }),
    ];
    for (const options of [
      {},
      { behaviour: 'pre-2026' },
      { behaviour: '2026' },
      { costs: { throttling: 1, transient: 2, timeout: 3 } },
    ] as const) {
      const local = awsRetryQuota(options);
      const shared = sharedAwsRetryQuota({ ...options, client: refusing, name: 'n', clock: virtualClock() });
      await shared.ready();
      expect(shared.mode).toBe('local');
      for (const error of [...errors, ...errors]) {
        expect(shared.tryAcquireRetry(error)).toBe(local.tryAcquireRetry(error));
        expect(shared.available, JSON.stringify(options)).toBe(local.available);
      }
      await shared.close();
    }
    const odd = sharedAwsRetryQuota({
      client: refusing,
      name: 'n',
      clock: virtualClock(),
      classify: () => '9'.repeat(100_000) as never,
    });
    await odd.ready();
    expect(() => odd.tryAcquireRetry(new Error('x'))).toThrow(
      new TypeError(
        `sharedAwsRetryQuota(): \`classify\` returned "${'9'.repeat(40)}…"; expected 'throttling', 'transient' or 'timeout'.`,
      ),
    );
    await odd.close();
  });
});

describe('the shared options, one message each', () => {
  it('commandTimeoutMs and syncIntervalMs: 0, -5, NaN and Infinity are refused alike, "a finite number >= 1" (sharedRate\'s commandTimeoutMs too)', () => {
    for (const key of ['commandTimeoutMs', 'syncIntervalMs']) {
      for (const value of [0, -5, 0.5, Number.NaN, Number.POSITIVE_INFINITY]) {
        expect(() => sharedTokenBudget({ client: refusing, name: 'n', [key]: value })).toThrow(
          new RangeError(
            `sharedTokenBudget(): expected \`${key}\` to be a finite number >= 1, got ${value}. For example ${key === 'commandTimeoutMs' ? 100 : 1000}.`,
          ),
        );
        if (key === 'commandTimeoutMs') {
          expect(() => sharedRate({ client: refusing, name: 'n', [key]: value })).toThrow(
            new RangeError(
              `sharedRate(): expected \`${key}\` to be a finite number >= 1, got ${value}. For example 100.`,
            ),
          );
        }
      }
    }
  });

  it('a promise for the client (an un-awaited connect()) is named, with the fix, and its rejection handled', async () => {
    const connecting = Promise.reject(new Error('ECONNREFUSED'));
    expect(() => sharedTokenBudget({ client: connecting, name: 'n' })).toThrow(
      /got a promise\. Await it \(the client, not the promise of its connection\)\./,
    );
    // An unhandled rejection would fail this file's run; give it a turn to surface.
    await new Promise((r) => setImmediate(r));
  });
});

describe('a Redis client where the options go', () => {
  it('is named as such (sharedTokenBudget(redis, …)), not by one of its own keys', () => {
    // ioredis's evalsha, node-redis's evalSha and sendCommand: a client of either kind.
    for (const client of [
      { evalsha: () => 0, options: {} },
      { evalSha: () => 0, sendCommand: () => 0 },
    ]) {
      for (const make of [sharedTokenBudget, sharedRatioBudget, sharedRate] as ((o: unknown) => unknown)[]) {
        expect(() => make(client)).toThrow(/: got a Redis client where the options go\. Pass \{ client, name, … \}\.$/);
      }
    }
  });
});
