import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { refQueue } from '../core/timer-queue.js';
import { virtualClock } from '../core/virtual-clock.js';
import { RetryError } from './errors.js';
import { guard } from './guard.js';
import { pipeline } from './pipeline.js';
import { retry } from './retry.js';
import { retrying } from './retrying.js';
import { trackHostTimers } from './test-helpers.js';
import { timeout } from './timeout.js';

async function outcome<T>(p: Promise<T>, clock: { runAll(): Promise<void> }) {
  const settled = p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  await clock.runAll();
  return settled;
}

const START = 1_000_000_007; // not 0: elapsed arithmetic (now() - start) must not depend on it

describe('rejections from user code are handled (an unhandled one would leave retry() pending)', () => {
  const boom = new Error('user code rejected');
  it('an async isFailure that rejects', async () => {
    const clock = virtualClock(START);
    const result = await outcome(
      retry(() => Promise.reject(new Error('x')), { clock, isFailure: () => Promise.reject(boom) }),
      clock,
    );
    expect(result).toEqual({ error: boom });
  });

  it('an async onRetry that rejects', async () => {
    const clock = virtualClock(START);
    let calls = 0;
    const result = await outcome(
      retry(
        () => {
          calls++;
          return Promise.reject(new Error('x'));
        },
        { clock, onRetry: () => Promise.reject(boom) },
      ),
      clock,
    );
    expect(result).toEqual({ error: boom });
    expect(calls).toBe(1);
  });

  it("a guard's acquire() that rejects, or throws, inside retrying(): a failed attempt, backed off, never calling the operation", async () => {
    for (const acquire of [
      () => Promise.reject(boom),
      () => {
        throw boom;
      },
    ]) {
      const clock = virtualClock(START);
      let calls = 0;
      const call = pipeline([
        retrying({ clock, backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter }) }),
        guard({ acquire, record: () => {} }),
      ]);
      const result = (await outcome(
        call.execute(() => {
          calls++;
          return 1;
        }),
        clock,
      )) as { error: RetryError };
      expect(result.error).toBeInstanceOf(RetryError);
      expect(result.error).toMatchObject({ reason: 'attempts', attempts: 3, cause: boom, elapsedMs: 20 });
      expect(calls).toBe(0);
    }
  });
});

describe('deadlines and hints at their exact boundaries, on a clock that does not start at 0', () => {
  it('elapsedMs is measured from the start, not from 0', async () => {
    const clock = virtualClock(START);
    const seen: number[] = [];
    const { error } = (await outcome(
      retry(
        (c) => {
          seen.push(c.elapsedMs);
          return Promise.reject(new Error('x'));
        },
        { clock, backoff: constant({ delayMs: 25, maxAttempts: 3, jitter: noJitter }) },
      ),
      clock,
    )) as { error: RetryError };
    expect(seen).toEqual([0, 25, 50]);
    expect(error).toMatchObject({ elapsedMs: 50, attempts: 3 });
  });

  it('a wait ending exactly on the deadline is taken; one ending 1 ms past it is not', async () => {
    for (const [maxElapsedMs, attempts] of [
      [100, 3],
      [99, 2],
    ] as const) {
      const clock = virtualClock(START);
      const seen: number[] = [];
      const { error } = (await outcome(
        retry(
          (c) => {
            seen.push(c.elapsedMs);
            throw new Error('x');
          },
          { clock, backoff: constant({ delayMs: 50, maxElapsedMs, jitter: noJitter }) },
        ),
        clock,
      )) as { error: RetryError };
      expect(error).toMatchObject({ reason: 'elapsed', attempts });
      expect(seen).toEqual([0, 50, 100].slice(0, attempts));
      expect(error.message).toMatch(/the next wait \(50 ms\) would end past maxElapsedMs/);
    }
  });

  it('Retry-After: 60 on the default maxRetryAfterMs (60 000) is waited; 60 001 ms gives up', async () => {
    const hinted = (ms: number) => Object.assign(new Error('503'), { retryAfterMs: ms });
    const clock = virtualClock(START);
    const ok = await outcome(
      retry((c) => (c.attempt === 1 ? Promise.reject(hinted(60_000)) : c.elapsedMs), { clock }),
      clock,
    );
    expect(ok).toEqual({ value: 60_000 });
    const clock2 = virtualClock(START);
    const { error } = (await outcome(
      retry(() => Promise.reject(hinted(60_001)), { clock: clock2 }),
      clock2,
    )) as {
      error: RetryError;
    };
    expect(error).toMatchObject({ reason: 'retry-after', attempts: 1, elapsedMs: 0 });
  });
});

