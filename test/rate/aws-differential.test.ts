// ebb's AWS controllers against the AWS SDK's own code (`@smithy/util-retry` 4.6.2, installed
// for the benchmarks), step by step over random histories: same inputs, same numbers.
import { DefaultRateLimiter, StandardRetryStrategy } from '@smithy/util-retry';
import type { Clock } from 'ebb';
import { awsAdaptiveRate, awsRetryQuota } from 'ebb/rate';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

/**
 * The SDK limiter reads the time through its `getCurrentTimeInSeconds` method (private in its
 * types only); a subclass supplies the test's time instead of `Date.now()`.
 */
const Limiter = DefaultRateLimiter as unknown as new () => { updateClientSendingRate(response: unknown): void };
class ScriptedLimiter extends Limiter {
  static seconds = 0;
  getCurrentTimeInSeconds(): number {
    return ScriptedLimiter.seconds;
  }
}

interface LimiterState {
  measuredTxRate: number;
  fillRate: number;
}

describe('awsAdaptiveRate follows DefaultRateLimiter', () => {
  it('gives the same measured and fill rates after every response of any history', () => {
    const step = fc.record({ dtMs: fc.integer({ min: 0, max: 1500 }), throttled: fc.boolean() });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 80 }), (steps) => {
        let nowMs = 0;
        const clock: Clock = { now: () => nowMs, sleep: () => Promise.resolve() };
        ScriptedLimiter.seconds = 0;
        const sdk = new ScriptedLimiter();
        const ours = awsAdaptiveRate({ clock });
        for (const { dtMs, throttled } of steps) {
          nowMs += dtMs;
          ScriptedLimiter.seconds = nowMs / 1000;
          sdk.updateClientSendingRate(throttled ? { errorType: 'THROTTLING' } : {});
          ours.record(throttled ? 'throttled' : 'success');
          const state = sdk as unknown as LimiterState;
          expect(ours.measuredRate).toBe(state.measuredTxRate);
          expect(ours.fillRate).toBe(state.fillRate);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('awsRetryQuota follows StandardRetryStrategy', () => {
  it('grants, refuses and refunds as the SDK does, over random operations', async () => {
    // Each operation: a run of retryable failures (throttling or transient), then success or not.
    const operation = fc.record({
      failures: fc.array(fc.constantFrom('THROTTLING', 'TRANSIENT'), { maxLength: 6 }),
      succeeds: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 120 }), async (operations) => {
        // No waits: the SDK strategy sleeps its backoff inside refreshRetryTokenForRetry.
        const sdk = new StandardRetryStrategy({
          maxAttempts: 100,
          backoff: { computeNextBackoffDelay: () => 0, setDelayBase: () => {} },
        } as never);
        const ours = awsRetryQuota();
        for (const { failures, succeeds } of operations) {
          let token = await sdk.acquireInitialRetryToken('scope');
          let lastError: unknown;
          let attempt = 1;
          let refused = false;
          for (const errorType of failures) {
            const error = errorType === 'THROTTLING' ? { throttled: true } : new Error('503');
            const granted = ours.tryAcquireRetry(error);
            let sdkGranted = true;
            try {
              token = await sdk.refreshRetryTokenForRetry(token, { errorType } as never);
            } catch {
              sdkGranted = false;
            }
            expect(granted).toBe(sdkGranted);
            expect(ours.available).toBe(sdk.getCapacity());
            if (!granted) {
              refused = true;
              break;
            }
            lastError = error;
            attempt++;
          }
          if (succeeds && !refused) {
            sdk.recordSuccess(token);
            ours.recordSuccess({ attempt, lastError });
            expect(ours.available).toBe(sdk.getCapacity());
          }
        }
      }),
      { numRuns: 100 },
    );
  });
});
