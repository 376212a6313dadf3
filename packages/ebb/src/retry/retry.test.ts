import { describe, expect, it, vi } from 'vitest';
import { constant } from '../backoff/constant.js';
import { exponential } from '../backoff/exponential.js';
import { noJitter } from '../backoff/jitter-none.js';
import { presets } from '../backoff/presets.js';
import { sample } from '../backoff/sample.js';
import { withOptions } from '../backoff/with-options.js';
import type { Clock } from '../core/clock.js';
import { seeded } from '../core/random.js';
import { type VirtualClock, virtualClock } from '../core/virtual-clock.js';
import { RetryError, stop } from './errors.js';
import { guard } from './guard.js';
import type { AttemptContext, Outcome, RateController, RetryContext, RetryOptions } from './options.js';
import { pipeline } from './pipeline.js';
import { retry } from './retry.js';
import { retrying } from './retrying.js';
import { timeout } from './timeout.js';

/**
 * A virtual clock that also records the duration of every sleep that ran to its end (a
 * timeout's timers are cancelled when the attempt ends first, so they drop out).
 */
function recordingClock(): VirtualClock & { sleeps: number[] } {
  const clock = virtualClock();
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => clock.now(),
    sleep: (ms: number, signal?: AbortSignal) =>
      clock.sleep(ms, signal).then(() => {
        sleeps.push(ms);
      }),
    advance: (ms: number) => clock.advance(ms),
    runAll: (n?: number) => clock.runAll(n),
    get pending() {
      return clock.pending;
    },
  };
}

/** Runs `retry` on a virtual clock until it settles; returns the outcome and the clock. */
async function settle<T>(
  operation: (c: AttemptContext) => T | PromiseLike<T>,
  options: RetryOptions = {},
  clock = recordingClock(),
): Promise<{ value?: T; error?: unknown; clock: ReturnType<typeof recordingClock> }> {
  const p = retry(operation, { clock, ...options }).then(
    (value) => ({ value: value as T }),
    (error: unknown) => ({ error }),
  );
  await clock.runAll();
  return { ...(await p), clock };
}

const fail = (message = 'boom') => {
  throw new Error(message);
};

