// awsAdaptiveRate against the SDK's own DefaultRateLimiter (@smithy/core 3.41.0, through
// @smithy/util-retry 4.6.2): after a throttle at time t0, how long does the next send token
// take at t0 + dt? The SDK limiter reads the time through `getCurrentTimeInSeconds` and sleeps
// through the static `setTimeoutFn`; a subclass and a stub give it the test's time.
import { DefaultRateLimiter } from '@smithy/util-retry';
import { virtualClock } from 'ebb';
import { awsAdaptiveRate } from 'ebb/rate';
import { afterEach, describe, expect, it } from 'vitest';

type Limiter = { updateClientSendingRate(info: unknown): void; getSendToken(): Promise<void> };
const Base = DefaultRateLimiter as unknown as new () => Limiter;
const statics = DefaultRateLimiter as unknown as { setTimeoutFn: (fn: () => void, ms: number) => void };
const originalSetTimeoutFn = statics.setTimeoutFn;

let seconds = 0;
class ScriptedLimiter extends Base {
  getCurrentTimeInSeconds(): number {
    return seconds;
  }
}

afterEach(() => {
  statics.setTimeoutFn = originalSetTimeoutFn;
});

/** The SDK's wait for a send token at t0 + dt after a throttle at t0 (ms). */
async function sdkWait(t0: number, dt: number): Promise<number> {
  seconds = t0 / 1000;
  const sdk = new ScriptedLimiter();
  sdk.updateClientSendingRate({ errorType: 'THROTTLING' });
  seconds = (t0 + dt) / 1000;
  const start = seconds;
  statics.setTimeoutFn = (fn, ms) => {
    seconds += ms / 1000;
    fn();
  };
  await sdk.getSendToken();
  return (seconds - start) * 1000;
}

/** ebb's wait for the same. */
async function ebbWait(t0: number, dt: number): Promise<number> {
  const clock = virtualClock(t0);
  const ours = awsAdaptiveRate({ clock });
  ours.record('throttled');
  await clock.advance(dt);
  const start = clock.now();
  let done = false;
  const pending = Promise.resolve(ours.acquire()).then(() => {
    done = true;
  });
  await clock.runAll();
  await pending;
  expect(done).toBe(true);
  return clock.now() - start;
}

const DELAYS = [0, 1, 500, 1_000, 1_999, 2_000, 2_500, 10_000];

describe('awsAdaptiveRate: the first wait after a throttle, as the SDK computes it', () => {
  it('matches DefaultRateLimiter when the clock does not start at 0', async () => {
    for (const t0 of [1, 500, 1_000, 123_456]) {
      for (const dt of DELAYS) {
        expect(await ebbWait(t0, dt), `t0 ${t0} ms, dt ${dt} ms`).toBeCloseTo(await sdkWait(t0, dt), 6);
      }
    }
  });

  // The SDK tests `!this.lastTimestamp`, so a refill at time 0 leaves it "not started" and the
  // next refill starts over (throttle at 0, token at 1 s: the SDK waits 2000 ms); ebb does the same.
  it('matches DefaultRateLimiter at clock 0 (the SDK treats timestamp 0 as unset)', async () => {
    for (const dt of DELAYS) {
      expect(await ebbWait(0, dt), `dt ${dt} ms`).toBeCloseTo(await sdkWait(0, dt), 6);
    }
  });
});
