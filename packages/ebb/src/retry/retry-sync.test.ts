import { afterEach, describe, expect, it, vi } from 'vitest';
import { constant } from '../backoff/constant.js';
import { exponential } from '../backoff/exponential.js';
import { noJitter } from '../backoff/jitter-none.js';
import * as validateModule from '../core/validate.js';
import * as decideModule from './decide.js';
import * as errorsModule from './errors.js';
import { RetryError, stop } from './errors.js';
import * as optionsModule from './options.js';
import * as retryModule from './retry.js';
import { retrySync, type SyncClock } from './retry-sync.js';

const shared = {
  '../core/validate.js': validateModule,
  './decide.js': decideModule,
  './errors.js': errorsModule,
  './options.js': optionsModule,
  './retry.js': retryModule,
};

/**
 * retry-sync.js loaded afresh (its blocking probe not yet run) on the modules this file already
 * loaded: no other module's top level runs again inside a test (which would make the mutation
 * run count those modules' import-time code as covered by this test).
 */
async function freshRetrySync(): Promise<typeof retrySync> {
  vi.resetModules();
  for (const [path, module] of Object.entries(shared)) vi.doMock(path, () => module);
  try {
    return (await import('./retry-sync.js')).retrySync;
  } finally {
    for (const path of Object.keys(shared)) vi.doUnmock(path);
    // Leave no fresh copy bound to this file's modules for a later file sharing the process.
    vi.resetModules();
  }
}

function fakeClock(): SyncClock & { sleeps: number[] } {
  let now = 0;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    sleepSync: (ms) => {
      sleeps.push(ms);
      now += ms;
    },
  };
}

describe('retrySync', () => {
  it('retries synchronously with the policy’s waits and returns the value', () => {
    const clock = fakeClock();
    const op = vi.fn((c: { attempt: number; elapsedMs: number }) => {
      if (c.attempt < 3) throw new Error('locked');
      return c;
    });
    expect(
      retrySync(op, { clock, backoff: exponential({ initialDelayMs: 10, maxAttempts: 100, jitter: noJitter }) }),
    ).toEqual({
      attempt: 3,
      elapsedMs: 30,
    });
    expect(clock.sleeps).toEqual([10, 20]);
  });

  it('gives up with RetryError, rethrows final errors unchanged, and never sleeps after the last attempt', () => {
    const clock = fakeClock();
    const boom = new Error('boom');
    let error: unknown;
    try {
      retrySync(
        () => {
          throw boom;
        },
        { clock, backoff: constant({ delayMs: 5, maxAttempts: 3, jitter: noJitter }) },
      );
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ reason: 'attempts', attempts: 3, elapsedMs: 10 });
    expect((error as RetryError).cause).toBe(boom);
    expect(clock.sleeps).toEqual([5, 5]);
    const fatal = new Error('fatal');
    expect(() =>
      retrySync(
        () => {
          throw fatal;
        },
        { clock, isFailure: () => false },
      ),
    ).toThrow(fatal);
  });

  it('applies the time budget, server hints and onRetry', () => {
    const clock = fakeClock();
    expect(() =>
      retrySync(
        () => {
          throw new Error('x');
        },
        { clock, backoff: constant({ delayMs: 400, maxElapsedMs: 1_000, jitter: noJitter }) },
      ),
    ).toThrow(/would end past maxElapsedMs/);
    expect(clock.sleeps).toEqual([400, 400]);
    const c2 = fakeClock();
    const calls: number[] = [];
    retrySync(
      (c) => {
        if (c.attempt === 1) throw Object.assign(new Error('busy'), { retryAfterMs: 250 });
        return 1;
      },
      {
        clock: c2,
        backoff: constant({ delayMs: 1, maxAttempts: 100, jitter: noJitter }),
        onRetry: (r) => void calls.push(r.delayMs),
      },
    );
    expect(c2.sleeps).toEqual([250]);
    expect(calls).toEqual([250]);
    expect(() =>
      retrySync(
        () => {
          throw Object.assign(new Error('busy'), { retryAfterMs: 250 });
        },
        { clock: fakeClock(), maxRetryAfterMs: 100 },
      ),
    ).toThrow(RetryError);
  });

  it('blocks the thread for real with Atomics.wait by default', () => {
    const start = performance.now();
    let n = 0;
    retrySync(
      () => {
        if (++n < 2) throw new Error('once');
      },
      { backoff: constant({ delayMs: 30, maxAttempts: 100, jitter: noJitter }) },
    );
    expect(performance.now() - start).toBeGreaterThanOrEqual(29);
  });

  it('refuses promises and bad options', () => {
    expect(() => retrySync(() => Promise.resolve(1))).toThrow(/returned a promise; use retry\(\)/);
    expect(() => retrySync(() => 1, { clock: { now: () => 0 } as never })).toThrow(/`clock`/);
    expect(() => retrySync(() => 1, { signal: 1 } as never)).toThrow(/unknown option `signal`/);
    expect(() => retrySync(() => 1, { isFailure: 1 } as never)).toThrow(/expected `isFailure` to be a function/);
    expect(() => retrySync(() => 1, { retryIf: () => true } as never)).toThrow(
      'retrySync(): `retryIf` moved; use `isFailure`.',
    );
  });

  it('isFailure judges values too: a failing value is retried, and returned when the retries end on it', () => {
    const clock = fakeClock();
    const statuses = [503, 503, 200];
    let n = 0;
    expect(
      retrySync(() => ({ status: statuses[n++] }), {
        clock,
        backoff: constant({ delayMs: 5, maxAttempts: 5, jitter: noJitter }),
        isFailure: (o) => o.ok && (o.value.status ?? 0) >= 500,
      }),
    ).toEqual({ status: 200 });
    expect(clock.sleeps).toEqual([5, 5]);
    const gaveUp: unknown[] = [];
    const last = { status: 503 };
    expect(
      retrySync(() => last, {
        clock: fakeClock(),
        backoff: constant({ delayMs: 5, maxAttempts: 2, jitter: noJitter }),
        isFailure: (o) => o.ok && o.value.status >= 500,
        onGiveUp: (c) => void gaveUp.push([c.reason, c.value, c.error]),
      }),
    ).toBe(last);
    expect(gaveUp).toEqual([['attempts', last, undefined]]);
  });
});

