import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { virtualClock } from '../core/virtual-clock.js';
import { pipeline } from '../retry/pipeline.js';
import { retrying } from '../retry/retrying.js';
import { bulkhead } from './bulkhead.js';
import { isLimitExceededError, type LimitExceededError } from './errors.js';

const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

describe('bulkhead: a fixed compartment of calls', () => {
  it('runs maxConcurrent calls at once, queues maxQueue in arrival order, refuses the rest at once', async () => {
    const clock = virtualClock();
    const b = bulkhead({ maxConcurrent: 2, maxQueue: 1, clock });
    const api = pipeline([b]);
    const started: string[] = [];
    const call = (name: string) =>
      settle(
        api.execute(() => {
          started.push(`${name}@${clock.now()}`);
          return clock.sleep(100).then(() => name);
        }),
      );
    const calls = ['a', 'b', 'c', 'd'].map(call);
    expect({ inflight: b.inflight, queued: b.queued }).toEqual({ inflight: 2, queued: 1 });
    const d = await (calls[3] as (typeof calls)[number]);
    expect(d.ok).toBe(false);
    expect((d as { error: LimitExceededError }).error).toMatchObject({
      name: 'LimitExceededError',
      code: 'EBB_LIMIT_EXCEEDED',
      reason: 'queue-full',
      limit: 2,
      // Named as what refused it, not as a concurrency limit.
      message: 'The bulkhead (2 in flight) refused a request: 2 in flight and 1 waiting (maxQueue).',
    });
    await clock.runAll();
    expect((await Promise.all(calls.slice(0, 3))).map((r) => r.ok && r.value)).toEqual(['a', 'b', 'c']);
    expect(started).toEqual(['a@0', 'b@0', 'c@100']);
    expect({ inflight: b.inflight, queued: b.queued }).toEqual({ inflight: 0, queued: 0 });
  });

  it('its size never changes whatever the outcomes: failures, drops and slow calls only free their slot', async () => {
    const clock = virtualClock();
    const b = bulkhead({ maxConcurrent: 1, clock });
    const api = pipeline([b]);
    const outcomes = [
      () => Promise.reject(Object.assign(new Error('503'), { status: 503, throttled: true })),
      () => clock.sleep(60_000).then(() => ({ status: 503 })),
      () => Promise.reject(new TypeError('bug')),
    ];
    for (const outcome of outcomes) {
      const p = settle(api.execute(outcome));
      await clock.runAll();
      await p;
      expect(b.inflight).toBe(0);
    }
    // Still one slot: a second call alongside the first is refused.
    const first = api.execute(() => clock.sleep(10));
    expect((await settle(api.execute(() => 'second'))).ok).toBe(false);
    await clock.runAll();
    await first;
  });

  it('a waiter is refused after maxWaitMs; a refusal carries the wait the round trips it measured suggest', async () => {
    const clock = virtualClock();
    const b = bulkhead({ maxConcurrent: 1, maxQueue: 1, maxWaitMs: 50, clock });
    const api = pipeline([b]);
    const first = api.execute(() => clock.sleep(80).then(() => 'first'));
    const waiter = settle(api.execute(() => 'never'));
    await clock.advance(50);
    const refused = await waiter;
    expect((refused as { error: LimitExceededError }).error).toMatchObject({ reason: 'wait', retryAfterMs: 0 });
    await clock.advance(30);
    expect(await first).toBe('first');
    // One round trip of 80 ms measured: a refusal now suggests 80 ms for one slot, nobody queued.
    const holder = api.execute(() => clock.sleep(40));
    const queued = api.execute(() => 'queued');
    const full = await settle(api.execute(() => 'full'));
    expect((full as { error: LimitExceededError }).error.retryAfterMs).toBe(160);
    await clock.runAll();
    await Promise.all([holder, queued]);
  });

  it('inside retrying(), a refusal is backed off at least its retryAfterMs and retried', async () => {
    const clock = virtualClock();
    const b = bulkhead({ maxConcurrent: 1, clock });
    const learn = pipeline([b]).execute(() => clock.sleep(200));
    await clock.advance(200);
    await learn;
    const holder = pipeline([b]).execute(() => clock.sleep(200).then(() => 'holder'));
    const starts: number[] = [];
    const retried = pipeline([
      retrying({ clock, backoff: constant({ delayMs: 1, maxAttempts: 4, jitter: noJitter }) }),
      b,
    ]).execute(() => {
      starts.push(clock.now());
      return 'retried';
    });
    await clock.runAll();
    expect([await holder, await retried]).toEqual(['holder', 'retried']);
    expect(starts).toEqual([400]);
  });

  it('withPriority: a higher class displaces the newest waiter of a lower one when the queue is full', async () => {
    const clock = virtualClock();
    const b = bulkhead({ maxConcurrent: 1, maxQueue: 1, clock });
    const holder = pipeline([b]).execute(() => clock.sleep(10));
    const low = settle(pipeline([b]).execute(() => 'low'));
    const high = pipeline([b.withPriority(1)]).execute(() => 'high');
    const displaced = await low;
    expect(isLimitExceededError((displaced as { error: unknown }).error)).toBe(true);
    expect((displaced as { error: LimitExceededError }).error.reason).toBe('displaced');
    await clock.runAll();
    await holder;
    expect(await high).toBe('high');
  });

  it('is a guard for withRetry()’s rate too: acquire, record, release free the same slots', () => {
    const clock = virtualClock();
    const b = bulkhead({ maxConcurrent: 1, clock });
    const t = b.acquire();
    expect(() => b.acquire()).toThrow(/refused a request/);
    b.record('failure', t, new Error('x'));
    b.release(b.acquire());
    expect(b.inflight).toBe(0);
  });

  it('requires maxConcurrent; every option names itself when refused; it takes no isFailure (it judges nothing)', () => {
    expect(() => bulkhead(undefined as never)).toThrow(
      'bulkhead(): expected `maxConcurrent` to be a whole number >= 1, got undefined. For example 10: the calls this dependency may hold at once.',
    );
    expect(() => bulkhead({ maxConcurrent: 0 })).toThrow(RangeError);
    expect(() => bulkhead({ maxConcurrent: 2, isFailure: () => true } as never)).toThrow(
      /bulkhead\(\): unknown option `isFailure`/,
    );
    expect(() => bulkhead({ maxConcurrent: 2, algorithm: {} } as never)).toThrow(/unknown option `algorithm`/);
    expect(() => bulkhead({ maxConcurrent: 2 }).withPriority(Number.NaN)).toThrow(/bulkhead\.withPriority\(\)/);
    fc.assert(
      fc.property(
        fc.constantFrom('maxConcurrent', 'maxQueue', 'maxWaitMs', 'clock'),
        fc.oneof(fc.anything(), fc.constantFrom(Number.NaN, -1, 0.5, Infinity, '3', null)),
        (name, value) => {
          try {
            bulkhead({ maxConcurrent: 2, [name]: value });
          } catch (error) {
            expect(error instanceof TypeError || error instanceof RangeError).toBe(true);
            expect((error as Error).message).toContain(`\`${name}`);
          }
        },
      ),
      { numRuns: 500 },
    );
    expect(bulkhead({ maxConcurrent: 3 }).maxConcurrent).toBe(3);
  });
});
