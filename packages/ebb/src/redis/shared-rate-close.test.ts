// sharedRate after close(), in virtual time with a scripted Redis: the member leaves the fleet and
// paces alone on its local fallback controller, at the rate it last had — the requests still
// waiting as well as new ones — and never unpaced (the leaving call's answer is an unlimited share).
import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import { sharedRate } from './shared-rate.js';
import { acquireMany, fakeRedis, lease } from './shared-rate-test-helpers.js';

/** A member with a share of 5 r/s (max 10); the script answers its leaving (lease 0) with no share: -1. */
async function member() {
  const clock = virtualClock();
  const redis = fakeRedis((call) => (call.args[4] === '0' ? lease(-1, 5) : lease(5, 5)));
  const rate = sharedRate({ client: redis.scripts, name: 'n', clock, initialRatePerSecond: 5, maxRatePerSecond: 10 });
  await rate.ready();
  return { clock, redis, rate };
}

const gaps = (xs: readonly number[]) => xs.slice(1).map((x, i) => x - (xs[i] as number));

describe('sharedRate.close()', () => {
  it('leaves the requests waiting paced by the local controller at the share it had, not all at once', async () => {
    const { clock, redis, rate } = await member();
    const { granted, all } = acquireMany(rate, 20, () => clock.now());
    await clock.advance(500);
    expect(granted).toEqual([0, 200, 400]);
    const closed = rate.close();
    await clock.advance(0);
    await closed;
    expect(redis.calls.at(-1)?.args[4]).toBe('0');
    expect(rate.mode).toBe('local');
    expect(rate.ratePerSecond).toBe(5);
    await clock.advance(10_000);
    await all;
    expect(granted).toHaveLength(20);
    // The local controller starts at the close (the first one goes then), then 200 ms apart: 5 r/s.
    const after = granted.slice(3);
    expect(after[0]).toBe(500);
    expect(Math.min(...gaps(after))).toBeGreaterThanOrEqual(190);
    expect(after.at(-1)).toBeGreaterThanOrEqual(500 + 16 * 190);
    expect(rate.stats.fallbacks).toBe(0);
    expect(rate.stats.errors).toBe(0);
  });

  it('paces new requests after close() at the rate it had, and asks for no lease again', async () => {
    const { clock, redis, rate } = await member();
    await rate.close();
    const calls = redis.calls.length;
    expect([rate.mode, rate.ratePerSecond]).toEqual(['local', 5]);
    const { granted, all } = acquireMany(rate, 10, () => clock.now());
    await clock.advance(5000);
    await all;
    expect(Math.min(...gaps(granted))).toBeGreaterThanOrEqual(190);
    expect((granted.at(-1) as number) - (granted[0] as number)).toBeGreaterThanOrEqual(9 * 190);
    expect(redis.calls.length).toBe(calls);
    expect(rate.mode).toBe('local');
  });

  it('closed before its first lease, paces new requests locally at initialRatePerSecond (no wait for a lease that never comes)', async () => {
    const clock = virtualClock();
    const redis = fakeRedis(() => lease(5, 5));
    const rate = sharedRate({ client: redis.scripts, name: 'n', clock, initialRatePerSecond: 4, maxRatePerSecond: 10 });
    await rate.close();
    const { granted, all } = acquireMany(rate, 3, () => clock.now());
    await clock.advance(2000);
    await all;
    expect(granted).toEqual([0, 250, 500]);
    expect(redis.calls).toHaveLength(0);
    expect(rate.mode).toBe('local');
  });
});
