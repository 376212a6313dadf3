// A clock of the user's that is set back — a wall clock stepped by NTP, `{ now: Date.now }` —
// as every part of ebb that takes a `clock` reads it: time goes on from where it was
// (core/timeline.ts, `rebase()`; the mechanisms through core/clock.ts's `clockOption()`, the
// executor on its own elapsed time) — the step reads as no time passing — so it holds nothing
// for its length and fails no call.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { constant } from './backoff/constant.js';
import { noJitter } from './backoff/jitter-none.js';
import type { Clock } from './core/clock.js';
import { virtualClock } from './core/virtual-clock.js';
import { adaptiveRate } from './rate/adaptive-rate.js';
import { circuitBreaker } from './resilience/circuit-breaker.js';
import { pipeline } from './retry/pipeline.js';
import { poll } from './retry/poll.js';
import { retry } from './retry/retry.js';
import { retrySync } from './retry/retry-sync.js';
import { retrying } from './retry/retrying.js';

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

describe('the executor, its clock set back by an hour', () => {
  // Attempts fail until the fifth, 1 s apart (no jitter), within a 10 s time budget. By the
  // clock's own readings, the time spent after the step would be about −3,598 s.
  const policy = constant({ delayMs: 1_000, maxAttempts: 5, maxElapsedMs: 10_000, jitter: noJitter });

  function subject(stepAtAttempt = 0) {
    const { v, step, clock } = steppable();
    const seen: number[] = [];
    const operation = ({ attempt, elapsedMs }: { attempt: number; elapsedMs: number }) => {
      seen.push(elapsedMs);
      if (attempt === stepAtAttempt) step.back = HOUR_MS;
      if (attempt < 5) throw new Error(`attempt ${attempt} failed`);
      return attempt;
    };
    return { v, step, clock, seen, operation };
  }

  it('retry(): a step while an attempt runs costs no time: the elapsed times of a clock never set back, and no RangeError', async () => {
    const { v, clock, seen, operation } = subject(2);
    const retried: number[] = [];
    const result = retry(operation, { backoff: policy, clock, onRetry: (c) => void retried.push(c.elapsedMs) });
    await v.advance(4_000);
    await expect(result).resolves.toBe(5);
    expect(seen).toEqual([0, 1_000, 2_000, 3_000, 4_000]);
    expect(retried).toEqual([0, 1_000, 2_000, 3_000]);
    expect(v.pending).toBe(0);
  });

  it('retry(): a step during a wait makes that wait read as no time passing, and the run goes on at once', async () => {
    const { v, step, clock, seen, operation } = subject();
    const result = retry(operation, { backoff: policy, clock });
    // The wait after attempt 2 runs from 1 s to 2 s on the virtual clock; the step comes half-way.
    await v.advance(1_500);
    step.back = HOUR_MS;
    await v.advance(2_500);
    await expect(result).resolves.toBe(5);
    expect(seen).toEqual([0, 1_000, 1_000, 2_000, 3_000]);
    expect(v.pending).toBe(0);
  });

  it('retry(): the time budget counts the re-based time, so it still ends the run', async () => {
    const { v, step, clock } = steppable();
    const every = constant({ delayMs: 1_000, maxAttempts: 100, maxElapsedMs: 3_000, jitter: noJitter });
    const seen: number[] = [];
    const result = retry(
      ({ elapsedMs }) => {
        seen.push(elapsedMs);
        throw new Error('down');
      },
      { backoff: every, clock },
    ).catch((e: unknown) => e);
    await v.advance(1_500);
    step.back = HOUR_MS;
    await v.advance(10_000);
    // Attempt 5 starts at 3 s of re-based time (4 s of virtual time); a sixth would start past 3 s.
    expect(await result).toMatchObject({ reason: 'elapsed', attempts: 5, elapsedMs: 3_000 });
    expect(seen).toEqual([0, 1_000, 1_000, 2_000, 3_000]);
    expect(v.pending).toBe(0);
  });

  it('retrying() in a pipeline and poll() read it the same way', async () => {
    const a = subject();
    const piped = pipeline([retrying({ backoff: policy, clock: a.clock })]).execute(a.operation);
    await a.v.advance(1_500);
    a.step.back = HOUR_MS;
    await a.v.advance(2_500);
    await expect(piped).resolves.toBe(5);
    expect(a.seen).toEqual([0, 1_000, 1_000, 2_000, 3_000]);

    const b = subject();
    const polled = poll(
      (context) => {
        try {
          return { done: true, value: b.operation(context) };
        } catch {
          return { done: false };
        }
      },
      { backoff: policy, clock: b.clock },
    );
    await b.v.advance(1_500);
    b.step.back = HOUR_MS;
    await b.v.advance(2_500);
    await expect(polled).resolves.toBe(5);
    expect(b.seen).toEqual([0, 1_000, 1_000, 2_000, 3_000]);
  });

  it('retrySync(): a step during a wait reads as no time passing, and no RangeError', () => {
    let now = 10_000;
    let sleeps = 0;
    const seen: number[] = [];
    const result = retrySync(
      ({ attempt, elapsedMs }) => {
        seen.push(elapsedMs);
        if (attempt < 5) throw new Error(`attempt ${attempt} failed`);
        return attempt;
      },
      {
        backoff: policy,
        clock: {
          now: () => now,
          // The second wait is where the clock is set back.
          sleepSync: (ms) => {
            now += ms - (++sleeps === 2 ? HOUR_MS : 0);
          },
        },
      },
    );
    expect(result).toBe(5);
    expect(seen).toEqual([0, 1_000, 1_000, 2_000, 3_000]);
  });
});

