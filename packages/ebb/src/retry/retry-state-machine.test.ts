import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import type { Clock } from '../core/clock.js';
import { virtualClock } from '../core/virtual-clock.js';
import { RetryError } from './errors.js';
import { guard } from './guard.js';
import type { RateController } from './hook-points.js';
import { pipeline } from './pipeline.js';
import { retry } from './retry.js';
import { retrying } from './retrying.js';

/** A clock at `t` (settable) whose sleeps end 50 ms late, as a host timer on a busy machine does. */
function lateWakingClock(start: number): { t: number; readonly clock: Clock } {
  const c = { t: start } as { t: number; clock: Clock };
  c.clock = {
    now: () => c.t,
    sleep: (ms) =>
      Promise.resolve().then(() => {
        c.t += ms + 50;
      }),
  };
  return c;
}

// The state machine's transitions at their edges, each pinned by behaviour; all on virtual time
// or a hand-driven clock.

/** A guard that grants `ticket 1`, `ticket 2`, … and keeps the tickets handed back. */
function ticketingRate(): { rate: RateController; released: unknown[]; acquired(): number } {
  const released: unknown[] = [];
  let n = 0;
  const rate: RateController = {
    acquire: () => `ticket ${++n}`,
    record: () => {},
    release: (ticket) => {
      released.push(ticket);
    },
  };
  return { rate, released, acquired: () => n };
}

