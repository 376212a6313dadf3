import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { virtualClock } from '../core/virtual-clock.js';
import { adaptiveThrottle, isLocalThrottleError } from '../rate/adaptive-throttle.js';
import type { AttemptContext } from '../retry/contexts.js';
import { defaultIsFailure, type Result, stop } from '../retry/errors.js';
import { pipeline } from '../retry/pipeline.js';
import { retrying } from '../retry/retrying.js';
import { bulkhead } from './bulkhead.js';
import { circuitBreaker } from './circuit-breaker.js';
import { isBrokenCircuitError } from './errors.js';

const open = constant({ delayMs: 1_000, jitter: noJitter, maxAttempts: Infinity });
const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

describe('circuitBreaker in a pipeline: isFailure judges every outcome, values included', () => {
  it('a returned { status: 503 } counts as a failure when isFailure says so, and opens the circuit', async () => {
    const clock = virtualClock();
    const breaker = circuitBreaker<{ status: number }>({
      clock,
      consecutiveFailures: 2,
      openBackoff: open,
      isFailure: (o) => (o.ok ? o.value.status >= 500 : defaultIsFailure(o)),
    });
    const api = pipeline([breaker]);
    // A value is the call's result either way: the breaker only counts it.
    expect(await api.execute(() => ({ status: 503 }))).toEqual({ status: 503 });
    expect(breaker.metrics.consecutiveFailures).toBe(1);
    expect(await api.execute(() => ({ status: 200 }))).toEqual({ status: 200 });
    expect(breaker.metrics.consecutiveFailures).toBe(0);
    await api.execute(() => ({ status: 503 }));
    await api.execute(() => ({ status: 502 }));
    expect(breaker.state).toBe('open');
    const refused = await settle(api.execute(() => ({ status: 200 })));
    expect(refused.ok).toBe(false);
    expect(isBrokenCircuitError((refused as { error: unknown }).error)).toBe(true);
  });

  it('by default no value is a failure, and neither an abort, a bug in the caller’s code nor stop(error) counts', async () => {
    const clock = virtualClock();
    const breaker = circuitBreaker({ clock, consecutiveFailures: 1, openBackoff: open });
    const api = pipeline([breaker]);
    await api.execute(() => ({ status: 503 }));
    const thrown = [
      new TypeError('x.y is not a function'),
      new RangeError('bad length'),
      Object.assign(new Error('aborted'), { name: 'AbortError' }),
      stop(new Error('404: no such item')),
    ];
    for (const error of thrown) {
      const r = await settle(
        api.execute(() => {
          throw error;
        }),
      );
      expect(r).toEqual({ ok: false, error });
      expect(breaker.state, String(error)).toBe('closed');
    }
    // A network failure of fetch is a TypeError too, and counts.
    await settle(api.execute(() => Promise.reject(new TypeError('fetch failed'))));
    expect(breaker.state).toBe('open');
  });

  it("counts 'throttled' as a failure, and an error isFailure calls no failure as nothing at all", async () => {
    const clock = virtualClock();
    const breaker = circuitBreaker({
      clock,
      consecutiveFailures: 2,
      openBackoff: open,
      isFailure: (o) => (o.ok ? false : (o.error as { status: number }).status === 429 ? 'throttled' : false),
    });
    const api = pipeline([breaker]);
    const fail = (status: number) => settle(api.execute(() => Promise.reject(Object.assign(new Error(), { status }))));
    await fail(429);
    await fail(404); // neither a failure nor a success: the count of failures in a row stands
    expect(breaker.metrics.consecutiveFailures).toBe(1);
    await fail(429);
    expect(breaker.state).toBe('open');
  });

  it('isFailure gets the context of the call it judges: the attempt of the retry around the breaker', async () => {
    const clock = virtualClock();
    const seen: number[] = [];
    const breaker = circuitBreaker({
      clock,
      consecutiveFailures: 10,
      isFailure: (o, context: AttemptContext) => {
        seen.push(context.attempt);
        return !o.ok;
      },
    });
    let n = 0;
    const api = pipeline([
      retrying({ clock, backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter }) }),
      breaker,
    ]);
    const call = api.execute(() => (++n < 3 ? Promise.reject(new Error('503')) : 'ok'));
    await clock.runAll();
    expect(await call).toBe('ok');
    expect(seen).toEqual([1, 2, 3]);
  });

  it('an async isFailure: the probe slot is free while it is awaited, and its verdict counts when it comes', async () => {
    const clock = virtualClock();
    let answer: (v: boolean) => void = () => {};
    const breaker = circuitBreaker({
      clock,
      consecutiveFailures: 1,
      openBackoff: open,
      isFailure: (o) =>
        o.ok
          ? false
          : new Promise<boolean>((resolve) => {
              answer = resolve;
            }),
    });
    const api = pipeline([breaker]);
    const first = settle(api.execute(() => Promise.reject(new Error('down'))));
    await clock.advance(0);
    // The verdict is pending: the circuit is still closed, and other calls go through.
    expect(breaker.state).toBe('closed');
    expect(await api.execute(() => 'meanwhile')).toBe('meanwhile');
    answer(true);
    expect((await first).ok).toBe(false);
    expect(breaker.state).toBe('open');
    // Half-open: the probe's verdict is pending, yet its slot is free for the next probe.
    await clock.advance(1_000);
    const probe = settle(api.execute(() => Promise.reject(new Error('still down'))));
    await clock.advance(0);
    expect(breaker.metrics.probesInFlight).toBe(0);
    const late = answer;
    expect(await api.execute(() => 'second probe')).toBe('second probe');
    expect(breaker.state).toBe('closed');
    // The first probe's verdict comes after the circuit closed: it belongs to an old state and counts for nothing.
    late(true);
    expect((await probe).ok).toBe(false);
    expect(breaker.state).toBe('closed');
  });
});

