import { describe, expect, it } from 'vitest';
import type { Clock } from '../core/clock.js';
import { virtualClock } from '../core/virtual-clock.js';
import { awsAdaptiveRate } from './aws-adaptive-rate.js';

/**
 * A clock the test moves by hand (`at(seconds)`), whose sleeps are recorded and pass at once
 * (time moves by their length), like the SDK tests' mocked `Date.now` and `setTimeout`.
 */
function scripted(): Clock & { at(seconds: number): void; sleeps: number[] } {
  let now = 0;
  const sleeps: number[] = [];
  return {
    sleeps,
    at(seconds: number) {
      now = seconds * 1000;
    },
    now: () => now,
    sleep(ms: number) {
      sleeps.push(ms);
      now += ms;
      return Promise.resolve();
    },
  };
}

const close = (actual: number, expected: number) => expect(Math.abs(actual - expected)).toBeLessThan(1e-4);

// The four tables of smithy-lang/smithy-typescript `DefaultRateLimiter.spec.ts` (identical in
// packages/util-retry @b03dfbd and packages/core/src/submodules/retry/util-retry @57c1967).
describe('awsAdaptiveRate reproduces the SDK rate limiter tests', () => {
  it.each([
    [0.5, 892.8571428571428],
    [1, 1785.7142857142856],
    [2, 2000],
  ])('getSendToken: throttled at %d s, the next request waits %d ms', async (seconds, delayMs) => {
    const clock = scripted();
    const rate = awsAdaptiveRate({ clock });
    clock.at(seconds);
    rate.record('throttled');
    await rate.acquire();
    // One sleep, the SDK test's setTimeout: a refill after it must not find 0.9999999999998
    // tokens and sleep a second time, for 2.27e-13 ms.
    expect(clock.sleeps).toHaveLength(1);
    close(clock.sleeps[0] as number, delayMs);
  });

  it.each([
    [5, 7],
    [6, 9.64893601],
    [7, 10.00003085],
    [8, 10.45328452],
    [9, 13.40869703],
    [10, 21.26626836],
    [11, 36.42599853],
  ])('cubicSuccess: lastMaxRate 10, last throttle at 5 s; a success at %d s gives %d', (seconds, expected) => {
    const clock = scripted();
    const rate = awsAdaptiveRate({ clock });
    // The SDK test sets lastMaxRate = 10 and lastThrottleTime = 5 by hand; here the public API
    // gets there: 50 responses in [0, 4 s] measure 50 / 4 · 0.8 = 10 per second, ten more in
    // [4 s, 5 s] keep it at 10 · 0.8 + 10 · 0.2 = 10, and the tenth is a throttle at 5 s, which
    // (the bucket not yet on) takes the measured 10 as its last maximum.
    clock.at(0.1);
    for (let i = 0; i < 49; i++) rate.record('success');
    clock.at(4);
    for (let i = 0; i < 10; i++) rate.record('success');
    expect(rate.measuredRate).toBe(10);
    clock.at(5);
    rate.record('throttled');
    expect(rate.measuredRate).toBe(10);
    clock.at(seconds);
    rate.record('success');
    close(rate.cubicRate, expected);
  });

  it.each([
    [5, 0.112],
    [6, 0.09333333],
    [7, 0.08],
    [8, 0.07],
    [9, 0.06222222],
  ])('cubicThrottle: a first throttle at %d s gives %d', (seconds, expected) => {
    // The SDK test's lastMaxRate and lastThrottleTime are not read on a throttle: the result is
    // β · the measured rate, here one response in the first bucket (0.8 / seconds).
    const clock = scripted();
    const rate = awsAdaptiveRate({ clock });
    clock.at(seconds);
    rate.record('throttled');
    close(rate.cubicRate, expected);
    // Below the 0.5/s floor, so the bucket refills at the floor.
    expect(rate.fillRate).toBe(0.5);
  });

  it('updateClientSendingRate: the step-by-step sequence of measured and fill rates', () => {
    const clock = scripted();
    const rate = awsAdaptiveRate({ clock });
    const rows: [throttled: boolean, seconds: number, measured: number, fill: number][] = [
      [false, 0.2, 0, 0.5],
      [false, 0.4, 0, 0.5],
      [false, 0.6, 4.8, 0.5],
      [false, 0.8, 4.8, 0.5],
      [false, 1, 4.16, 0.5],
      [false, 1.2, 4.16, 0.6912],
      [false, 1.4, 4.16, 1.0976],
      [false, 1.6, 5.632, 1.6384],
      [false, 1.8, 5.632, 2.3328],
      [true, 2, 4.3264, 3.02848],
      [false, 2.2, 4.3264, 3.486639],
      [false, 2.4, 4.3264, 3.821874],
      [false, 2.6, 5.66528, 4.053386],
      [false, 2.8, 5.66528, 4.200373],
      [false, 3.0, 4.333056, 4.282037],
      [true, 3.2, 4.333056, 2.997426],
      [false, 3.4, 4.333056, 3.452226],
    ];
    for (const [throttled, seconds, measured, fill] of rows) {
      clock.at(seconds);
      rate.record(throttled ? 'throttled' : 'success');
      expect(rate.measuredRate).toBe(measured);
      expect(Number(rate.fillRate.toFixed(6))).toBe(fill);
      close(rate.fillRate, fill);
    }
  });
});

