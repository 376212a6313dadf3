import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import { pipeline } from '../retry/pipeline.js';
import { aimd } from './aimd.js';
import { concurrencyLimit } from './concurrency-limit.js';
import type { LimitAlgorithm } from './limit-algorithm.js';

const failing = () => Promise.reject(new Error('down'));

describe('concurrencyLimit: a user function that misbehaves fails only its call and frees its slot', () => {
  it('a throwing isFailure: the call rejects with its error, the slot is free, later calls are admitted', async () => {
    const bug = new Error('bug');
    const limiter = concurrencyLimit({
      algorithm: aimd({ initialLimit: 2, minLimit: 2, maxLimit: 2 }),
      isFailure: (o) => {
        if (o.ok) return false;
        throw bug;
      },
    });
    for (let i = 0; i < 2; i++) {
      await expect(pipeline([limiter]).execute(failing)).rejects.toBe(bug);
    }
    expect(limiter.inflight).toBe(0);
    await expect(pipeline([limiter]).execute(() => 'ok')).resolves.toBe('ok');
    expect(limiter.inflight).toBe(0);
  });

  it.each([
    ['NaN', () => Number.NaN],
    ['undefined', () => undefined],
    ['a string', () => 'yes'],
    ['a promise of a string', () => Promise.resolve('yes')],
  ])(
    'an isFailure answering %s: a TypeError naming isFailure fails the call, no sample reaches the algorithm, the slot is free',
    async (_, answer) => {
      const samples: unknown[] = [];
      const algorithm: LimitAlgorithm = {
        limit: 1,
        update: (s) => samples.push(s),
      };
      const limiter = concurrencyLimit({ algorithm, isFailure: (o) => (o.ok ? false : (answer() as never)) });
      const error = await pipeline([limiter])
        .execute(failing)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(
        /^concurrencyLimit\(\): `isFailure` returned .*; expected true, false or 'throttled'\.$/,
      );
      expect(samples).toEqual([]);
      expect(limiter.inflight).toBe(0);
      await expect(pipeline([limiter]).execute(() => 'ok')).resolves.toBe('ok');
      expect(samples).toHaveLength(1);
    },
  );

  it('an async isFailure that never answers: the slot is free at once, the call waits only for its own signal', async () => {
    const algorithm: LimitAlgorithm = { limit: 1, update: () => {} };
    const limiter = concurrencyLimit({ algorithm, isFailure: () => new Promise(() => {}) });
    const controller = new AbortController();
    const stuck = pipeline([limiter])
      .execute(failing, { signal: controller.signal })
      .catch((e: unknown) => e);
    await new Promise((resolve) => setImmediate(resolve));
    expect(limiter.inflight).toBe(0);
    // Another call takes the slot (its own isFailure never answers either: it is aborted below).
    const other = pipeline([limiter])
      .execute(() => 'other', { signal: controller.signal })
      .catch((e: unknown) => e);
    await new Promise((resolve) => setImmediate(resolve));
    expect(limiter.inflight).toBe(0);
    controller.abort('gave up');
    await expect(stuck).resolves.toBe('gave up');
    await expect(other).resolves.toBe('gave up');
  });

  it('an algorithm whose update throws: the call rejects with its error, the slot is free and goes to the next waiter', async () => {
    const clock = virtualClock();
    const bug = new Error('update bug');
    const algorithm: LimitAlgorithm = {
      limit: 1,
      update: () => {
        throw bug;
      },
    };
    const limiter = concurrencyLimit({ algorithm, maxQueue: 1, clock });
    const first = pipeline([limiter])
      .execute(() => clock.sleep(10).then(() => 'first'))
      .catch((e) => e);
    const second = pipeline([limiter])
      .execute(() => 'second')
      .catch((e) => e);
    expect(limiter.queued).toBe(1);
    await clock.advance(10);
    expect(await first).toBe(bug);
    expect(await second).toBe(bug);
    expect(limiter.inflight).toBe(0);
    expect(limiter.queued).toBe(0);
  });

  it('an algorithm whose limit getter throws or returns garbage reads as a limit of 1', async () => {
    for (const bad of [() => Number.NaN, () => 'lots', () => -3, () => undefined]) {
      const algorithm = {
        get limit() {
          return bad() as number;
        },
        update() {},
      };
      const limiter = concurrencyLimit({ algorithm });
      expect(limiter.limit).toBe(1);
    }
    const throwing = {
      get limit(): number {
        throw new Error('getter bug');
      },
      update() {},
    };
    const limiter = concurrencyLimit({ algorithm: throwing, maxQueue: 1, maxWaitMs: Infinity });
    expect(limiter.limit).toBe(1);
    let release: () => void = () => {};
    const first = pipeline([limiter]).execute(() => new Promise<string>((r) => (release = () => r('first'))));
    const second = pipeline([limiter]).execute(() => 'second');
    await Promise.resolve();
    expect([limiter.inflight, limiter.queued]).toEqual([1, 1]);
    release();
    await expect(first).resolves.toBe('first');
    await expect(second).resolves.toBe('second');
    expect([limiter.inflight, limiter.queued]).toEqual([0, 0]);
  });

  it("a clock whose sleep() throws while a request would wait: that request is refused with the clock's error, and nothing stays queued", async () => {
    const bug = new Error('sleep bug');
    let now = 0;
    const clock = {
      now: () => now,
      sleep: () => {
        throw bug;
      },
    };
    const limiter = concurrencyLimit({ algorithm: aimd({ initialLimit: 1, minLimit: 1 }), maxQueue: 4, clock });
    let release: () => void = () => {};
    const first = pipeline([limiter]).execute(() => new Promise<string>((r) => (release = () => r('first'))));
    await expect(pipeline([limiter]).execute(() => 'second')).rejects.toBe(bug);
    expect(limiter.queued).toBe(0);
    now = 5;
    release();
    await expect(first).resolves.toBe('first');
    expect(limiter.inflight).toBe(0);
  });

  it("a clock whose now() throws when a slot is handed to a waiter: that waiter is refused with the clock's error, the slot is not lost", async () => {
    const bug = new Error('now bug');
    let broken = false;
    const inner = virtualClock();
    const clock = {
      now: () => {
        if (broken) throw bug;
        return inner.now();
      },
      sleep: inner.sleep,
    };
    const limiter = concurrencyLimit({ algorithm: aimd({ initialLimit: 1, minLimit: 1 }), maxQueue: 1, clock });
    let release: () => void = () => {};
    const first = pipeline([limiter]).execute(() => new Promise<string>((r) => (release = () => r('first'))));
    const second = pipeline([limiter]).execute(() => 'second');
    await Promise.resolve();
    broken = true;
    release();
    await expect(first).rejects.toBe(bug);
    await expect(second).rejects.toBe(bug);
    expect([limiter.inflight, limiter.queued]).toEqual([0, 0]);
    broken = false;
    await expect(pipeline([limiter]).execute(() => 'third')).resolves.toBe('third');
    expect(inner.pending).toBe(0);
  });
});
