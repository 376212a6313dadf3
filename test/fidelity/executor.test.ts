import {
  awsStandardBackoff,
  googleExponentialBackoff,
  noJitter,
  RetryError,
  type RetryOptions,
  retry,
  virtualClock,
  withOptions,
} from 'ebb';
import { describe, expect, it } from 'vitest';

/**
 * The executor hands each failure's elapsed time and error to the policy's run
 * (`run.next(elapsedMs, error)`), so the presets whose source reads them behave as the source
 * does through `retry()` itself, not only when their runs are driven by hand.
 */

/** Runs `retry()` on a virtual clock that does not start at 0; returns when each call started and the outcome. */
async function drive(options: Omit<RetryOptions, 'clock'>, errors: unknown[]) {
  const start = 7_000;
  const clock = virtualClock(start);
  const calls: number[] = [];
  const done = retry(
    () => {
      calls.push(clock.now() - start);
      throw errors[Math.min(calls.length, errors.length) - 1];
    },
    { ...options, clock },
  ).then(
    () => 'resolved',
    (error: unknown) => error,
  );
  await clock.runAll();
  return { calls, outcome: await done };
}

describe('Google: the budget is measured from the start of the operation', () => {
  it('the policy is not given a clock: the stop rule reads the elapsed time retry() passes', async () => {
    // The policy's own clock would be the system clock, which does not move during this test:
    // without the elapsed time from retry() the run would never see its budget spent.
    const backoff = withOptions(
      googleExponentialBackoff({
        initialIntervalMs: 500,
        multiplier: 1.5,
        randomizationFactor: 0,
        maxElapsedTimeMs: 1_000,
      }),
      { maxAttempts: 20 },
    );
    const { calls, outcome } = await drive({ backoff }, [new Error('down')]);
    expect(calls).toEqual([0, 500, 1_250]);
    expect(outcome).toBeInstanceOf(RetryError);
    expect((outcome as RetryError).reason).toBe('attempts');
    // Google's STOP is not an attempt limit, and the message does not say it is.
    expect((outcome as RetryError).message).toContain('the backoff policy stopped after attempt 3');
    expect((outcome as RetryError).message).not.toContain('maxAttempts');
  });

  it('an attempt limit that is reached still says so', async () => {
    const backoff = withOptions(googleExponentialBackoff({ randomizationFactor: 0 }), { maxAttempts: 2 });
    const { calls, outcome } = await drive({ backoff }, [new Error('down')]);
    expect(calls).toEqual([0, 500]);
    expect((outcome as RetryError).message).toContain('maxAttempts (2) reached');
  });
});

describe('AWS standard mode: the throttling base and the hint bound, through retry()', () => {
  const throttled = Object.assign(new Error('SlowDown'), { throttled: true });
  const transient = new Error('InternalError');
  const random = () => 0.5;

  it('a throttling error waits on the 1 s base, another on the 50 ms base (2026 behaviour)', async () => {
    const backoff = awsStandardBackoff();
    // floor(0.5 · 1000) = 500, then floor(0.5 · 2000) = 1000.
    expect((await drive({ backoff, random }, [throttled])).calls).toEqual([0, 500, 1_500]);
    // floor(0.5 · 50) = 25, then floor(0.5 · 100) = 50.
    expect((await drive({ backoff, random }, [transient])).calls).toEqual([0, 25, 75]);
  });

  it('the pre-2026 behaviour: 500 ms and 100 ms bases', async () => {
    const backoff = awsStandardBackoff({ behaviour: 'pre-2026' });
    expect((await drive({ backoff, random }, [throttled])).calls).toEqual([0, 250, 750]);
    expect((await drive({ backoff, random }, [transient])).calls).toEqual([0, 50, 150]);
  });

  it('a server hint raises the wait to at most 5 s past the computed one, and never makes it give up', async () => {
    const backoff = awsStandardBackoff();
    // The SDK: max(25, min(30_000, 25 + 5_000)) = 5_025; ebb's own rule would wait 30 s, and a
    // 90-s hint would give up over maxRetryAfterMs.
    const hinted = Object.assign(new Error('InternalError'), { retryAfterMs: 30_000 });
    expect((await drive({ backoff, random }, [hinted])).calls).toEqual([0, 5_025, 5_025 + 5_050]);
    const long = Object.assign(new Error('InternalError'), { retryAfterMs: 90_000 });
    const { calls, outcome } = await drive({ backoff, random }, [long]);
    expect(calls).toEqual([0, 5_025, 5_025 + 5_050]);
    expect((outcome as RetryError).reason).toBe('attempts');
    // A hint shorter than the computed wait changes nothing.
    const short = Object.assign(new Error('InternalError'), { retryAfterMs: 10 });
    expect((await drive({ backoff, random }, [short])).calls).toEqual([0, 25, 75]);
  });

  it("other policies keep ebb's hint rule: wait at least the hint, give up past maxRetryAfterMs", async () => {
    const backoff = withOptions(awsStandardBackoff(), { jitter: noJitter });
    const hinted = Object.assign(new Error('x'), { retryAfterMs: 30_000 });
    const { calls } = await drive({ backoff }, [hinted]);
    expect(calls.slice(0, 2)).toEqual([0, 30_000]);
    const long = Object.assign(new Error('x'), { retryAfterMs: 90_000 });
    const r = await drive({ backoff }, [long]);
    expect(r.calls).toEqual([0]);
    expect((r.outcome as RetryError).reason).toBe('retry-after');
  });
});