describe('retrySync: pinned by its mutation survivors', () => {
  it('elapsedMs counts from the start on a clock that does not start at 0; final hooks name the step', () => {
    let now = 1_000_000;
    const clock = {
      now: () => now,
      sleepSync: (ms: number) => {
        now += ms;
      },
    };
    const seen: number[] = [];
    const log: unknown[] = [];
    const own = new Error('own');
    expect(() =>
      retrySync(
        ({ attempt, elapsedMs }) => {
          seen.push(elapsedMs);
          if (attempt < 3) throw new Error('x');
          throw stop(own);
        },
        {
          clock,
          backoff: constant({ delayMs: 10, maxAttempts: 5, jitter: noJitter }),
          onFailedAttempt: (c) => {
            if (c.next === 'final') log.push({ ...c });
          },
          onGiveUp: (c) => {
            log.push({ ...c });
          },
        },
      ),
    ).toThrow(own);
    expect(seen).toEqual([0, 10, 20]);
    expect(log).toEqual([
      { attempt: 3, error: own, elapsedMs: 20, next: 'final', delayMs: undefined, reason: undefined },
      { attempts: 3, error: own, elapsedMs: 20, reason: 'final' },
    ]);
  });

  it('refuses a promise from isFailure and a missing operation, naming them', () => {
    const clock = { now: () => 0, sleepSync: () => {} };
    expect(() =>
      retrySync(
        () => {
          throw new Error('x');
        },
        { clock, isFailure: (() => Promise.resolve(true)) as never },
      ),
    ).toThrow(
      'retrySync(): `isFailure` returned a promise; it must answer synchronously (use retry() for an async isFailure).',
    );
    expect(() => retrySync(5 as never)).toThrow('retrySync(): expected `operation` to be a function, got 5.');
  });
});

describe('retrySync: the default clock and the blocking probe', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('the first attempt starts at elapsed 0 without reading the clock again', () => {
    // A clock that moves 1 ms on every reading.
    let now = 0;
    const clock = {
      now: () => (now += 1),
      sleepSync: () => {},
    };
    const seen: number[] = [];
    retrySync(
      ({ attempt, elapsedMs }) => {
        seen.push(elapsedMs);
        if (attempt < 2) throw new Error('x');
      },
      { clock, backoff: constant({ delayMs: 0, maxAttempts: 5, jitter: noJitter }) },
    );
    // Readings: the start (1), after the failure (2), attempt 2's start (3).
    expect(seen).toEqual([0, 2]);
  });

  it('reads performance.now() by default', () => {
    let t = 5_000;
    const seen: number[] = [];
    const spy = vi.spyOn(performance, 'now').mockImplementation(() => (t += 7));
    try {
      retrySync(
        ({ attempt, elapsedMs }) => {
          seen.push(elapsedMs);
          if (attempt < 3) throw new Error('x');
        },
        { backoff: constant({ delayMs: 0, maxAttempts: 5, jitter: noJitter }) },
      );
    } finally {
      spy.mockRestore();
    }
    // Each failure and each attempt's start read the clock once: 7 ms apart.
    expect(seen).toEqual([0, 14, 28]);
  });

  it('where Atomics.wait throws, refuses the default clock with a named TypeError (probing once) but runs on a given clock', async () => {
    const fresh = await freshRetrySync();
    const wait = vi.spyOn(Atomics, 'wait').mockImplementation(() => {
      throw new TypeError('Atomics.wait cannot be called in this context');
    });
    const message =
      "retrySync(): this thread may not block (a browser's main thread, or no SharedArrayBuffer without cross-origin isolation); use retry() instead.";
    expect(() => fresh(() => 1)).toThrow(new TypeError(message));
    expect(() => fresh(() => 2)).toThrow(new TypeError(message));
    expect(wait).toHaveBeenCalledTimes(1);
    const clock = fakeClock();
    let n = 0;
    expect(
      fresh(
        () => {
          if (++n < 2) throw new Error('x');
          return 'done';
        },
        { clock, backoff: constant({ delayMs: 3, maxAttempts: 5, jitter: noJitter }) },
      ),
    ).toBe('done');
    expect(clock.sleeps).toEqual([3]);
  });

  it('where Atomics.wait works, probes it once and then only waits', async () => {
    const fresh = await freshRetrySync();
    const wait = vi.spyOn(Atomics, 'wait');
    expect(fresh(() => 1)).toBe(1);
    expect(fresh(() => 2)).toBe(2);
    expect(wait).toHaveBeenCalledTimes(1);
    expect(wait.mock.calls[0]?.[3]).toBe(0);
  });
});

describe('retrySync: what its RetryError says', () => {
  it('counts elapsed time from the call (its clock is read before attempt 1), and says so', () => {
    const clock = fakeClock();
    let error: unknown;
    try {
      retrySync(
        () => {
          throw new Error('locked');
        },
        { clock, backoff: constant({ delayMs: 25, maxAttempts: 3, jitter: noJitter }) },
      );
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RetryError);
    expect((error as RetryError).message).toBe(
      'Gave up after 3 attempts in 50 ms: maxAttempts (3) reached. Last error: Error: locked',
    );
  });
});
