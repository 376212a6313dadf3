import { describe, expect, it } from 'vitest';
import { seeded } from '../core/random.js';
import { virtualClock } from '../core/virtual-clock.js';
import { circuitBreaker } from './circuit-breaker.js';

describe('circuitBreaker: metrics are true at the moment they are read', () => {
  it('a time window forgets calls older than windowMs when read, though no call came since', async () => {
    const clock = virtualClock();
    const breaker = circuitBreaker({ clock, failureRate: 0.5, minCalls: 10, windowMs: 1_000 });
    for (let i = 0; i < 4; i++) breaker.record('failure', breaker.acquire(), new Error('down'));
    expect(breaker.metrics).toEqual({ calls: 4, failures: 4, consecutiveFailures: 4, probesInFlight: 0 });
    await clock.advance(600);
    breaker.record('success', breaker.acquire());
    await clock.advance(700); // 1.3 s after the failures: only the success is in the window
    expect(breaker.metrics).toMatchObject({ calls: 1, failures: 0 });
    await clock.advance(1_000); // an idle window: nothing in it
    expect(breaker.metrics).toMatchObject({ calls: 0, failures: 0 });
  });

  it('reading the metrics changes nothing a later call would see: the window rolls the same either way', async () => {
    const run = async (read: boolean) => {
      const clock = virtualClock();
      const breaker = circuitBreaker({ clock, random: seeded(7), failureRate: 0.5, minCalls: 4, windowMs: 1_000 });
      const states: string[] = [];
      for (let i = 0; i < 200; i++) {
        const failed = (i * 7) % 3 === 0;
        try {
          breaker.record(failed ? 'failure' : 'success', breaker.acquire(), new Error('x'));
        } catch {
          states.push('refused');
        }
        if (read) void breaker.metrics;
        await clock.advance(((i * 37) % 5) * 70);
        states.push(breaker.state);
      }
      return states;
    };
    const states = await run(true);
    expect(new Set(states)).toEqual(new Set(['closed', 'open', 'half-open', 'refused']));
    expect(states).toEqual(await run(false));
  });
});