describe('the executor, any clock readings (property)', () => {
  // Finite readings in any order — steps back and forward, −0, ±1e12 — as a wall clock may give.
  const readings = fc.array(fc.double({ min: -1e12, max: 1e12, noNaN: true }), { minLength: 1, maxLength: 30 });
  const policy = constant({ delayMs: 0, maxAttempts: 6, jitter: noJitter });

  /** The clock gives `values` in turn (the last one after that); `given` collects what it gave. */
  function scripted(values: readonly number[]) {
    const given: number[] = [];
    let i = 0;
    const now = () => {
      const t = values[Math.min(i++, values.length - 1)] as number;
      given.push(t);
      return t;
    };
    return { given, now };
  }

  /** What the elapsed time may be after `given`: the sum of the steps forward (a step back reads as none). */
  const forward = (given: readonly number[]) =>
    given.reduce((sum, t, k) => (k === 0 ? 0 : sum + Math.max(0, t - (given[k - 1] as number))), 0);

  function check(seen: readonly number[], given: readonly number[]) {
    expect(seen[0]).toBe(0);
    for (let k = 1; k < seen.length; k++) expect(seen[k]).toBeGreaterThanOrEqual(seen[k - 1] as number);
    // Sums of doubles: the re-based difference and the sum of steps round differently.
    const bound = forward(given);
    expect(seen.at(-1) as number).toBeLessThanOrEqual(bound + Math.abs(bound) * 1e-9 + 1e-3);
  }

  it('retry(): every attempt runs, elapsedMs starts at 0, never decreases, and is at most the clock’s steps forward', async () => {
    await fc.assert(
      fc.asyncProperty(readings, async (values) => {
        const { given, now } = scripted(values);
        const seen: number[] = [];
        const error = await retry(
          ({ elapsedMs }) => {
            seen.push(elapsedMs);
            throw new Error('down');
          },
          { backoff: policy, clock: { now, sleep: () => Promise.resolve() }, onRetry: () => {} },
        ).catch((e: unknown) => e);
        expect(error).toMatchObject({ name: 'RetryError', reason: 'attempts', attempts: 6 });
        expect(seen).toHaveLength(6);
        check(seen, given);
      }),
    );
  });

  it('retrySync(): the same', () => {
    fc.assert(
      fc.property(readings, (values) => {
        const { given, now } = scripted(values);
        const seen: number[] = [];
        const error = (() => {
          try {
            return retrySync(
              ({ elapsedMs }) => {
                seen.push(elapsedMs);
                throw new Error('down');
              },
              { backoff: policy, clock: { now, sleepSync: () => {} } },
            );
          } catch (e) {
            return e;
          }
        })();
        expect(error).toMatchObject({ name: 'RetryError', reason: 'attempts', attempts: 6 });
        expect(seen).toHaveLength(6);
        check(seen, given);
      }),
    );
  });
});
