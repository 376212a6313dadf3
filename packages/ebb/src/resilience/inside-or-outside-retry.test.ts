import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { virtualClock } from '../core/virtual-clock.js';
import { pipeline } from '../retry/pipeline.js';
import { retrying } from '../retry/retrying.js';
import { circuitBreaker } from './circuit-breaker.js';
import { concurrencyLimit } from './concurrency-limit.js';
import type { LimitSample } from './limit-algorithm.js';

const three = constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter });
const failing = () => Promise.reject(new Error('503'));

describe('a mechanism inside retrying() sees each attempt, outside it each call — two of a kind in one pipeline', () => {
  it('two breakers: the inner one counts every attempt, the outer one the call that gave up', async () => {
    const clock = virtualClock();
    const outer = circuitBreaker({ clock, consecutiveFailures: 3 });
    const inner = circuitBreaker({ clock, consecutiveFailures: 3 });
    const api = pipeline([outer, retrying({ clock, backoff: three }), inner]);
    const call = api.execute(failing).catch((e: Error) => e.name);
    await clock.runAll();
    expect(await call).toBe('RetryError');
    // Three attempts opened the inner breaker; the outer one saw one failed call.
    expect(inner.state).toBe('open');
    expect(outer.metrics.consecutiveFailures).toBe(1);
    expect(outer.state).toBe('closed');
  });

  it('the inner breaker’s refusals are backed off by the retry; the outer breaker counts them as one failure of the call', async () => {
    const clock = virtualClock();
    const outer = circuitBreaker({ clock, consecutiveFailures: 5 });
    const inner = circuitBreaker({
      clock,
      consecutiveFailures: 1,
      openBackoff: constant({ delayMs: 1_000, jitter: noJitter, maxAttempts: Infinity }),
    });
    const starts: number[] = [];
    const api = pipeline([outer, retrying({ clock, backoff: three }), inner]);
    const call = api
      .execute(() => {
        starts.push(clock.now());
        return starts.length === 1 ? failing() : 'recovered';
      })
      .catch((e: Error) => e.name);
    await clock.runAll();
    // Attempt 1 failed and opened the inner breaker (1 s); attempt 2 waited out its retryAfterMs.
    expect(await call).toBe('recovered');
    expect(starts).toEqual([0, 1_000]);
    expect(outer.metrics.consecutiveFailures).toBe(0);
  });

  it('two limits: the outer slot is held for the whole call (backoff waits included), the inner one per attempt', async () => {
    const clock = virtualClock();
    const held = (name: string, log: string[]) => ({
      limit: 1,
      update: (s: LimitSample) => log.push(`${name} ${s.rttMs} ms${s.dropped ? ' dropped' : ''}`),
    });
    const log: string[] = [];
    const outer = concurrencyLimit({ clock, algorithm: held('outer', log) });
    const inner = concurrencyLimit({
      clock,
      algorithm: held('inner', log),
      isFailure: (o) => !o.ok,
    });
    const api = pipeline([outer, retrying({ clock, backoff: three }), inner]);
    let n = 0;
    const call = api.execute(() => clock.sleep(5).then(() => (++n < 3 ? failing() : 'ok')));
    await clock.advance(7);
    // Between attempts the inner slot is free, the outer one held: a second call is refused by the outer limit only.
    expect([outer.inflight, inner.inflight]).toEqual([1, 0]);
    expect(await pipeline([inner]).execute(() => 'inner is free')).toBe('inner is free');
    await clock.runAll();
    expect(await call).toBe('ok');
    expect(log).toEqual(['inner 5 ms dropped', 'inner 0 ms', 'inner 5 ms dropped', 'inner 5 ms', 'outer 35 ms']);
    expect([outer.inflight, inner.inflight]).toEqual([0, 0]);
  });
});