describe('retry: what each step reads, calls and hands back', () => {
  it('a thenable that is a function is awaited: its rejection is retried (success path and executor)', async () => {
    // isThenable accepts functions with a callable `then` (Promises/A+ 2.3.3: "object or function").
    const thenableFn = (fail: boolean, value: string) =>
      Object.assign(() => {}, {
        // biome-ignore lint/suspicious/noThenProperty: the thenable under test
        then(resolve: (v: string) => void, reject: (e: unknown) => void) {
          if (fail) reject(new Error(`attempt failed: ${value}`));
          else resolve(value);
        },
      });
    for (const options of [{}, { signal: new AbortController().signal }]) {
      const clock = virtualClock();
      const calls: number[] = [];
      const done = retry(
        ({ attempt }) => {
          calls.push(attempt);
          return thenableFn(attempt === 1, `v${attempt}`) as unknown as PromiseLike<string>;
        },
        { clock, backoff: constant({ delayMs: 7, maxAttempts: 3, jitter: noJitter }), ...options },
      );
      await clock.runAll();
      await expect(done).resolves.toBe('v2');
      expect(calls).toEqual([1, 2]);
      expect(clock.now()).toBe(7);
    }
  });

  it('an already-aborted signal rejects with its reason before the clock is read', async () => {
    let reads = 0;
    const clock: Clock = {
      now: () => {
        reads++;
        throw new Error('clock read');
      },
      sleep: () => Promise.resolve(),
    };
    const signal = AbortSignal.abort('stop');
    let calls = 0;
    await expect(
      retry(
        () => {
          calls++;
        },
        { clock, signal },
      ),
    ).rejects.toBe('stop');
    expect(reads).toBe(0);
    expect(calls).toBe(0);
  });

  it('without onSuccess, the clock is not read after a success', async () => {
    // A clock that returns NaN once the operation has succeeded: reading it then would reject
    // the operation with the clock's RangeError instead of resolving with the value.
    let succeeded = false;
    const reads: number[] = [];
    const inner = virtualClock(50);
    const clock: Clock = {
      now: () => {
        const t = succeeded ? Number.NaN : inner.now();
        reads.push(t);
        return t;
      },
      sleep: (ms, signal) => inner.sleep(ms, signal),
    };
    const done = retry(
      ({ attempt }) => {
        if (attempt < 3) throw new Error(`fail ${attempt}`);
        succeeded = true;
        return 'ok';
      },
      { clock, backoff: constant({ delayMs: 5, maxAttempts: 3, jitter: noJitter }) },
    );
    await inner.runAll();
    await expect(done).resolves.toBe('ok');
    expect(reads.every((t) => !Number.isNaN(t))).toBe(true);
    expect(inner.now()).toBe(60);
  });

  it('a backoff wait whose wake-up comes late does not start an attempt past maxElapsedMs', async () => {
    // A clock whose backoff sleeps end 50 ms late (as a host timer on a busy machine does) would
    // start attempt 2 at elapsed 110 ms, past maxElapsedMs 100, if the deadline were not checked
    // when the wait ends.
    const late = lateWakingClock(0);
    const starts: number[] = [];
    const events: string[] = [];
    const error = (await retry(
      ({ attempt }) => {
        starts.push(late.t);
        throw new Error(`fail ${attempt}`);
      },
      {
        clock: late.clock,
        backoff: constant({ delayMs: 60, maxAttempts: 5, maxElapsedMs: 100, jitter: noJitter }),
        onFailedAttempt: ({ attempt, next }) => {
          events.push(`failed ${attempt} ${next}`);
        },
        onGiveUp: ({ attempts, reason }) => {
          events.push(`give up ${attempts} ${reason}`);
        },
      },
    ).catch((e: unknown) => e)) as RetryError;
    expect(starts).toEqual([0]);
    expect(error).toBeInstanceOf(RetryError);
    expect(error.reason).toBe('elapsed');
    expect(error.attempts).toBe(1);
    expect((error.cause as Error).message).toBe('fail 1');
    expect(error.message).toBe(
      'Gave up after 1 attempt in 110 ms: maxElapsedMs (100 ms) ran out while waiting (the wake-up came late) before attempt 2. Last error: Error: fail 1',
    );
    expect(events).toEqual(['failed 1 retry', 'give up 1 elapsed']);
  });

  it('a late wake-up ends the run with the last error as the cause', async () => {
    const c = lateWakingClock(1_000);
    const clock = c.clock;
    const starts: number[] = [];
    const error = (await retry(
      ({ attempt }) => {
        starts.push(c.t - 1_000);
        throw new Error(`fail ${attempt}`);
      },
      { clock, backoff: constant({ delayMs: 40, maxAttempts: 5, maxElapsedMs: 100, jitter: noJitter }) },
    ).catch((e: unknown) => e)) as RetryError;
    // Attempt 2 starts at 90 (within the deadline, although 50 ms late); its wait would end at
    // 130 > 100, so the executor gives up after it without sleeping.
    expect(starts).toEqual([0, 90]);
    expect(error.reason).toBe('elapsed');
    expect(error.attempts).toBe(2);
    expect((error.cause as Error).message).toBe('fail 2');
    // A wake-up past the deadline: no attempt 2, and the cause is attempt 1's error.
    c.t = 0;
    starts.length = 0;
    const late = (await retry(
      ({ attempt }) => {
        starts.push(c.t);
        throw new Error(`fail ${attempt}`);
      },
      { clock, backoff: constant({ delayMs: 60, maxAttempts: 5, maxElapsedMs: 100, jitter: noJitter }) },
    ).catch((e: unknown) => e)) as RetryError;
    expect(starts).toEqual([0]);
    expect(late.reason).toBe('elapsed');
    expect((late.cause as Error).message).toBe('fail 1');
    expect(late.message).toContain('ran out while waiting (the wake-up came late) before attempt 2');
  });

  it("an abort during a backoff wait hands no guard's ticket back: only a running attempt has one", async () => {
    const clock = virtualClock();
    const controller = new AbortController();
    const released: unknown[] = [];
    const recorded: string[] = [];
    let n = 0;
    const rate = {
      acquire: () => `ticket ${++n}`,
      record: (outcome: string, ticket: unknown) => {
        recorded.push(`${outcome} ${String(ticket)}`);
      },
      release: (ticket: unknown) => {
        released.push(ticket);
      },
    };
    const done = pipeline([
      retrying({ clock, backoff: constant({ delayMs: 100, maxAttempts: 3, jitter: noJitter }) }),
      guard(rate),
    ])
      .execute(
        () => {
          throw new Error('fail');
        },
        { signal: controller.signal },
      )
      .catch((e: unknown) => e);
    await clock.advance(10);
    controller.abort('stop');
    expect(await done).toBe('stop');
    expect(recorded).toEqual(['failure ticket 1']);
    expect(released).toEqual([]);
  });

  it('an abort while an async onFailedAttempt runs calls no later hook', async () => {
    const clock = virtualClock();
    const hooks: string[] = [];
    let finish: () => void = () => {};
    for (const maxAttempts of [3, 1]) {
      hooks.length = 0;
      const abort = new AbortController();
      const done = retry(
        () => {
          throw new Error('fail');
        },
        {
          clock,
          backoff: constant({ delayMs: 100, maxAttempts, jitter: noJitter }),
          signal: abort.signal,
          isFailure: () => true,
          onFailedAttempt: ({ next }) => {
            hooks.push(`failed ${next}`);
            return new Promise<void>((resolve) => {
              finish = resolve;
            });
          },
          onRetry: () => {
            hooks.push('retry');
          },
          onGiveUp: () => {
            hooks.push('give up');
          },
        },
      ).catch((e: unknown) => e);
      await clock.advance(0);
      abort.abort('stop');
      finish();
      expect(await done).toBe('stop');
      await clock.runAll();
      expect(hooks).toEqual([maxAttempts > 1 ? 'failed retry' : 'failed give-up']);
    }
  });

  it('a bad clock reading as an attempt is about to start fails the run before a guard inside is asked', async () => {
    const inner = virtualClock();
    // Good readings until the backoff wait is over, then NaN: the read before attempt 2 fails.
    const clock: Clock = {
      now: () => (inner.now() >= 10 ? Number.NaN : inner.now()),
      sleep: (ms, signal) => inner.sleep(ms, signal),
    };
    const { rate, released, acquired } = ticketingRate();
    let calls = 0;
    const done = pipeline([
      retrying({ clock, backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter }) }),
      guard(rate),
    ])
      .execute(() => {
        calls++;
        throw new Error('fail');
      })
      .catch((e: unknown) => e);
    await inner.runAll();
    const error = await done;
    expect(error).toBeInstanceOf(RangeError);
    expect(String((error as Error).message)).toContain('NaN');
    expect(calls).toBe(1);
    expect(acquired()).toBe(1);
    expect(released).toEqual([]);
  });
});