describe('retry: outcomes', () => {
  it('resolves with the value, calling once, with attempt 1 and elapsed 0', async () => {
    const op = vi.fn((c: AttemptContext) => ({ attempt: c.attempt, elapsed: c.elapsedMs }));
    expect(await retry(op)).toEqual({ attempt: 1, elapsed: 0 });
    expect(op).toHaveBeenCalledTimes(1);
    expect(await retry(() => Promise.resolve('p'))).toBe('p');
    // A thenable that is not a Promise (built so as not to trip the linter's `then` rule).
    const thenable = Object.fromEntries([
      ['then', (f: (v: string) => void) => f('thenable')],
    ]) as unknown as PromiseLike<string>;
    expect(await retry(() => thenable)).toBe('thenable');
  });

  it('maxAttempts: 3 means exactly 3 calls, then RetryError with the last error as cause', async () => {
    const errors = [new Error('1'), new Error('2'), new Error('3')];
    const op = vi.fn((c: AttemptContext) => {
      throw errors[c.attempt - 1];
    });
    const { error, clock } = await settle(op, {
      backoff: exponential({ initialDelayMs: 100, maxAttempts: 3, jitter: noJitter }),
    });
    expect(op).toHaveBeenCalledTimes(3);
    expect(op.mock.calls.map(([c]) => c.attempt)).toEqual([1, 2, 3]);
    expect(error).toBeInstanceOf(RetryError);
    expect(error).toMatchObject({
      name: 'RetryError',
      code: 'EBB_RETRY_GAVE_UP',
      reason: 'attempts',
      attempts: 3,
      elapsedMs: 300,
    });
    expect((error as RetryError).cause).toBe(errors[2]);
    expect((error as Error).message).toMatch(
      /^Gave up after 3 attempts in 300 ms: maxAttempts \(3\) reached\. Last error: Error: 3$/,
    );
    // No sleep after the last failure.
    expect(clock.sleeps).toEqual([100, 200]);
  });

  it('the default policy is presets.default: 5 attempts, full jitter from 100 ms', async () => {
    const op = vi.fn(() => fail());
    const { error, clock } = await settle(op, { random: () => 0.5 });
    expect(op).toHaveBeenCalledTimes(5);
    expect(clock.sleeps).toEqual([50, 100, 200, 400]);
    expect((error as RetryError).attempts).toBe(5);
  });

  it('sleeps exactly what sample() predicts for a seeded policy', async () => {
    for (const backoff of [
      presets.default,
      presets.googleDrive,
      presets.awsStandard,
      withOptions(presets.grpcConnect, { maxAttempts: 8 }),
    ]) {
      const { clock } = await settle(() => fail(), { backoff, random: seeded(99) });
      expect(clock.sleeps).toEqual(sample(backoff, { random: seeded(99) }));
    }
  });

  it('an error isFailure says is no failure reaches the caller unchanged, after that attempt', async () => {
    const fatal = new TypeError('bad request');
    const op = vi.fn((c: AttemptContext) => {
      throw c.attempt === 2 ? fatal : new Error('transient');
    });
    const isFailure = vi.fn(({ error }: { error?: unknown }, _c: AttemptContext) => !(error instanceof TypeError));
    const { error, clock } = await settle(op, {
      isFailure,
      backoff: constant({ delayMs: 10, maxAttempts: 100, jitter: noJitter }),
    });
    expect(error).toBe(fatal);
    expect(op).toHaveBeenCalledTimes(2);
    expect(clock.sleeps).toEqual([10]);
    expect(isFailure.mock.calls.map(([o, c]) => [o.error instanceof TypeError, c.attempt])).toEqual([
      [false, 1],
      [true, 2],
    ]);
  });

  it('isFailure may be async, and a throwing isFailure rejects with its error', async () => {
    const { value } = await settle((c) => (c.attempt < 3 ? fail() : 'done'), { isFailure: async (o) => !o.ok });
    expect(value).toBe('done');
    const oops = new Error('classifier broke');
    const { error } = await settle(() => fail(), {
      isFailure: () => {
        throw oops;
      },
    });
    expect(error).toBe(oops);
  });

  it('isFailure judges values too: a value it calls a failure is retried, and returned when the retries end on it', async () => {
    const seen: unknown[] = [];
    const statuses = [503, 503, 200];
    const { value, clock } = await settle((c) => ({ status: statuses[c.attempt - 1] }), {
      backoff: constant({ delayMs: 10, maxAttempts: 5, jitter: noJitter }),
      isFailure: (o) => {
        seen.push(o);
        return o.ok && (o.value as { status: number }).status >= 500;
      },
    });
    expect(value).toEqual({ status: 200 });
    expect(clock.sleeps).toEqual([10, 10]);
    expect(seen).toEqual([
      { ok: true, value: { status: 503 } },
      { ok: true, value: { status: 503 } },
      { ok: true, value: { status: 200 } },
    ]);
    // The retries end on a failing value: that value is the result (no RetryError), after every hook.
    const hooks: string[] = [];
    const last = { status: 503, n: 3 };
    const ended = await settle((c) => (c.attempt < 3 ? { status: 503, n: c.attempt } : last), {
      backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter }),
      isFailure: (o) => o.ok && (o.value as { status: number }).status >= 500,
      onFailedAttempt: (c) => void hooks.push(`failed ${c.attempt} ${c.next} ${(c.value as { n: number }).n}`),
      onRetry: (c) => void hooks.push(`retry ${c.attempt} ${c.error === undefined}`),
      onGiveUp: (c) => void hooks.push(`give-up ${c.reason} ${c.value === last}`),
    });
    expect(ended.value).toBe(last);
    expect(ended.error).toBeUndefined();
    expect(hooks).toEqual([
      'failed 1 retry 1',
      'retry 1 true',
      'failed 2 retry 2',
      'retry 2 true',
      'failed 3 give-up 3',
      'give-up attempts true',
    ]);
  });

  it('a value is no failure by default; stop(error) ends the run whatever isFailure says', async () => {
    const op = vi.fn(() => ({ status: 503 }));
    expect((await settle(op)).value).toEqual({ status: 503 });
    expect(op).toHaveBeenCalledTimes(1);
    const own = new Error('no such item');
    const isFailure = vi.fn(() => true);
    const stopped = await settle(() => Promise.reject(stop(own)), { isFailure });
    expect(stopped.error).toBe(own);
    expect(isFailure).not.toHaveBeenCalled();
  });

  it('by default retries every error but an abort', async () => {
    const abort = new DOMException('stop', 'AbortError');
    const op = vi.fn(() => {
      throw abort;
    });
    expect((await settle(op)).error).toBe(abort);
    expect(op).toHaveBeenCalledTimes(1);
    const timeout = new DOMException('slow', 'TimeoutError');
    const op2 = vi.fn((c: AttemptContext) => {
      if (c.attempt === 1) throw timeout;
      return 1;
    });
    expect((await settle(op2)).value).toBe(1);
  });

  it('an operation may throw anything, undefined included', async () => {
    const { error } = await settle(
      () => {
        throw undefined;
      },
      { backoff: constant({ delayMs: 1, maxAttempts: 2, jitter: noJitter }) },
    );
    expect(error).toBeInstanceOf(RetryError);
    expect((error as RetryError).cause).toBeUndefined();
    expect((error as Error).message).toMatch(/Last error: none$/);
  });
});