describe('on the real clock: wait lengths and timer release', () => {
  it('waits at least the policy’s delay between attempts (system clock, shared timer queue)', async () => {
    const starts: number[] = [];
    const value = await retry(
      (c) => {
        starts.push(performance.now());
        if (c.attempt < 3) throw new Error('x');
        return c.attempt;
      },
      { backoff: constant({ delayMs: 40, maxAttempts: 3, jitter: noJitter }) },
    );
    expect(value).toBe(3);
    for (const gap of [(starts[1] as number) - (starts[0] as number), (starts[2] as number) - (starts[1] as number)]) {
      // Never early; late by at most what a busy 2-core machine may add.
      expect(gap).toBeGreaterThanOrEqual(40);
      expect(gap).toBeLessThan(2_000);
    }
  });

  it('a retry settled during its wait (abort) leaves the queue at once, and its host timer by the end of the turn', async () => {
    const timers = trackHostTimers();
    try {
      const controller = new AbortController();
      const p = retry(() => Promise.reject(new Error('x')), {
        signal: controller.signal,
        backoff: constant({ delayMs: 600_000, maxAttempts: 100, jitter: noJitter }),
      }).catch((e: unknown) => e);
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(refQueue.size).toBe(1);
      expect(timers.live).toBe(1);
      controller.abort(new Error('stop'));
      expect(await p).toMatchObject({ message: 'stop' });
      expect(refQueue.size).toBe(0);
      await new Promise((resolve) => setImmediate(resolve));
      expect(timers.live).toBe(0);
    } finally {
      timers.restore();
    }
  });

  it('a settled attempt timeout leaves no timer behind (the queue at once, its host timer by the end of the turn)', async () => {
    const timers = trackHostTimers();
    try {
      expect(await pipeline([retrying(), timeout(600_000)]).execute(() => 'fast')).toBe('fast');
      expect(refQueue.size).toBe(0);
      await new Promise((resolve) => setImmediate(resolve));
      expect(timers.live).toBe(0);
    } finally {
      timers.restore();
    }
  });
});

