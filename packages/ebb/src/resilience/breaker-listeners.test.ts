import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { exponential } from '../backoff/exponential.js';
import { virtualClock } from '../core/virtual-clock.js';
import type { Result } from '../retry/errors.js';
import { pipeline } from '../retry/pipeline.js';
import { retrying } from '../retry/retrying.js';
import { circuitBreaker, type StateChange } from './circuit-breaker.js';

const doubling = exponential({ initialDelayMs: 1_000, maxDelayMs: 8_000 });
const once = constant({ delayMs: 0, maxAttempts: 1 });

describe('circuitBreaker: listeners cannot harm calls or each other', () => {
  it('a throwing listener: every listener registered after it still hears every change, and the error goes to onListenerError', async () => {
    const clock = virtualClock();
    const heard: string[] = [];
    const errors: [unknown, string][] = [];
    const bug = new Error('listener bug');
    const breaker = circuitBreaker({
      clock,
      consecutiveFailures: 1,
      openBackoff: doubling,
      onStateChange: () => {
        throw bug;
      },
      onListenerError: (error, change) => errors.push([error, `${change.from}>${change.to}`]),
    });
    breaker.subscribe((c) => heard.push(`a ${c.from}>${c.to}`));
    breaker.subscribe(() => {
      throw 'thrown string';
    });
    breaker.subscribe((c) => heard.push(`b ${c.from}>${c.to}`));
    breaker.record('failure', breaker.acquire(), new Error('down'));
    await clock.advance(1_000);
    breaker.record('success', breaker.acquire());
    expect(heard).toEqual([
      'a closed>open',
      'b closed>open',
      'a open>half-open',
      'b open>half-open',
      'a half-open>closed',
      'b half-open>closed',
    ]);
    expect(errors).toEqual([
      [bug, 'closed>open'],
      ['thrown string', 'closed>open'],
      [bug, 'open>half-open'],
      ['thrown string', 'open>half-open'],
      [bug, 'half-open>closed'],
      ['thrown string', 'half-open>closed'],
    ]);
  });

  it("a call's result is its operation's: a failure that opens the circuit rejects with the operation's error, a probe that closes it resolves with its value", async () => {
    const clock = virtualClock();
    const breaker = circuitBreaker({ clock, consecutiveFailures: 1, openBackoff: doubling });
    breaker.subscribe(() => {
      throw new Error('listener bug');
    });
    const down = new Error('down');
    await expect(
      pipeline([retrying({ clock, backoff: once }), breaker]).execute(() => {
        throw down;
      }),
    ).rejects.toMatchObject({ cause: down });
    expect(breaker.state).toBe('open');
    await clock.advance(1_000);
    await expect(pipeline([breaker]).execute(() => 'probe ok')).resolves.toBe('probe ok');
    expect(breaker.state).toBe('closed');
  });

  it('an async listener whose promise rejects: no unhandled rejection, the rejection goes to onListenerError', async () => {
    const clock = virtualClock();
    const errors: unknown[] = [];
    const bug = new Error('async listener bug');
    const breaker = circuitBreaker({
      clock,
      consecutiveFailures: 1,
      onStateChange: async () => {
        throw bug;
      },
      onListenerError: (error) => errors.push(error),
    });
    breaker.record('failure', breaker.acquire(), new Error('down'));
    await Promise.resolve();
    expect(errors).toEqual([bug]);
  });

  it('without onListenerError the error is dropped; an onListenerError that throws is dropped too', () => {
    for (const onListenerError of [
      undefined,
      () => {
        throw new Error('handler bug');
      },
    ]) {
      const breaker = circuitBreaker({
        consecutiveFailures: 1,
        onStateChange: () => {
          throw new Error('listener bug');
        },
        ...(onListenerError ? { onListenerError } : {}),
      });
      expect(() => breaker.record('failure', breaker.acquire(), new Error('down'))).not.toThrow();
      expect(breaker.state).toBe('open');
    }
  });

  it('a listener that resets the breaker when it goes half-open: the call is admitted by the state the listener left', async () => {
    const clock = virtualClock();
    const breaker = circuitBreaker({ clock, consecutiveFailures: 1, openBackoff: doubling });
    const changes: StateChange[] = [];
    breaker.subscribe((c) => {
      changes.push(c);
      if (c.to === 'half-open') breaker.reset();
    });
    breaker.record('failure', breaker.acquire(), new Error('down'));
    await clock.advance(1_000);
    const ticket = breaker.acquire();
    expect(breaker.state).toBe('closed');
    expect(breaker.metrics.probesInFlight).toBe(0);
    breaker.record('failure', ticket, new Error('down again'));
    expect(breaker.state).toBe('open');
    expect(changes.map((c) => c.reason)).toEqual([
      'consecutive-failures',
      'open-period-over',
      'reset',
      'consecutive-failures',
    ]);
  });

  it('a listener that isolates the breaker when it goes half-open: the call is refused, no probe slot is taken', async () => {
    const clock = virtualClock();
    const breaker = circuitBreaker({ clock, consecutiveFailures: 1, openBackoff: doubling });
    breaker.subscribe((c) => {
      if (c.to === 'half-open') breaker.isolate();
    });
    breaker.record('failure', breaker.acquire(), new Error('down'));
    await clock.advance(1_000);
    expect(() => breaker.acquire()).toThrow(/isolated/);
    expect(breaker.metrics.probesInFlight).toBe(0);
  });
});

describe("circuitBreaker: isFailure must answer true, false or 'throttled'", () => {
  it.each([
    [
      'throws',
      () => {
        throw new Error('predicate bug');
      },
      /predicate bug/,
    ],
    ['returns NaN', () => Number.NaN, /`isFailure` returned NaN; expected true, false or 'throttled'/],
    ['returns undefined', () => undefined, /`isFailure` returned undefined/],
    ['returns a string', () => 'yes', /`isFailure` returned "yes"/],
    ['returns a promise of a string', () => Promise.resolve('yes'), /`isFailure` returned "yes"/],
    ['returns a rejected promise', () => Promise.reject(new Error('async')), /async/],
  ])('an isFailure that %s fails the call it judged, and frees the probe slot', async (_, bad, message) => {
    const clock = virtualClock();
    // Half-open from a snapshot: the next call is a probe, and it fails.
    const half = circuitBreaker({
      clock,
      isFailure: ((o: Result) => (o.ok ? false : bad())) as never,
      restore: { state: 'half-open', openings: 1, openRemainingMs: 0, consecutiveFailures: 0 },
    });
    const failing = pipeline([retrying({ clock, backoff: once }), half]).execute(() => {
      throw new Error('down');
    });
    await expect(failing).rejects.toThrow(message);
    expect(half.metrics.probesInFlight).toBe(0);
    expect(half.state).toBe('half-open');
    await expect(pipeline([half]).execute(() => 'ok')).resolves.toBe('ok');
    expect(half.state).toBe('closed');
  });
});