describe('awsAdaptiveRate as a controller', () => {
  it('lets everything through at once until the first throttle', () => {
    const clock = scripted();
    const rate = awsAdaptiveRate({ clock });
    for (let i = 0; i < 100; i++) expect(rate.acquire()).toBeUndefined();
    expect(rate.ratePerSecond).toBe(Infinity);
    expect(clock.sleeps).toEqual([]);
    clock.at(1);
    rate.record('throttled');
    expect(rate.ratePerSecond).toBe(rate.fillRate);
  });

  it('counts a failure that is not a throttle as a point on the success curve, as the SDK does', () => {
    const a = scripted();
    const b = scripted();
    const withSuccess = awsAdaptiveRate({ clock: a });
    const withFailure = awsAdaptiveRate({ clock: b });
    for (const [seconds, outcome] of [
      [0.6, 'throttled'],
      [1.2, 'x'],
      [1.9, 'x'],
      [2.7, 'x'],
    ] as const) {
      a.at(seconds);
      b.at(seconds);
      withSuccess.record(outcome === 'x' ? 'success' : outcome);
      withFailure.record(outcome === 'x' ? 'failure' : outcome);
      expect(withFailure.fillRate).toBe(withSuccess.fillRate);
      expect(withFailure.cubicRate).toBe(withSuccess.cubicRate);
    }
    expect(withFailure.fillRate).toBeGreaterThan(0.5);
  });

  it('serves waiting requests first come, first served, one token each at the fill rate', async () => {
    const clock = virtualClock();
    const rate = awsAdaptiveRate({ clock });
    await clock.advance(500);
    rate.record('throttled'); // measured 1.6/s → fill rate 1.12/s, bucket empty
    const order: number[] = [];
    const times: number[] = [];
    const all = [1, 2, 3].map((n) =>
      Promise.resolve(rate.acquire()).then(() => {
        order.push(n);
        times.push(clock.now());
      }),
    );
    await clock.runAll();
    await Promise.all(all);
    expect(order).toEqual([1, 2, 3]);
    // One token every 1 / 1.12 s = 892.857 ms (the bucket holds at most max(1.12, 1) tokens).
    for (const [i, t] of times.entries()) close(t, 500 + (i + 1) * (1000 / 1.12));
    expect(clock.pending).toBe(0);
  });

  it('waits again when the rate falls during a wait (the SDK core loops and refills)', async () => {
    const clock = virtualClock();
    const rate = awsAdaptiveRate({ clock });
    await clock.advance(500);
    rate.record('throttled'); // fill 1.12/s
    let granted = -1;
    const p = Promise.resolve(rate.acquire()).then(() => {
      granted = clock.now();
    });
    await clock.advance(100);
    // A second throttle: β · min(measured 1.6, fill 1.12) = 0.784/s. The wake-up planned for
    // 500 + 892.857 ms finds too few tokens and waits again.
    rate.record('throttled');
    expect(rate.fillRate).toBe(0.784);
    await clock.runAll();
    await p;
    expect(granted).toBeGreaterThan(500 + 1000 / 1.12);
    // 0.112 tokens banked by 600 ms, the remaining 0.888 at 0.784/s.
    close(granted, 600 + ((1 - 0.112) / 0.784) * 1000);
  });

  it('an abort rejects the wait with the signal’s reason and leaves no timer', async () => {
    const clock = virtualClock();
    const rate = awsAdaptiveRate({ clock });
    await clock.advance(500);
    rate.record('throttled');
    const controller = new AbortController();
    const p = rate.acquire(controller.signal) as Promise<unknown>;
    expect(clock.pending).toBe(1);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(p).rejects.toBe(reason);
    expect(clock.pending).toBe(0);
    await expect(Promise.resolve(rate.acquire(controller.signal))).rejects.toBe(reason);
  });

  it('rejects bad options, naming them', () => {
    expect(() => awsAdaptiveRate({ clock: {} as Clock })).toThrow(
      /awsAdaptiveRate\(\): expected `clock` to be a Clock/,
    );
    expect(() => awsAdaptiveRate({ beta: 0.5 } as never)).toThrow(/unknown option `beta`/);
    expect(() => awsAdaptiveRate(5 as never)).toThrow(TypeError);
  });
});