describe('the executor at its corners: messages, hooks, timers and aborts', () => {
  it('the caller signal has no abort listener left once settled (events.getEventListeners)', async () => {
    const controller = new AbortController();
    const clock = virtualClock(START);
    await outcome(
      retry((c) => (c.attempt < 2 ? Promise.reject(new Error('x')) : 1), {
        clock,
        signal: controller.signal,
        backoff: constant({ delayMs: 5, maxAttempts: 3, jitter: noJitter }),
      }),
      clock,
    );
    expect(EventEmitter.getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('retry(null) names null; a non-Promise thenable that rejects is retried', async () => {
    await expect(retry(null as never)).rejects.toThrow('retry(): expected `operation` to be a function, got null.');
    const clock = virtualClock(START);
    let calls = 0;
    const thenable = (ok: boolean) =>
      Object.fromEntries([
        [
          'then',
          (resolve: (v: string) => void, reject: (e: unknown) => void) => (ok ? resolve('v') : reject(new Error('no'))),
        ],
      ]) as unknown as PromiseLike<string>;
    const result = await outcome(
      retry(
        () => {
          calls++;
          return thenable(calls > 1);
        },
        { clock },
      ),
      clock,
    );
    expect(result).toEqual({ value: 'v' });
    expect(calls).toBe(2);
  });

  it('a late success of a timed-out attempt is ignored: the next attempt decides', async () => {
    const clock = virtualClock(START);
    const call = pipeline([
      retrying({ clock, backoff: constant({ delayMs: 1_000, maxAttempts: 3, jitter: noJitter }) }),
      timeout(100, { clock }),
    ]);
    const result = await outcome(
      call.execute(async ({ attempt }) => {
        if (attempt === 1) {
          await clock.sleep(150); // the attempt timed out at 100
          return 'late';
        }
        return 'second';
      }),
      clock,
    );
    expect(result).toEqual({ value: 'second' });
  });

  it('budget.recordRequest or recordSuccess throwing rejects with that error', async () => {
    const boom = new Error('budget broke');
    for (const budget of [
      {
        recordRequest: () => {
          throw boom;
        },
        tryAcquireRetry: () => true,
        recordSuccess: () => {},
      },
      {
        tryAcquireRetry: () => true,
        recordSuccess: () => {
          throw boom;
        },
      },
    ]) {
      const clock = virtualClock(START);
      expect(
        await outcome(
          retry(() => 1, { clock, budget }),
          clock,
        ),
      ).toEqual({ error: boom });
    }
  });

  it('RetryError messages say what ran out: the hint, the budget, the deadline after an attempt', async () => {
    const clock = virtualClock(START);
    const hinted = await outcome(
      retry(() => Promise.reject(Object.assign(new Error('503'), { retryAfterMs: 90_000 })), { clock }),
      clock,
    );
    expect((hinted as { error: Error }).error.message).toBe(
      'Gave up after 1 attempt in 0 ms: the server asked to wait 90000 ms, more than maxRetryAfterMs (60000 ms). Last error: Error: 503',
    );
    const refused = await outcome(
      retry(() => Promise.reject(new Error('x')), {
        clock,
        budget: { tryAcquireRetry: () => false, recordSuccess: () => {} },
      }),
      clock,
    );
    expect((refused as { error: Error }).error.message).toMatch(
      /: the retry budget refused another retry\. Last error/,
    );
    const clock2 = virtualClock(START);
    const slow = await outcome(
      retry(({ signal }) => clock2.sleep(1_000, signal).then(() => Promise.reject(new Error('slow'))), {
        clock: clock2,
        backoff: constant({ delayMs: 1, maxElapsedMs: 70, jitter: noJitter }),
      }),
      clock2,
    );
    expect((slow as { error: Error }).error.message).toBe(
      'Gave up after 1 attempt in 1000 ms: the next wait (1 ms) would end past maxElapsedMs (70 ms). Last error: Error: slow',
    );
  });

  it('a clock reading that goes bad when the next attempt starts fails the operation', async () => {
    let reads = 0;
    const base = virtualClock(START);
    const clock = { now: () => (++reads === 3 ? Number.NaN : base.now()), sleep: base.sleep };
    const result = await outcome(
      retry((c) => (c.attempt === 1 ? Promise.reject(new Error('x')) : 'ok'), {
        clock,
        backoff: constant({ delayMs: 5, maxAttempts: 3, jitter: noJitter }),
      }),
      base,
    );
    expect((result as { error: Error }).error.message).toBe(
      'clock.now() returned NaN; expected a finite number of milliseconds.',
    );
  });

  it('a wait that ends late, past the deadline: no attempt starts after it; the run gives up (elapsed, onGiveUp only)', async () => {
    const base = virtualClock(START);
    // A clock whose sleeps end 30 ms late, as a busy host's timers may (a zero sleep is on time).
    const late = {
      now: base.now,
      sleep: (ms: number, signal?: AbortSignal) => base.sleep(ms > 0 ? ms + 30 : ms, signal),
    };
    const seen: number[] = [];
    const log: string[] = [];
    const boom = new Error('down');
    const result = await outcome(
      retry(
        async ({ elapsedMs }) => {
          seen.push(elapsedMs);
          await base.sleep(40);
          throw boom;
        },
        {
          clock: late,
          backoff: constant({ delayMs: 20, maxElapsedMs: 100, jitter: noJitter }),
          onFailedAttempt: (c) => void log.push(`failed ${c.attempt} ${c.next}`),
          onGiveUp: (c) => void log.push(`gave up ${c.reason} after ${c.attempts}`),
        },
      ),
      base,
    );
    // Attempt 1 fails at 40 and waits 20 (ending on time at 60 ≤ 100), but wakes at 90; attempt 2
    // fails at 130: a 20 ms wait would end past 100, so it gives up — no wait was planned past it.
    // Attempt 2 started at 90: before the deadline.
    expect(seen).toEqual([0, 90]);
    expect(result).toMatchObject({ error: { name: 'RetryError', reason: 'elapsed', attempts: 2, cause: boom } });
    expect(log).toEqual(['failed 1 retry', 'failed 2 give-up', 'gave up elapsed after 2']);
    // With a deadline of 80, the wake-up at 90 is past it: no attempt 2; only onGiveUp.
    const base2 = virtualClock(START);
    const late2 = { now: base2.now, sleep: (ms: number, signal?: AbortSignal) => base2.sleep(ms + 30, signal) };
    const log2: string[] = [];
    let calls = 0;
    const result2 = await outcome(
      retry(
        async () => {
          calls++;
          await base2.sleep(40);
          throw boom;
        },
        {
          clock: late2,
          backoff: constant({ delayMs: 20, maxElapsedMs: 80, jitter: noJitter }),
          onFailedAttempt: (c) => void log2.push(`failed ${c.attempt} ${c.next}`),
          onGiveUp: (c) => void log2.push(`gave up ${c.reason} after ${c.attempts}`),
        },
      ),
      base2,
    );
    expect(calls).toBe(1);
    expect(result2).toMatchObject({ error: { name: 'RetryError', reason: 'elapsed', attempts: 1, cause: boom } });
    expect((result2 as { error: Error }).error.message).toBe(
      'Gave up after 1 attempt in 90 ms: maxElapsedMs (80 ms) ran out while waiting (the wake-up came late) before attempt 2. Last error: Error: down',
    );
    expect(log2).toEqual(['failed 1 retry', 'gave up elapsed after 1']);
  });

  it('after an abort, a pending async isFailure that resolves later changes nothing', async () => {
    const controller = new AbortController();
    const clock = virtualClock(START);
    const log: string[] = [];
    let release: (v: boolean) => void = () => {};
    const p = retry(() => Promise.reject(new Error('x')), {
      clock,
      signal: controller.signal,
      isFailure: () =>
        new Promise<boolean>((resolve) => {
          release = resolve;
        }),
      onFailedAttempt: () => {
        log.push('onFailedAttempt');
      },
    });
    const settled = outcome(p, clock);
    await clock.advance(1);
    controller.abort(new Error('stop'));
    release(true);
    expect(await settled).toMatchObject({ error: { message: 'stop' } });
    expect(log).toEqual([]);
    expect(clock.pending).toBe(0);
  });

  it('on the system clock, an abort during an async onRetry leaves nothing in the timer queue', async () => {
    const controller = new AbortController();
    let release: () => void = () => {};
    const p = retry(() => Promise.reject(new Error('x')), {
      signal: controller.signal,
      backoff: constant({ delayMs: 60_000, maxAttempts: 3, jitter: noJitter }),
      onRetry: () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
    }).catch((e: unknown) => e);
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort(new Error('stop'));
    release();
    expect(await p).toMatchObject({ message: 'stop' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(refQueue.size).toBe(0);
  });

  it("a custom clock whose sleep ignores the signal: after an abort, no guard's acquire() follows", async () => {
    const base = virtualClock(START);
    const deaf = { now: base.now, sleep: (ms: number) => base.sleep(ms) };
    let acquires = 0;
    const controller = new AbortController();
    const call = pipeline([
      retrying({ clock: deaf, backoff: constant({ delayMs: 100, maxAttempts: 3, jitter: noJitter }) }),
      guard({
        acquire: () => {
          acquires++;
        },
        record: () => {},
      }),
    ]);
    const p = call.execute(() => Promise.reject(new Error('x')), { signal: controller.signal });
    const settled = p.then(
      () => 'resolved',
      (e: unknown) => e,
    );
    await base.advance(10);
    controller.abort(new Error('stop'));
    await base.runAll(); // the deaf sleep still ends at 100 ms
    expect(await settled).toMatchObject({ message: 'stop' });
    expect(acquires).toBe(1);
  });
});
