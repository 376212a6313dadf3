// A clock of the user's that is set back — a wall clock stepped by NTP, `{ now: Date.now }` —
// as the mechanisms that take a `clock` option read it: time goes on from where it was
// (core/clock.ts, `clockOption()` and `rebase()`) — the step reads as no time passing — so it
// holds nothing for its length.
import { describe, expect, it } from 'vitest';
import type { Clock } from './core/clock.js';
import { virtualClock } from './core/virtual-clock.js';
import { adaptiveRate } from './rate/adaptive-rate.js';
import { circuitBreaker } from './resilience/circuit-breaker.js';
import { pipeline } from './retry/pipeline.js';

const HOUR_MS = 3_600_000;

/** A virtual clock whose readings can be set back by `back` ms. */
function steppable() {
  const v = virtualClock();
  const step = { back: 0 };
  const clock: Clock = { now: () => v.now() - step.back, sleep: (ms, signal) => v.sleep(ms, signal) };
  return { v, step, clock };
}

describe('a clock set back by an hour', () => {
  it('does not hold an open circuit breaker open for the hour: it lets a call through once its open time has passed after the step', async () => {
    const { v, step, clock } = steppable();
    const breaker = circuitBreaker({ clock });
    const calls = pipeline([breaker]);
    for (let i = 0; i < 30; i++) await calls.execute(() => Promise.reject(new Error('down'))).catch(() => {});
    expect(breaker.state).toBe('open');
    step.back = HOUR_MS;
    // The step itself reads as no time passing: the breaker is still open just after it…
    await expect(calls.execute(() => 'served')).rejects.toMatchObject({ code: 'EBB_CIRCUIT_OPEN' });
    // …and lets a call through once its open time has passed on the clock's new timeline.
    await v.advance(60_000);
    await expect(calls.execute(() => 'served')).resolves.toBe('served');
    expect(breaker.state).toBe('closed');
  });

  it('does not keep a paced request waiting for the hour: it goes when its turn comes', async () => {
    const { v, step, clock } = steppable();
    const rate = adaptiveRate({ clock, initialRatePerSecond: 10 });
    const calls = pipeline([rate]);
    await expect(calls.execute(() => 'first')).resolves.toBe('first');
    step.back = HOUR_MS;
    let second: unknown;
    void calls
      .execute(() => 'second')
      .then((value) => {
        second = value;
      });
    await v.advance(1_000);
    expect(second).toBe('second');
    expect(v.pending).toBe(0);
  });
});
