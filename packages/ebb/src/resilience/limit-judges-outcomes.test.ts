import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { virtualClock } from '../core/virtual-clock.js';
import { pipeline } from '../retry/pipeline.js';
import { retrying } from '../retry/retrying.js';
import { concurrencyLimit } from './concurrency-limit.js';
import { isLimitExceededError, type LimitExceededError } from './errors.js';
import type { LimitAlgorithm, LimitSample } from './limit-algorithm.js';

/** A fixed limit that keeps every sample it is given. */
function recording(limit: number): LimitAlgorithm & { samples: LimitSample[] } {
  const samples: LimitSample[] = [];
  return { limit, samples, update: (s) => samples.push(s) };
}

const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

describe('concurrencyLimit in a pipeline: what is a drop', () => {
  it('by default only what says "overloaded" — thrown or returned — is a drop; other failures give no sample', async () => {
    const clock = virtualClock();
    const algorithm = recording(4);
    const api = pipeline([concurrencyLimit({ clock, algorithm })]);
    const run = (outcome: () => unknown) => settle(api.execute(() => clock.sleep(10).then(outcome)));
    const drops: boolean[] = [];
    const cases: [string, () => unknown, boolean | undefined][] = [
      ['a value', () => 'ok', false],
      ['a returned 503', () => ({ status: 503 }), true],
      ['a returned 429', () => ({ status: 429 }), true],
      ['a thrown 503', () => Promise.reject(Object.assign(new Error('503'), { status: 503 })), true],
      ['a throttled error', () => Promise.reject(Object.assign(new Error('slow down'), { throttled: true })), true],
      ['a TimeoutError', () => Promise.reject(Object.assign(new Error('late'), { name: 'TimeoutError' })), true],
      ['a thrown 500', () => Promise.reject(Object.assign(new Error('500'), { status: 500 })), undefined],
      ['a refused connection', () => Promise.reject(new TypeError('fetch failed')), undefined],
    ];
    for (const [name, outcome, dropped] of cases) {
      const before = algorithm.samples.length;
      const p = run(outcome);
      await clock.advance(10);
      await p;
      const sample = algorithm.samples[before];
      expect(sample?.dropped, name).toBe(dropped);
      if (sample) drops.push(sample.dropped);
      expect(sample?.rttMs ?? 10, name).toBe(10);
    }
    expect(drops).toEqual([false, true, true, true, true, true]);
  });

  it("isFailure decides: true or 'throttled' is a drop, false on a value a success, false on an error no sample", async () => {
    const clock = virtualClock();
    const algorithm = recording(4);
    const seen: unknown[] = [];
    const limiter = concurrencyLimit<{ status: number }>({
      clock,
      algorithm,
      isFailure: (o, c) => {
        seen.push(c.attempt);
        if (!o.ok) return false;
        return o.value.status === 500 ? true : o.value.status === 420 ? 'throttled' : false;
      },
    });
    const api = pipeline([limiter]);
    for (const status of [200, 500, 420, 503]) await api.execute(() => ({ status }));
    await settle(api.execute(() => Promise.reject(Object.assign(new Error(), { status: 503 }))));
    expect(algorithm.samples.map((s) => s.dropped)).toEqual([false, true, true, false]);
    expect(seen).toEqual([1, 1, 1, 1, 1]);
    expect(limiter.inflight).toBe(0);
  });

  it('an async isFailure: the slot is free before it is awaited; the sample keeps the round trip to the outcome', async () => {
    const clock = virtualClock();
    const algorithm = recording(1);
    let answer: (v: boolean) => void = () => {};
    const limiter = concurrencyLimit({
      clock,
      algorithm,
      isFailure: () =>
        new Promise<boolean>((resolve) => {
          answer = resolve;
        }),
    });
    const api = pipeline([limiter]);
    const first = api.execute(() => clock.sleep(30).then(() => 'first'));
    await clock.advance(30);
    expect(limiter.inflight).toBe(0);
    await clock.advance(70);
    answer(true);
    expect(await first).toBe('first');
    expect(algorithm.samples).toEqual([{ rttMs: 30, inflight: 1, dropped: true, delivered: 0 }]);
  });

  it('through record(): isFailure judges a success’s value too, and a throttled outcome is a drop without it', () => {
    const clock = virtualClock();
    const algorithm = recording(4);
    const judged = concurrencyLimit<{ status: number }>({
      clock,
      algorithm,
      isFailure: (o) => o.ok && o.value.status === 503,
    });
    judged.record('success', judged.acquire(), { status: 503 });
    judged.record('success', judged.acquire(), { status: 200 });
    const plain = concurrencyLimit({ clock, algorithm });
    plain.record('throttled', plain.acquire());
    plain.record('failure', plain.acquire(), new Error('500'));
    expect(algorithm.samples.map((s) => s.dropped)).toEqual([true, false, true]);
  });

  it('refuses isDrop, the name of 0.1, saying what to write', () => {
    expect(() => concurrencyLimit({ isDrop: () => true } as never)).toThrow(
      /concurrencyLimit\(\): `isDrop` was renamed in 1.0: use `isFailure: \(outcome, context\) => …`/,
    );
  });
});

describe('a full limit’s refusal carries retryAfterMs, which a retry around it waits out', () => {
  it('0 before any round trip is known; then (queued + 1) × the smoothed round trip ÷ the limit', async () => {
    const clock = virtualClock();
    const limiter = concurrencyLimit({ clock, algorithm: recording(2), maxQueue: 1, maxWaitMs: 10_000 });
    const api = pipeline([limiter]);
    const slow = () => clock.sleep(200).then(() => 'done');
    const slower = () => clock.sleep(400).then(() => 'done');
    const calls = [api.execute(slow), api.execute(slow), api.execute(slower)];
    const refused = await settle(api.execute(slow));
    expect(refused.ok).toBe(false);
    expect((refused as { error: LimitExceededError }).error).toMatchObject({
      code: 'EBB_LIMIT_EXCEEDED',
      reason: 'queue-full',
      retryAfterMs: 0,
    });
    await clock.advance(600);
    await Promise.all(calls);
    // Round trips (from admission) of 200, 200 and 400 ms: RFC 6298's SRTT 200, 200, then 225.
    const again = [api.execute(slow), api.execute(slow), api.execute(slow)];
    const second = await settle(api.execute(slow));
    const error = (second as { error: LimitExceededError }).error;
    expect(isLimitExceededError(error)).toBe(true);
    expect(error.retryAfterMs).toBe(Math.ceil((225 * 2) / 2));
    expect(error.message).toContain('a slot is likely free in 225 ms');
    await clock.advance(400);
    await Promise.all(again);
  });

  it('inside retrying(), the attempt after a refusal waits at least retryAfterMs, then gets its slot', async () => {
    const clock = virtualClock();
    const limiter = concurrencyLimit({ clock, algorithm: recording(1) });
    const slow = () => clock.sleep(300).then(() => 'slow');
    // One round trip to learn from.
    const learn = pipeline([limiter]).execute(slow);
    await clock.advance(300);
    await learn;
    const holder = pipeline([limiter]).execute(slow);
    const starts: number[] = [];
    const retried = pipeline([
      retrying({ clock, backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter }) }),
      limiter,
    ]).execute(() => {
      starts.push(clock.now());
      return 'retried';
    });
    await clock.runAll();
    expect(await holder).toBe('slow');
    expect(await retried).toBe('retried');
    // Refused at 300 with retryAfterMs 300 (one round trip, nobody queued): the retry waits 300, not its 10 ms.
    expect(starts).toEqual([600]);
  });
});
