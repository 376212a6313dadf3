import { describe, expect, it } from 'vitest';
import type { BackoffPolicy } from '../backoff/backoff.js';
import { constant } from '../backoff/constant.js';
import { exponential } from '../backoff/exponential.js';
import { fullJitter } from '../backoff/jitter-full.js';
import { noJitter } from '../backoff/jitter-none.js';
import type { Clock } from '../core/clock.js';
import { refQueue } from '../core/timer-queue.js';
import { virtualClock } from '../core/virtual-clock.js';
import { describeThrown, RetryError } from './errors.js';
import { retry } from './retry.js';
import { retrySync, type SyncClock } from './retry-sync.js';

/** A custom policy whose run returns `values` in turn (then `last`). */
function policy(values: unknown[], maxElapsedMs: unknown = Infinity): BackoffPolicy {
  return {
    maxElapsedMs: maxElapsedMs as number,
    start: () => {
      let i = 0;
      return { next: () => (i < values.length ? values[i++] : -1) as number };
    },
  };
}

const alwaysFail = (): never => {
  throw new Error('x');
};

/** Settles `p` on the virtual clock and returns its error (undefined if it resolved). */
async function errorOf(p: Promise<unknown>, clock: { runAll(n?: number): Promise<void> }): Promise<unknown> {
  const outcome = p.then(
    () => undefined,
    (e: unknown) => e,
  );
  await clock.runAll(10_000);
  return outcome;
}