describe('retry: onRetry', () => {
  it('fires before each wait, in order, with attempt, error, delay and elapsed time', async () => {
    const errors = [new Error('a'), new Error('b'), new Error('c')];
    const calls: RetryContext[] = [];
    const { value } = await settle(
      async (c) => {
        if (c.attempt <= 3) throw errors[c.attempt - 1];
        return 'ok';
      },
      {
        backoff: exponential({ initialDelayMs: 100, maxAttempts: 100, jitter: noJitter }),
        onRetry: (c) => void calls.push(c),
      },
    );
    expect(value).toBe('ok');
    expect(calls).toEqual([
      { attempt: 1, error: errors[0], delayMs: 100, elapsedMs: 0 },
      { attempt: 2, error: errors[1], delayMs: 200, elapsedMs: 100 },
      { attempt: 3, error: errors[2], delayMs: 400, elapsedMs: 300 },
    ]);
    expect(Object.isFrozen(calls[0])).toBe(true);
  });

  it('is awaited when async, and a throw stops the retries with its error', async () => {
    const order: string[] = [];
    const clock = recordingClock();
    await settle(
      (c) => {
        order.push(`attempt ${c.attempt}`);
        if (c.attempt < 2) fail();
      },
      {
        onRetry: async () => {
          order.push('onRetry start');
          await clock.sleep(5);
          order.push('onRetry end');
        },
        backoff: constant({ delayMs: 1, maxAttempts: 100, jitter: noJitter }),
      },
      clock,
    );
    expect(order).toEqual(['attempt 1', 'onRetry start', 'onRetry end', 'attempt 2']);
    const stop = new Error('stop');
    const op = vi.fn(() => fail());
    const { error } = await settle(op, {
      onRetry: () => {
        throw stop;
      },
    });
    expect(error).toBe(stop);
    expect(op).toHaveBeenCalledTimes(1);
  });
});