describe('circuitBreaker through record() (withRetry’s rate): the caller’s outcome, judged by isFailure', () => {
  it("without isFailure: 'throttled' and 'failure' count, but a 'failure' that is a bug in the caller's code", () => {
    const clock = virtualClock();
    const breaker = circuitBreaker({ clock, consecutiveFailures: 2, openBackoff: open });
    breaker.record('failure', breaker.acquire(), new TypeError('Invalid URL'));
    breaker.record('failure', breaker.acquire(), new TypeError('Invalid URL'));
    expect(breaker.state).toBe('closed');
    breaker.record('throttled', breaker.acquire());
    breaker.record('failure', breaker.acquire(), new Error('HTTP 503'));
    expect(breaker.state).toBe('open');
  });

  it('with isFailure: a success carrying a failed value counts, with the attempt acquire was told', () => {
    const clock = virtualClock();
    const seen: [Result, number][] = [];
    const breaker = circuitBreaker<{ status: number }>({
      clock,
      consecutiveFailures: 1,
      openBackoff: open,
      isFailure: (o, c) => {
        seen.push([o, c.attempt]);
        return o.ok && o.value.status === 503;
      },
    });
    breaker.record('success', breaker.acquire(undefined, 2), { status: 200 });
    expect(breaker.state).toBe('closed');
    breaker.record('success', breaker.acquire(undefined, 3), { status: 503 });
    expect(breaker.state).toBe('open');
    expect(seen).toEqual([
      [{ ok: true, value: { status: 200 } }, 2],
      [{ ok: true, value: { status: 503 } }, 3],
    ]);
  });

  it('an isFailure that answers with a promise there is refused with a TypeError naming it, and the probe is freed', async () => {
    const clock = virtualClock();
    const breaker = circuitBreaker({
      clock,
      isFailure: async () => true,
      restore: { state: 'half-open', openings: 1, openRemainingMs: 0, consecutiveFailures: 0 },
    });
    const probe = breaker.acquire();
    expect(() => breaker.record('failure', probe, new Error('x'))).toThrow(
      /circuitBreaker\(\): `isFailure` returned a promise; record\(\) .* needs true, false or 'throttled' at once/,
    );
    expect(breaker.metrics.probesInFlight).toBe(0);
  });
});

describe('circuitBreaker: a refusal by a mechanism inside it counts for nothing', () => {
  it('a full bulkhead behind the breaker refuses calls that never reach the service: the circuit stays closed, even with isFailure: (o) => !o.ok', async () => {
    const clock = virtualClock();
    const breaker = circuitBreaker({ clock, consecutiveFailures: 2, openBackoff: open, isFailure: (o) => !o.ok });
    const b = bulkhead({ maxConcurrent: 1, clock });
    const api = pipeline([breaker, b]);
    const holder = api.execute(() => clock.sleep(100).then(() => 'served'));
    const refused = await Promise.all([1, 2, 3].map(() => settle(api.execute(() => 'never run'))));
    expect(refused.map((r) => (r as { error: { code: string } }).error.code)).toEqual([
      'EBB_LIMIT_EXCEEDED',
      'EBB_LIMIT_EXCEEDED',
      'EBB_LIMIT_EXCEEDED',
    ]);
    expect(breaker.state).toBe('closed');
    expect(breaker.metrics.consecutiveFailures).toBe(0);
    await clock.runAll();
    expect(await holder).toBe('served');
    // The same errors thrown by the service itself are failures.
    const failing = await settle(api.execute(() => Promise.reject(new Error('503'))));
    expect(failing.ok).toBe(false);
    expect(breaker.metrics.consecutiveFailures).toBe(1);
  });

  it("an inner breaker's BrokenCircuitError does not count in the outer one; through record() neither", async () => {
    const clock = virtualClock();
    const outer = circuitBreaker({ clock, consecutiveFailures: 1, openBackoff: open });
    const inner = circuitBreaker({ clock, consecutiveFailures: 1, openBackoff: open });
    inner.isolate();
    const r = await settle(pipeline([outer, inner]).execute(() => 'never run'));
    expect(isBrokenCircuitError((r as { error: unknown }).error)).toBe(true);
    expect(outer.state).toBe('closed');
    const t = outer.acquire();
    outer.record('failure', t, (r as { error: unknown }).error);
    expect(outer.state).toBe('closed');
  });

  it("adaptiveThrottle's local rejection (LocalThrottleError) behind the breaker does not count", async () => {
    const clock = virtualClock();
    const breaker = circuitBreaker({ clock, consecutiveFailures: 1, openBackoff: open });
    // Every request so far throttled: the next is rejected locally (the draw 0 is below any p > 0).
    const throttle = adaptiveThrottle({ clock, random: () => 0 });
    for (let i = 0; i < 10; i++) throttle.record('throttled');
    for (let i = 0; i < 10; i++) {
      try {
        throttle.acquire();
      } catch {}
    }
    const r = await settle(pipeline([breaker, throttle]).execute(() => 'never run'));
    expect(isLocalThrottleError((r as { error: unknown }).error)).toBe(true);
    expect(breaker.state).toBe('closed');
    expect(breaker.metrics.consecutiveFailures).toBe(0);
  });
});