describe('a policy run returning anything but a finite delay >= 0 or -1 fails only its operation', () => {
  const cases: [unknown, RegExp, ErrorConstructor][] = [
    [
      Number.NaN,
      /backoff\.next\(\) returned NaN; expected a finite number of milliseconds >= 0, or -1 to stop/,
      RangeError,
    ],
    [undefined, /backoff\.next\(\) returned undefined/, TypeError],
    ['5000', /backoff\.next\(\) returned "5000"/, TypeError],
    [Infinity, /backoff\.next\(\) returned Infinity/, RangeError],
    [-5, /backoff\.next\(\) returned -5/, RangeError],
    [-0.5, /backoff\.next\(\) returned -0.5/, RangeError],
    [null, /backoff\.next\(\) returned null/, TypeError],
    [{ valueOf: () => 5 }, /backoff\.next\(\) returned an object/, TypeError],
    [true, /backoff\.next\(\) returned true;/, TypeError],
    [Promise.resolve(5), /backoff\.next\(\) returned a promise;/, TypeError],
  ];
  for (const [bad, message, type] of cases) {
    it(`next() returning ${String(typeof bad === 'string' ? `'${bad}'` : bad)} rejects with a ${type.name} naming it (retry and retrySync)`, async () => {
      const clock = virtualClock(12_345);
      let calls = 0;
      const error = await errorOf(
        retry(
          () => {
            calls++;
            throw new Error('x');
          },
          { backoff: policy([bad]), clock },
        ),
        clock,
      );
      expect(error).toBeInstanceOf(type);
      expect((error as Error).message).toMatch(message);
      expect(calls).toBe(1);
      expect(clock.pending).toBe(0);
      const sync: SyncClock = { now: () => 0, sleepSync: () => {} };
      expect(() => retrySync(alwaysFail, { backoff: policy([bad]), clock: sync })).toThrow(message);
    });
  }

  it('a long string from next() is cut in the message (40 characters are shown whole)', async () => {
    const clock = virtualClock(1);
    const forty = await errorOf(retry(alwaysFail, { backoff: policy(['8'.repeat(40)]), clock }), clock);
    expect((forty as Error).message).toMatch(`returned "${'8'.repeat(40)}";`);
    const error = await errorOf(retry(alwaysFail, { backoff: policy(['9'.repeat(100)]), clock }), clock);
    expect((error as Error).message).toBe(
      `backoff.next() returned "${'9'.repeat(40)}…"; expected a finite number of milliseconds >= 0, or -1 to stop.`,
    );
  });

  it('-0 is a delay of zero, and -1 (only) is the stop value', async () => {
    const clock = virtualClock(500);
    let calls = 0;
    const error = await errorOf(
      retry(
        () => {
          calls++;
          throw new Error('x');
        },
        { backoff: policy([-0, 0]), clock },
      ),
      clock,
    );
    expect(calls).toBe(3);
    expect(error).toMatchObject({ name: 'RetryError', reason: 'attempts', attempts: 3 });
  });

  it('start() returning no run, or throwing, rejects that operation', async () => {
    const clock = virtualClock(7);
    const noRun: BackoffPolicy = { maxElapsedMs: Infinity, start: () => undefined as never };
    expect(await errorOf(retry(alwaysFail, { backoff: noRun, clock }), clock)).toMatchObject({
      name: 'TypeError',
      message: 'backoff.start() returned undefined; expected a run { next() }.',
    });
    for (const [run, shown] of [
      [null, 'null'],
      [{ next: 5 }, 'an object'],
      [7, '7'],
    ] as const) {
      const bad: BackoffPolicy = { maxElapsedMs: Infinity, start: () => run as never };
      expect(await errorOf(retry(alwaysFail, { backoff: bad, clock }), clock)).toMatchObject({
        name: 'TypeError',
        message: `backoff.start() returned ${shown}; expected a run { next() }.`,
      });
    }
    const boom = new Error('start failed');
    const throwing: BackoffPolicy = {
      maxElapsedMs: Infinity,
      start: () => {
        throw boom;
      },
    };
    expect(await errorOf(retry(alwaysFail, { backoff: throwing, clock }), clock)).toBe(boom);
  });

  it('a custom policy with maxElapsedMs NaN, negative or not a number is refused at the call', async () => {
    for (const bad of [Number.NaN, -1, '100', undefined, null]) {
      const backoff = { ...policy([1]), maxElapsedMs: bad as number };
      await expect(retry(alwaysFail, { backoff })).rejects.toThrow(
        /retry\(\): expected `backoff\.maxElapsedMs` to be a number >= 0/,
      );
      expect(() => retrySync(alwaysFail, { backoff })).toThrow(/`backoff\.maxElapsedMs`/);
    }
  });

  it('the policy is read once: a maxElapsedMs getter cannot move the deadline during a run', async () => {
    let reads = 0;
    const sneaky: BackoffPolicy = {
      get maxElapsedMs() {
        reads++;
        return reads === 1 ? 100 : Number.NaN;
      },
      start: () => ({ next: () => 60 }),
    };
    const clock = virtualClock(1_000);
    const error = await errorOf(retry(alwaysFail, { backoff: sneaky, clock }), clock);
    expect(error).toMatchObject({ reason: 'elapsed', attempts: 2 });
    expect(reads).toBe(1);
  });

  it('the shared timer queue is not poisoned: a NaN policy on the system clock leaves other retries on time', async () => {
    // One NaN once stalled the process-wide queue: the second retry never settled.
    const hostile = retry(alwaysFail, { backoff: policy([Number.NaN]) });
    let calls = 0;
    const t0 = performance.now();
    const ordinary = retry(
      () => {
        if (++calls === 1) throw new Error('once');
        return 'ok';
      },
      { backoff: constant({ delayMs: 5, maxAttempts: 3, jitter: noJitter }) },
    );
    await expect(hostile).rejects.toThrow(RangeError);
    await expect(ordinary).resolves.toBe('ok');
    expect(calls).toBe(2);
    // Generous: the wait is 5 ms; a busy machine may add a few hundred.
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(refQueue.size).toBe(0);
  });
});

