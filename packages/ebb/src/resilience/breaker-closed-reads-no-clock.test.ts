import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import type { Clock } from '../core/clock.js';
import { virtualClock } from '../core/virtual-clock.js';
import { pipeline } from '../retry/pipeline.js';
import type { CircuitBreakerOptions } from './circuit-breaker.js';
import { circuitBreaker } from './circuit-breaker.js';

const open = constant({ delayMs: 1_000, jitter: noJitter, maxAttempts: Infinity });

/** A virtual clock that counts its readings. */
function countingClock(): Clock & { reads: number; advance(ms: number): Promise<void> } {
  const clock = virtualClock();
  const counted = {
    reads: 0,
    now: () => {
      counted.reads++;
      return clock.now();
    },
    sleep: clock.sleep.bind(clock),
    advance: (ms: number) => clock.advance(ms),
  };
  return counted;
}

const fail = () => Promise.reject(new Error('503'));
const succeed = () => Promise.resolve('ok');

describe('circuitBreaker in a pipeline: a closed breaker reads its clock only when the time counts', () => {
  it('without a window or a slow-call threshold, successes read no clock (the success path of a pipeline)', async () => {
    const clock = countingClock();
    const api = pipeline([circuitBreaker({ clock, consecutiveFailures: 3, openBackoff: open })]);
    for (let i = 0; i < 5; i++) expect(await api.execute(succeed)).toBe('ok');
    expect(clock.reads).toBe(0);
  });

  it('a success still ends the run of failures: two failures, a success, two failures leave it closed', async () => {
    const clock = countingClock();
    const breaker = circuitBreaker({ clock, consecutiveFailures: 3, openBackoff: open });
    const api = pipeline([breaker]);
    for (const op of [fail, fail, succeed, fail, fail]) await api.execute(op).catch(() => undefined);
    expect(breaker.state).toBe('closed');
    expect(breaker.metrics.consecutiveFailures).toBe(2);
    await api.execute(fail).catch(() => undefined);
    expect(breaker.state).toBe('open');
  });

  it.each<[string, CircuitBreakerOptions]>([
    ['slowCallMs', { slowCallMs: 50 }],
    ['failureRate (a window)', { failureRate: 0.5, minCalls: 2 }],
  ])('with %s the time of every call counts: a success reads the clock', async (_name, extra) => {
    const clock = countingClock();
    const api = pipeline([circuitBreaker({ clock, consecutiveFailures: 3, openBackoff: open, ...extra })]);
    await api.execute(succeed);
    expect(clock.reads).toBeGreaterThan(0);
  });

  it('a success slower than slowCallMs still counts as a failure and opens the circuit', async () => {
    const clock = countingClock();
    const breaker = circuitBreaker({ clock, consecutiveFailures: 1, slowCallMs: 50, openBackoff: open });
    const api = pipeline([breaker]);
    const slow = api.execute(() => clock.sleep(100).then(() => 'late'));
    await clock.advance(100);
    expect(await slow).toBe('late');
    expect(breaker.state).toBe('open');
  });

  it('after a half-open probe succeeds and closes the circuit, successes read no clock again', async () => {
    const clock = countingClock();
    const breaker = circuitBreaker({ clock, consecutiveFailures: 1, openBackoff: open });
    const api = pipeline([breaker]);
    await api.execute(fail).catch(() => undefined);
    expect(breaker.state).toBe('open');
    await clock.advance(1_000);
    expect(await api.execute(succeed)).toBe('ok');
    expect(breaker.state).toBe('closed');
    const before = clock.reads;
    await api.execute(succeed);
    expect(clock.reads).toBe(before);
  });
});

describe('circuitBreaker used by hand (acquire/record, run): a closed breaker reads its clock only when the time counts', () => {
  it('without a window or a slow-call threshold, successes read no clock; each failure reads it once, and the one that opens starts the open period then', async () => {
    const clock = countingClock();
    const breaker = circuitBreaker({ clock, consecutiveFailures: 3, openBackoff: open });
    for (let i = 0; i < 5; i++) breaker.record('success', breaker.acquire(), 'ok');
    expect(await breaker.run(succeed)).toBe('ok');
    expect(clock.reads).toBe(0);
    const tickets = [breaker.acquire(), breaker.acquire(), breaker.acquire()];
    expect(clock.reads).toBe(0);
    breaker.record('failure', tickets[0], new Error('503'));
    breaker.record('failure', tickets[1], new Error('503'));
    expect(clock.reads).toBe(2);
    await clock.advance(400);
    breaker.record('failure', tickets[2], new Error('503'));
    expect(clock.reads).toBe(3);
    // Opened at 400 ms for 1 s: 600 ms left at 800 ms.
    await clock.advance(400);
    expect(breaker.state).toBe('open');
    expect(breaker.retryAfterMs).toBe(600);
  });

  it('a success by hand still ends the run of failures, and an error isFailure says is no failure counts for nothing, without a clock', () => {
    const clock = countingClock();
    const breaker = circuitBreaker({
      clock,
      consecutiveFailures: 2,
      openBackoff: open,
      isFailure: (o) => !o.ok && (o.error as Error).message !== 'not found',
    });
    breaker.record('failure', breaker.acquire(), new Error('503'));
    const reads = clock.reads;
    breaker.record('success', breaker.acquire(), 'ok');
    breaker.record('failure', breaker.acquire(), new Error('not found'));
    expect(clock.reads).toBe(reads);
    breaker.record('failure', breaker.acquire(), new Error('503'));
    expect(breaker.state).toBe('closed');
    expect(breaker.metrics.consecutiveFailures).toBe(1);
  });

  it('a clock that answers NaN is met where the time counts: acquire() and a success go through, the failure fails record() and leaves the counts as they were', () => {
    const inner = virtualClock();
    let bad = true;
    const clock: Clock = { now: () => (bad ? Number.NaN : inner.now()), sleep: inner.sleep.bind(inner) };
    const breaker = circuitBreaker({ clock, consecutiveFailures: 1, openBackoff: open });
    breaker.record('success', breaker.acquire(), 'ok');
    const ticket = breaker.acquire();
    // A number out of range is a RangeError, as the executor's and every other mechanism's check says.
    expect(() => breaker.record('failure', ticket, new Error('503'))).toThrow(
      new RangeError('clock.now() returned NaN; expected a finite number of milliseconds.'),
    );
    bad = false;
    expect(breaker.state).toBe('closed');
    expect(breaker.metrics.consecutiveFailures).toBe(0);
    // The ticket reported once: recording it again changes nothing.
    breaker.record('failure', ticket, new Error('503'));
    expect(breaker.state).toBe('closed');
    // With a slow-call threshold every call's start counts: acquire() reads the clock and fails.
    bad = true;
    const timed = circuitBreaker({ clock, consecutiveFailures: 1, slowCallMs: 50, openBackoff: open });
    expect(() => timed.acquire()).toThrow(/clock\.now\(\) returned NaN/);
    // Anything but a number is a TypeError.
    const stringly = circuitBreaker({
      clock: { now: () => '5' as never, sleep: inner.sleep.bind(inner) },
      slowCallMs: 50,
      openBackoff: open,
    });
    expect(() => stringly.acquire()).toThrow(
      new TypeError('clock.now() returned "5"; expected a finite number of milliseconds.'),
    );
  });
});