describe('awsAdaptiveRate: the token bucket’s edges', () => {
  it('takes no token before the first throttle, as the SDK’s getSendToken returns early', async () => {
    // Requests sent while the bucket is off leave it empty, not in debt: the first throttle's
    // wait is the SDK table's 892.857 ms whether 0 or 5 requests went before it.
    for (const before of [0, 5]) {
      const clock = scripted();
      const rate = awsAdaptiveRate({ clock });
      clock.at(0.2);
      for (let i = 0; i < before; i++) expect(rate.acquire()).toBeUndefined();
      clock.at(0.5);
      rate.record('throttled');
      await rate.acquire();
      expect(clock.sleeps).toHaveLength(1);
      close(clock.sleeps[0] as number, 892.8571428571428);
    }
  });

  it('counts a bucket within 1e-9 of a whole token as a token (no sub-nanosecond timer), one ulp less as short', async () => {
    // Throttled at 2 ms: the bucket refills at the 0.5/s floor from empty. At 2001.999998 ms it
    // holds exactly 1 − 1e-9 tokens (found by search: (t − 0.002 s) · 0.5 rounds to it).
    const clock = scripted();
    const rate = awsAdaptiveRate({ clock });
    clock.at(0.002);
    rate.record('throttled');
    expect(rate.fillRate).toBe(0.5);
    clock.at(2001.999998 / 1000);
    expect(rate.acquire()).toBeUndefined();
    expect(clock.sleeps).toEqual([]);

    const short = scripted();
    const other = awsAdaptiveRate({ clock: short });
    short.at(0.002);
    other.record('throttled');
    // The float just below 2001.999998 ms: a bucket a hair under the tolerance waits.
    const below = 2001.999998 - 2 ** -42;
    expect(below).toBeLessThan(2001.999998);
    short.at(below / 1000);
    const wait = other.acquire();
    expect(wait).toBeInstanceOf(Promise);
    await wait;
    expect(short.sleeps).toHaveLength(1);
    expect(short.sleeps[0]).toBeGreaterThan(0);
    expect(short.sleeps[0]).toBeLessThan(1e-5);
  });
});