describe('a clock that misbehaves fails only its own operation, with a named error', () => {
  function clockWith(now: () => unknown, sleep?: Clock['sleep']): Clock {
    const base = virtualClock();
    return { now: now as () => number, sleep: sleep ?? ((ms, signal) => base.sleep(ms, signal)) };
  }
  const failTwice = (c: { attempt: number }) => {
    if (c.attempt < 3) throw new Error('x');
    return 'ok';
  };
  const fast = constant({ delayMs: 0, maxAttempts: 5, jitter: noJitter });

  it('now() returning NaN, a string or Infinity, at the start or later', async () => {
    for (const bad of [Number.NaN, '12', Infinity, undefined]) {
      await expect(retry(failTwice, { clock: clockWith(() => bad), backoff: fast })).rejects.toThrow(
        /^clock\.now\(\) returned .*; expected a finite number of milliseconds\.$/,
      );
      let reads = 0;
      const later = clockWith(() => (++reads > 1 ? bad : 1_000));
      const error = await retry(failTwice, { clock: later, backoff: fast }).catch((e: unknown) => e);
      expect((error as Error).message).toMatch(/^clock\.now\(\) returned/);
      expect(error).toBeInstanceOf(typeof bad === 'number' ? RangeError : TypeError);
    }
  });

  it('now() going back reads as no time passing, and time goes on from there', async () => {
    // The clock is set back 10 ms during the first wait, and runs 15 ms during the second.
    let now = 1_000;
    const sleeps = [-10, 15];
    const seen: number[] = [];
    const clock = clockWith(
      () => now,
      () => {
        now += sleeps.shift() ?? 0;
        return Promise.resolve();
      },
    );
    const result = await retry(
      (c: { attempt: number; elapsedMs: number }) => {
        seen.push(c.elapsedMs);
        return failTwice(c);
      },
      { clock, backoff: fast },
    );
    expect(result).toBe('ok');
    expect(seen).toEqual([0, 0, 15]);
  });

  it('now() throwing rejects with its error', async () => {
    const boom = new Error('clock broke');
    const clock = clockWith(() => {
      throw boom;
    });
    await expect(retry(failTwice, { clock, backoff: fast })).rejects.toBe(boom);
  });

  it('sleep() returning no promise, throwing or rejecting', async () => {
    await expect(
      retry(failTwice, { clock: clockWith(() => 0, (() => undefined) as never), backoff: fast }),
    ).rejects.toThrow('clock.sleep() returned undefined; expected a promise.');
    await expect(retry(failTwice, { clock: clockWith(() => 0, (() => null) as never), backoff: fast })).rejects.toThrow(
      'clock.sleep() returned null; expected a promise.',
    );
    await expect(retry(failTwice, { clock: clockWith(() => 0, (() => 5) as never), backoff: fast })).rejects.toThrow(
      'clock.sleep() returned 5; expected a promise.',
    );
    const boom = new Error('sleep broke');
    await expect(
      retry(failTwice, {
        clock: clockWith(
          () => 0,
          () => {
            throw boom;
          },
        ),
        backoff: fast,
      }),
    ).rejects.toBe(boom);
    await expect(
      retry(failTwice, {
        clock: clockWith(
          () => 0,
          () => Promise.reject(boom),
        ),
        backoff: fast,
      }),
    ).rejects.toBe(boom);
  });

  it('retrySync: a SyncClock whose now() misbehaves', () => {
    expect(() => retrySync(() => 1, { clock: { now: () => Number.NaN, sleepSync: () => {} } })).toThrow(
      'clock.now() returned NaN; expected a finite number of milliseconds.',
    );
    // Readings: the start, attempt 1's failure, attempt 2 (1 ms earlier), its failure, attempt 3.
    // A reading that goes back is no error: time goes on from where it was.
    const readings = [5, 5, 4, 4, 6];
    const seen: number[] = [];
    const value = retrySync(
      (c) => {
        seen.push(c.elapsedMs);
        return failTwice(c);
      },
      { clock: { now: () => readings.shift() ?? 0, sleepSync: () => {} }, backoff: fast },
    );
    expect(value).toBe('ok');
    expect(seen).toEqual([0, 0, 2]);
  });
});