describe('retry: the deadline, aborts without events, bad readings, and policies that stop or hint themselves', () => {
  /** A clock that moves 1 ms at every reading (as a real one moves between two reads); its sleeps never end. */
  function tickingClock(): { readonly clock: Clock; readonly sleeps: number[] } {
    let t = 0;
    const sleeps: number[] = [];
    return {
      sleeps,
      clock: {
        now: () => t++,
        sleep: (ms) => {
          sleeps.push(ms);
          return new Promise<void>(() => {});
        },
      },
    };
  }

  it('attempt 1 is always made: time that passed before it without a wait does not refuse it, and no sleep is negative', async () => {
    for (const maxElapsedMs of [0, 1]) {
      const { clock, sleeps } = tickingClock();
      let calls = 0;
      const value = await retry(
        ({ attempt, elapsedMs }) => {
          calls++;
          return { attempt, elapsedMs };
        },
        { clock, backoff: constant({ delayMs: 1, maxAttempts: 3, maxElapsedMs, jitter: noJitter }) },
      );
      expect(calls).toBe(1);
      // Read at the call (0), then as attempt 1 starts (1): already at or past the budget.
      expect(value).toEqual({ attempt: 1, elapsedMs: 1 });
      // No timer runs for the attempt: the deadline bounds waits, not a running attempt.
      expect(sleeps).toEqual([]);
    }
  });

  it("a guard whose release() throws after an abort: the call still rejects with the abort's reason, and no hook follows", async () => {
    const clock = virtualClock();
    const thrown = new Error('release failed');
    const hooks: string[] = [];
    const controller = new AbortController();
    const rate: RateController = {
      acquire: () => 'ticket',
      record: () => {},
      release: () => {
        throw thrown;
      },
    };
    const done = pipeline([
      retrying({
        clock,
        backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter }),
        onFailedAttempt: ({ next }) => {
          hooks.push(`failed ${next}`);
        },
        onGiveUp: () => {
          hooks.push('give-up');
        },
      }),
      guard(rate),
    ])
      .execute(() => clock.sleep(100).then(() => 'late'), { signal: controller.signal })
      .catch((e: unknown) => e);
    await clock.advance(5);
    controller.abort('stop');
    expect(await done).toBe('stop');
    await clock.runAll();
    expect(hooks).toEqual([]);
  });

  /** A signal that reports `aborted` without firing `abort`, as a hand-made or polyfilled one may. */
  function silentSignal(): AbortSignal & { abortSilently(reason: unknown): void } {
    const target = new EventTarget() as EventTarget & {
      aborted: boolean;
      reason: unknown;
      abortSilently(r: unknown): void;
    };
    target.aborted = false;
    target.reason = undefined;
    target.abortSilently = (reason) => {
      target.aborted = true;
      target.reason = reason;
    };
    return target as unknown as AbortSignal & { abortSilently(reason: unknown): void };
  }

  it('a signal that turns aborted without an abort event still stops the run before the next wait', async () => {
    const inner = virtualClock();
    const sleeps: number[] = [];
    const clock: Clock = {
      now: () => inner.now(),
      sleep: (ms, signal) => {
        sleeps.push(ms);
        return inner.sleep(ms, signal);
      },
    };
    const signal = silentSignal();
    let calls = 0;
    const done = retry(
      () => {
        calls++;
        throw new Error('fail');
      },
      {
        clock,
        signal,
        backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter }),
        onRetry: () => signal.abortSilently('stop'),
      },
    ).catch((e: unknown) => e);
    await inner.runAll();
    expect(await done).toBe('stop');
    expect(calls).toBe(1);
    expect(sleeps).toEqual([]); // no wait began after the abort
    expect(inner.now()).toBe(0);
  });

  it('… and before the next attempt: no guard inside is asked for it', async () => {
    const clock = virtualClock();
    const signal = silentSignal();
    const { rate, released, acquired } = ticketingRate();
    let calls = 0;
    const done = pipeline([
      retrying({ clock, backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter }) }),
      guard(rate),
    ])
      .execute(
        () => {
          calls++;
          throw new Error('fail');
        },
        { signal },
      )
      .catch((e: unknown) => e);
    // During the 10 ms wait: no event, so the wait runs its course.
    void clock.sleep(5).then(() => signal.abortSilently('stop'));
    await clock.runAll();
    expect(await done).toBe('stop');
    expect(calls).toBe(1);
    expect(acquired()).toBe(1);
    expect(released).toEqual([]);
  });

  it('a clock whose first reading is bad rejects the call before the operation runs, also without a hook or signal', async () => {
    let calls = 0;
    const clock: Clock = { now: () => Number.NaN, sleep: () => Promise.resolve() };
    const error = await retry(
      () => {
        calls++;
        return 'ok';
      },
      { clock },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RangeError);
    expect((error as Error).message).toBe('clock.now() returned NaN; expected a finite number of milliseconds.');
    expect(calls).toBe(0);
  });

  it('a policy that stops before its maxAttempts says so, rather than claiming maxAttempts was reached', async () => {
    const clock = virtualClock();
    // A custom policy: attempts not limited by a count, its run stops after attempt 2.
    let n = 0;
    const backoff = { maxElapsedMs: Number.POSITIVE_INFINITY, start: () => ({ next: () => (++n < 2 ? 5 : -1) }) };
    const done = retry(
      () => {
        throw new Error('fail');
      },
      { clock, backoff },
    ).catch((e: unknown) => e);
    await clock.runAll();
    const error = (await done) as RetryError;
    expect(error).toMatchObject({ reason: 'attempts', attempts: 2 });
    expect(error.message).toContain(': the backoff policy stopped after attempt 2.');
    expect(error.message).not.toContain('maxAttempts');
  });

  it('a run that applies server hints itself (appliesHints) gets its own wait, not the hint again', async () => {
    const clock = virtualClock();
    const waits: number[] = [];
    const backoff = {
      maxElapsedMs: Number.POSITIVE_INFINITY,
      start: () => ({ appliesHints: true, next: () => (waits.length < 2 ? 10 : -1) }),
    };
    const hinted = Object.assign(new Error('slow down'), { retryAfterMs: 120_000 });
    const done = retry(
      () => {
        throw hinted;
      },
      {
        clock,
        backoff,
        onRetry: ({ delayMs }) => {
          waits.push(delayMs);
        },
      },
    ).catch((e: unknown) => e);
    await clock.runAll();
    // A hint of 2 min is above maxRetryAfterMs (60 s): applied by the executor, it would end the run at once.
    expect(waits).toEqual([10, 10]);
    expect(await done).toMatchObject({ reason: 'attempts', attempts: 3 });
    expect(clock.now()).toBe(20);
  });
});