describe('retry: abort', () => {
  it('an already-aborted signal never calls the operation', async () => {
    const reason = new Error('cancelled');
    const op = vi.fn();
    await expect(retry(op, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(op).not.toHaveBeenCalled();
  });

  it('an abort during a wait rejects at once with the reason; the operation is not called again', async () => {
    const clock = recordingClock();
    const controller = new AbortController();
    const op = vi.fn(() => fail());
    const p = retry(op, {
      clock,
      signal: controller.signal,
      backoff: constant({ delayMs: 600_000, maxAttempts: 100, jitter: noJitter }),
    });
    await clock.advance(1_000);
    expect(op).toHaveBeenCalledTimes(1);
    expect(clock.pending).toBe(1);
    const reason = new Error('user cancelled');
    controller.abort(reason);
    await expect(p).rejects.toBe(reason);
    expect(clock.pending).toBe(0);
    await clock.advance(10_000_000);
    expect(op).toHaveBeenCalledTimes(1);
  });

  it("an abort during an attempt aborts the attempt's signal and rejects without waiting for it", async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const p = retry(
      ({ signal }) => {
        seen = signal;
        return new Promise(() => {}); // never settles
      },
      { signal: controller.signal, clock: virtualClock() },
    );
    await Promise.resolve();
    expect(seen?.aborted).toBe(false);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(p).rejects.toBe(reason);
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toBe(reason);
  });

  it('an abort from inside the operation wins over its own error, and no attempt starts afterwards', async () => {
    const controller = new AbortController();
    const reason = new Error('abort inside');
    const op = vi.fn(() => {
      controller.abort(reason);
      throw new Error('op failed too');
    });
    const { error } = await settle(op, { signal: controller.signal });
    expect(error).toBe(reason);
    expect(op).toHaveBeenCalledTimes(1);
  });

  it('an abort from onRetry stops before the wait', async () => {
    const controller = new AbortController();
    const op = vi.fn(() => fail());
    const { error, clock } = await settle(op, {
      signal: controller.signal,
      onRetry: () => controller.abort('from hook'),
    });
    expect(error).toBe('from hook');
    expect(op).toHaveBeenCalledTimes(1);
    expect(clock.pending).toBe(0);
  });

  it('leaves no abort listener on the caller signal once settled', async () => {
    const controller = new AbortController();
    const add = vi.spyOn(controller.signal, 'addEventListener');
    const remove = vi.spyOn(controller.signal, 'removeEventListener');
    await settle((c) => (c.attempt < 3 ? fail() : 1), {
      signal: controller.signal,
      backoff: constant({ delayMs: 5, maxAttempts: 100, jitter: noJitter }),
    });
    expect(add.mock.calls.length).toBeGreaterThan(0);
    expect(remove.mock.calls.length).toBe(add.mock.calls.length);
  });
});

describe('retry: a timeout() inside retrying() bounds each attempt', () => {
  it("on an operation that never settles: each attempt's signal aborts on time, then RetryError", async () => {
    const clock = recordingClock();
    const aborts: Array<[number, number, string]> = [];
    const call = pipeline([
      retrying({ clock, backoff: constant({ delayMs: 1_000, maxAttempts: 3, jitter: noJitter }) }),
      timeout(200, { clock }),
    ]);
    const p = call
      .execute(({ attempt, signal }) => {
        signal.addEventListener('abort', () => aborts.push([attempt, clock.now(), (signal.reason as Error).name]));
        return new Promise(() => {});
      })
      .catch((e: unknown) => e);
    await clock.runAll();
    const error = await p;
    expect(aborts).toEqual([
      [1, 200, 'TimeoutError'],
      [2, 1_400, 'TimeoutError'],
      [3, 2_600, 'TimeoutError'],
    ]);
    expect(error).toBeInstanceOf(RetryError);
    expect(error).toMatchObject({ reason: 'attempts', attempts: 3, elapsedMs: 2_600 });
    expect(((error as RetryError).cause as Error).name).toBe('TimeoutError');
    expect(((error as RetryError).cause as Error).message).toMatch(/attempt 3 timed out after 200 ms/);
    expect(clock.pending).toBe(0);
  });

  it('a signal read after the timeout is already aborted; an attempt that finishes in time is not', async () => {
    const clock = virtualClock();
    let late: AbortSignal | undefined;
    const call = pipeline([
      retrying({ clock, backoff: constant({ delayMs: 0, maxAttempts: 100, jitter: noJitter }) }),
      timeout(100, { clock }),
    ]);
    const p = call.execute(async (c) => {
      if (c.attempt === 1) {
        await clock.sleep(500);
        late = c.signal;
        return 'late';
      }
      await clock.sleep(50);
      expect(c.signal.aborted).toBe(false);
      return 'fast';
    });
    await clock.runAll();
    expect(await p).toBe('fast');
    expect(late?.aborted).toBe(true);
  });
});

describe('retry: deadlines (maxElapsedMs)', () => {
  it('never starts a wait that would end past the deadline: gives up at once instead', async () => {
    const op = vi.fn(() => fail());
    const { error, clock } = await settle(op, {
      backoff: exponential({ initialDelayMs: 100, maxElapsedMs: 1_000, jitter: noJitter }),
    });
    // 100 + 200 + 400 = 700; the next wait (800) would end at 1500.
    expect(clock.sleeps).toEqual([100, 200, 400]);
    expect(op).toHaveBeenCalledTimes(4);
    expect(error).toMatchObject({ reason: 'elapsed', attempts: 4, elapsedMs: 700 });
    expect((error as Error).message).toMatch(/the next wait \(800 ms\) would end past maxElapsedMs \(1000 ms\)/);
  });

  it('lets an attempt still running at the deadline finish, and starts none after it', async () => {
    const clock = recordingClock();
    let signal: AbortSignal | undefined;
    const op = vi.fn(async (c: AttemptContext) => {
      signal = c.signal;
      await clock.sleep(10_000, c.signal);
      throw new Error('slow failure');
    });
    const { error } = await settle(
      op,
      { backoff: constant({ delayMs: 100, maxElapsedMs: 2_000, jitter: noJitter }) },
      clock,
    );
    expect(clock.now()).toBe(10_000);
    expect(error).toMatchObject({ reason: 'elapsed', attempts: 1, elapsedMs: 10_000 });
    expect(signal?.aborted).toBe(false);
    expect(op).toHaveBeenCalledTimes(1);
  });

  it('a timeout() outside the retry bounds the whole call: its attempt is aborted, no wait or attempt follows', async () => {
    const clock = recordingClock();
    let signal: AbortSignal | undefined;
    const op = vi.fn(async (c: AttemptContext) => {
      signal = c.signal;
      await clock.sleep(10_000, c.signal);
    });
    const call = pipeline([
      timeout(2_000, { clock }),
      retrying({ clock, backoff: constant({ delayMs: 100, maxAttempts: 10, jitter: noJitter }) }),
    ]);
    const p = call.execute(op).catch((e: unknown) => e);
    await clock.runAll();
    const error = (await p) as Error;
    expect(clock.now()).toBe(2_000);
    expect(error.name).toBe('TimeoutError');
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBe(error);
    expect(op).toHaveBeenCalledTimes(1);
    expect(clock.pending).toBe(0);
  });
});

describe('retry: server hints (retryAfterMs)', () => {
  const hinted = (ms: number) => Object.assign(new Error('429'), { retryAfterMs: ms });

  it('makes the next wait at least the hint', async () => {
    const { clock, value } = await settle((c) => (c.attempt === 1 ? Promise.reject(hinted(1_000)) : 'ok'), {
      backoff: constant({ delayMs: 10, maxAttempts: 100, jitter: noJitter }),
    });
    expect(value).toBe('ok');
    expect(clock.sleeps).toEqual([1_000]);
    // …and never shortens a longer backoff delay.
    const { clock: c2 } = await settle((c) => (c.attempt === 1 ? Promise.reject(hinted(5)) : 'ok'), {
      backoff: constant({ delayMs: 10, maxAttempts: 100, jitter: noJitter }),
    });
    expect(c2.sleeps).toEqual([10]);
  });

  it('gives up at once, without sleeping, when the hint is above maxRetryAfterMs (default 60 s)', async () => {
    const op = vi.fn(() => Promise.reject(hinted(86_400_000)));
    const { error, clock } = await settle(op);
    expect(error).toMatchObject({ reason: 'retry-after', attempts: 1 });
    expect(clock.sleeps).toEqual([]);
    expect(op).toHaveBeenCalledTimes(1);
    // The option is honoured.
    const { clock: c2, value } = await settle((c) => (c.attempt === 1 ? Promise.reject(hinted(120_000)) : 'ok'), {
      maxRetryAfterMs: 180_000,
    });
    expect(value).toBe('ok');
    expect(c2.sleeps).toEqual([120_000]);
    const { error: e3 } = await settle(() => Promise.reject(hinted(2_000)), { maxRetryAfterMs: 1_000 });
    expect(e3).toMatchObject({ reason: 'retry-after' });
  });

  it('an endless hint (Infinity: a Retry-After too long to represent) gives up at once, whatever maxRetryAfterMs', async () => {
    for (const maxRetryAfterMs of [60_000, Infinity]) {
      const { error, clock } = await settle(
        () => Promise.reject(Object.assign(new Error(), { retryAfterMs: Infinity })),
        {
          maxRetryAfterMs,
        },
      );
      expect(error).toMatchObject({ reason: 'retry-after', attempts: 1 });
      expect(clock.sleeps).toEqual([]);
    }
  });

  it('ignores hints that are not non-negative numbers', async () => {
    for (const bad of [Number.NaN, -5, -Infinity, '1000']) {
      const { clock } = await settle(
        (c) => (c.attempt === 1 ? Promise.reject(Object.assign(new Error(), { retryAfterMs: bad })) : 1),
        { backoff: constant({ delayMs: 7, maxAttempts: 100, jitter: noJitter }) },
      );
      expect(clock.sleeps).toEqual([7]);
    }
  });
});

/** `retry()` with a guard inside it, as a pipeline: `pipeline([retrying(options), guard(rate)])`. */
async function settleGuarded<T>(
  operation: (c: AttemptContext) => T | PromiseLike<T>,
  rate: RateController,
  options: RetryOptions = {},
) {
  const clock = recordingClock();
  const p = pipeline([retrying({ clock, ...options }), guard(rate)])
    .execute(operation)
    .then(
      (value) => ({ value: value as T, error: undefined as unknown }),
      (error: unknown) => ({ value: undefined, error }),
    );
  await clock.runAll();
  return { ...(await p), clock };
}

describe('retry: shared controllers', () => {
  it('asks the rate controller before every attempt and reports each outcome', async () => {
    const events: string[] = [];
    const rate = {
      acquire: vi.fn(async () => {
        events.push('acquire');
      }),
      record: vi.fn((o: Outcome) => {
        events.push(o);
      }),
    };
    const throttled = Object.assign(new Error('slow down'), { throttled: true });
    await settleGuarded((c) => (c.attempt === 1 ? Promise.reject(throttled) : c.attempt === 2 ? fail() : 'ok'), rate, {
      backoff: constant({ delayMs: 1, maxAttempts: 100, jitter: noJitter }),
    });
    expect(events).toEqual(['acquire', 'throttled', 'acquire', 'failure', 'acquire', 'success']);
  });

  it('gives up with reason budget when the budget refuses, and reports requests and successes', async () => {
    const budget = { recordRequest: vi.fn(), tryAcquireRetry: vi.fn(() => false), recordSuccess: vi.fn() };
    const boom = new Error('x');
    const { error, clock } = await settle(() => Promise.reject(boom), { budget });
    expect(error).toMatchObject({ reason: 'budget', attempts: 1 });
    expect((error as RetryError).cause).toBe(boom);
    expect(budget.tryAcquireRetry).toHaveBeenCalledWith(boom);
    expect(clock.sleeps).toEqual([]);
    const ok = { recordRequest: vi.fn(), tryAcquireRetry: vi.fn(() => true), recordSuccess: vi.fn() };
    await settle((c) => (c.attempt < 2 ? fail() : 1), { budget: ok });
    expect(ok.recordRequest).toHaveBeenCalledTimes(1);
    expect(ok.tryAcquireRetry).toHaveBeenCalledTimes(1);
    expect(ok.recordSuccess).toHaveBeenCalledTimes(1);
  });

  it('hands each outcome the ticket its acquire gave, returned or resolved', async () => {
    const seen: [Outcome, unknown][] = [];
    let n = 0;
    const rate = {
      acquire: () => (++n === 2 ? Promise.resolve(`ticket ${n}`) : `ticket ${n}`),
      record: (outcome: Outcome, ticket?: unknown) => {
        seen.push([outcome, ticket]);
      },
    };
    await settleGuarded((c) => (c.attempt < 3 ? fail() : 'ok'), rate, {
      backoff: constant({ delayMs: 1, maxAttempts: 100, jitter: noJitter }),
    });
    expect(seen).toEqual([
      ['failure', 'ticket 1'],
      ['failure', 'ticket 2'],
      ['success', 'ticket 3'],
    ]);
  });

  it('tells the budget of every retryable failure, the last one included, and of no final one', async () => {
    const budget = { recordFailure: vi.fn(), tryAcquireRetry: vi.fn(() => true), recordSuccess: vi.fn() };
    const { error } = await settle(() => fail(), {
      budget,
      backoff: constant({ delayMs: 1, maxAttempts: 3, jitter: noJitter }),
    });
    expect(error).toMatchObject({ reason: 'attempts', attempts: 3 });
    expect(budget.recordFailure).toHaveBeenCalledTimes(3);
    expect(budget.tryAcquireRetry).toHaveBeenCalledTimes(2);
    const fatal = new Error('fatal');
    const other = { recordFailure: vi.fn(), tryAcquireRetry: vi.fn(() => true), recordSuccess: vi.fn() };
    const final = await settle(() => Promise.reject(fatal), { budget: other, isFailure: () => false });
    expect(final.error).toBe(fatal);
    expect(other.recordFailure).not.toHaveBeenCalled();
  });

  it('tells the budget which attempt succeeded and whose error it retried', async () => {
    const budget = { tryAcquireRetry: () => true, recordSuccess: vi.fn() };
    const errors = [new Error('one'), new Error('two')];
    await settle(
      (c) => {
        if (c.attempt < 3) throw errors[c.attempt - 1];
        return 'ok';
      },
      { budget, backoff: constant({ delayMs: 1, maxAttempts: 100, jitter: noJitter }) },
    );
    await settle(() => 'at once', { budget });
    expect(budget.recordSuccess.mock.calls).toEqual([
      [{ attempt: 3, lastError: errors[1] }],
      [{ attempt: 1, lastError: undefined }],
    ]);
  });
});

describe('retry: options', () => {
  it('random drives the jitter', async () => {
    const low = await settle(() => fail(), { random: () => 0 });
    const high = await settle(() => fail(), { random: () => 0.75 });
    expect(low.clock.sleeps).toEqual([0, 0, 0, 0]);
    expect(high.clock.sleeps).toEqual([75, 150, 300, 600]);
  });

  it('clock is the only time source: elapsedMs follows it', async () => {
    const seen: number[] = [];
    await settle(
      (c) => {
        seen.push(c.elapsedMs);
        if (c.attempt < 3) fail();
      },
      { backoff: constant({ delayMs: 250, maxAttempts: 100, jitter: noJitter }) },
    );
    expect(seen).toEqual([0, 250, 500]);
  });

  it('unref makes the waits not hold a Node.js process open', async () => {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    const controller = new AbortController();
    const p = retry(() => fail(), {
      unref: true,
      signal: controller.signal,
      backoff: constant({ delayMs: 60_000, maxAttempts: 100, jitter: noJitter }),
    });
    await new Promise((r) => setImmediate(r));
    const timer = spy.mock.results.at(-1)?.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    controller.abort();
    await expect(p).rejects.toBeDefined();
    spy.mockRestore();
  });

  it('rejects bad options at the call, naming them', async () => {
    await expect(retry(() => 1, { maxRetryAfterMs: Number.NaN })).rejects.toThrow(RangeError);
    await expect(retry(() => 1, { isFailure: true as never })).rejects.toThrow(/`isFailure` to be a function/);
    await expect(retry(() => 1, { onRetry: 'x' as never })).rejects.toThrow(/`onRetry`/);
    await expect(retry(() => 1, { backoff: { start: 1 } as never })).rejects.toThrow(
      /`backoff` to be an object with start\(\)/,
    );
    await expect(retry(() => 1, { signal: {} as never })).rejects.toThrow(
      /`signal` to be an object with addEventListener/,
    );
    await expect(retry(() => 1, { clock: { now: () => 0 } as unknown as Clock })).rejects.toThrow(/`clock`/);
    await expect(retry(() => 1, { random: 0.5 as never })).rejects.toThrow(/`random`/);
    await expect(retry(() => 1, { unref: 1 as never })).rejects.toThrow(/`unref` to be a boolean/);
    await expect(retry(() => 1, { unref: true, clock: virtualClock() })).rejects.toThrow(
      /`unref` is for the system clock/,
    );
    await expect(retry(() => 1, { budget: {} as never })).rejects.toThrow(/`budget`/);
    await expect(retry(() => 1, { retriez: 3 } as never)).rejects.toThrow(/unknown option `retriez`/);
    await expect(retry(5 as never)).rejects.toThrow(/`operation` to be a function, got 5/);
  });

  it('options of 0.x that moved are refused with where they went', async () => {
    const moved: [string, RegExp][] = [
      ['retryIf', /`retryIf` moved; use `isFailure`/],
      [
        'retries',
        /`retries` moved; use `backoff: exponential\(\{ maxAttempts \}\)` \(attempts count calls: retries \+ 1\)/,
      ],
      [
        'maxAttempts',
        /`maxAttempts` moved; use `backoff: exponential\(\{ maxAttempts \}\)` \(it counts calls, the first included: cockatiel's `maxAttempts: 3` is 4 here\)/,
      ],
      ['maxElapsedMs', /`maxElapsedMs` moved; use `backoff: exponential\(\{ maxElapsedMs \}\)`/],
      ['attemptTimeoutMs', /`attemptTimeoutMs` moved; use `timeout\(ms\)` inside a pipeline/],
      ['rate', /`rate` moved; use a pipeline: `pipeline\(\[retrying\(options\), rate\]\)`/],
    ];
    for (const [key, message] of moved) {
      const error = await retry(() => 1, { [key]: 3 } as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(new RegExp(`^retry\\(\\): ${message.source}\\.$`));
    }
  });
});