describe('messages built from thrown values never throw', () => {
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  const unprintable: [string, unknown, RegExp][] = [
    ['a null-prototype object', Object.create(null), /Last error: an unprintable object$/],
    [
      'an object whose toString throws',
      {
        toString() {
          throw new Error('no');
        },
      },
      /Last error: an unprintable object$/,
    ],
    ['a symbol', Symbol('sym'), /Last error: Symbol\(sym\)$/],
    [
      'an error whose name getter throws',
      Object.defineProperty(new Error('m'), 'name', {
        get() {
          throw new Error('getter');
        },
      }),
      /Last error: m$/,
    ],
    ['a revoked proxy', revoked.proxy, /Last error: an unprintable object$/],
    ['a function', () => 1, /Last error: \(\) => 1$/],
    ['a bigint', 10n, /Last error: 10$/],
  ];
  for (const [what, value, message] of unprintable) {
    it(`${what}: retry and retrySync give up with RetryError`, async () => {
      const thrower = () => {
        throw value;
      };
      const clock = virtualClock(99);
      const error = await errorOf(
        retry(thrower, {
          clock,
          backoff: constant({ delayMs: 1, maxAttempts: 2, jitter: noJitter }),
          isFailure: () => true,
        }),
        clock,
      );
      expect(error).toBeInstanceOf(RetryError);
      expect((error as Error).message).toMatch(message);
      expect((error as RetryError).cause).toBe(value);
      let syncError: unknown;
      try {
        retrySync(thrower, {
          clock: { now: () => 0, sleepSync: () => {} },
          backoff: constant({ delayMs: 1, maxAttempts: 2, jitter: noJitter }),
          isFailure: () => true,
        });
      } catch (e) {
        syncError = e;
      }
      expect(syncError).toBeInstanceOf(RetryError);
      expect((syncError as Error).message).toMatch(message);
    });
  }

  it('the default classifier reads hostile values without throwing (they are retried)', async () => {
    for (const [, value] of unprintable) {
      const clock = virtualClock(3);
      const error = await errorOf(
        retry(
          () => {
            throw value;
          },
          { clock, backoff: constant({ delayMs: 1, maxAttempts: 2, jitter: noJitter }) },
        ),
        clock,
      );
      expect(error).toMatchObject({ name: 'RetryError', attempts: 2 });
    }
  });

  it('describeThrown: Name: message, else String(), else the type', () => {
    expect(describeThrown(new TypeError('t'))).toBe('TypeError: t');
    expect(describeThrown({ name: 'N', message: 'm' })).toBe('N: m');
    expect(describeThrown('text')).toBe('text');
    expect(describeThrown(undefined)).toBe('undefined');
    expect(describeThrown(Object.create(null))).toBe('an unprintable object');
  });
});

describe('a hostile policy, Random and Clock beside 1,000 ordinary retries: only their own operations fail', () => {
  it('every ordinary retry settles correctly and on time; the hostile ones reject with named errors', async () => {
    const clock = virtualClock(1_000_000);
    const t0 = clock.now();
    const ordinary: Promise<{ value: number; at: number }>[] = [];
    for (let i = 0; i < 1_000; i++) {
      // Operation i fails (i % 4) times; waits 10, 20, 40 ms (exponential, no jitter).
      const failures = i % 4;
      ordinary.push(
        retry(
          ({ attempt }) => {
            if (attempt <= failures) throw new Error(`op ${i} attempt ${attempt}`);
            return i;
          },
          { clock, backoff: exponential({ initialDelayMs: 10, maxAttempts: 4, jitter: noJitter }) },
        ).then((value) => ({ value, at: clock.now() - t0 })),
      );
    }
    const hostilePolicy = retry(alwaysFail, { clock, backoff: policy([10, Number.NaN]) });
    const hostileRandom = retry(alwaysFail, {
      clock,
      backoff: exponential({ initialDelayMs: 10, maxAttempts: 4, jitter: fullJitter }),
      random: () => -0.5,
    });
    let reads = 0;
    const hostileClock = retry(alwaysFail, {
      clock: { now: () => (++reads > 2 ? Number.NaN : clock.now()), sleep: (ms, s) => clock.sleep(ms, s) },
      backoff: constant({ delayMs: 10, maxAttempts: 4, jitter: noJitter }),
    });
    const hostile = [hostilePolicy, hostileRandom, hostileClock].map((p) =>
      p.then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    await clock.runAll(100_000);
    const results = await Promise.all(ordinary);
    const expectedAt = [0, 10, 30, 70];
    results.forEach((r, i) => {
      expect(r.value).toBe(i);
      expect(r.at).toBe(expectedAt[i % 4]);
    });
    const [policyError, randomError, clockError] = await Promise.all(hostile);
    expect((policyError as Error).message).toMatch(/^backoff\.next\(\) returned NaN/);
    // A negative draw reaches the executor as a negative delay (`backoff.next() returned -5`), or,
    // where the policy checks its draws itself, as its own error (`random() returned -0.5`):
    // either way a RangeError naming the bad value.
    expect(randomError).toBeInstanceOf(RangeError);
    expect((randomError as Error).message).toMatch(/returned -(0\.)?5\b/);
    expect((clockError as Error).message).toBe('clock.now() returned NaN; expected a finite number of milliseconds.');
    expect(clock.pending).toBe(0);
  });
});
