import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { exponential } from '../backoff/exponential.js';
import { noJitter } from '../backoff/jitter-none.js';
import { refQueue } from '../core/timer-queue.js';
import { virtualClock } from '../core/virtual-clock.js';
import { withRetry } from '../http/with-retry.js';
import { FinalError, RetryError, stop } from './errors.js';
import type { RetryOptions } from './options.js';
import { poll } from './poll.js';
import { retry } from './retry.js';
import { retrySync } from './retry-sync.js';
import { trackHostTimers } from './test-helpers.js';

/** Options whose every hook appends `[name, context]` to `log` (the clock starts at 5,000, not 0). */
function recorded(extra: RetryOptions = {}) {
  const clock = virtualClock(5_000);
  const log: [string, unknown][] = [];
  const options: RetryOptions = {
    clock,
    backoff: exponential({ initialDelayMs: 100, maxAttempts: 3, jitter: noJitter }),
    onFailedAttempt: (c) => {
      log.push(['onFailedAttempt', { ...c }]);
    },
    onRetry: (c) => {
      log.push(['onRetry', { ...c }]);
    },
    onGiveUp: (c) => {
      log.push(['onGiveUp', { ...c }]);
    },
    onSuccess: (c) => {
      log.push(['onSuccess', { ...c }]);
    },
    ...extra,
  };
  return { clock, log, options };
}

async function outcome<T>(p: Promise<T>, clock: { runAll(): Promise<void> }) {
  const settled = p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  await clock.runAll();
  return settled;
}

const e1 = new Error('1');
const e2 = new Error('2');
const e3 = new Error('3');

describe('hooks: order and arguments', () => {
  it('success at once: onSuccess only', async () => {
    const { clock, log, options } = recorded();
    expect(
      await outcome(
        retry(() => 'v', options),
        clock,
      ),
    ).toEqual({ value: 'v' });
    expect(log).toEqual([['onSuccess', { attempt: 1, elapsedMs: 0, value: 'v' }]]);
  });

  it('success after retries: onFailedAttempt then onRetry for each failure, then onSuccess', async () => {
    const { clock, log, options } = recorded();
    const errors = [e1, e2];
    const result = await outcome(
      retry(({ attempt }) => (attempt < 3 ? Promise.reject(errors[attempt - 1]) : 'v3'), options),
      clock,
    );
    expect(result).toEqual({ value: 'v3' });
    expect(log).toEqual([
      ['onFailedAttempt', { attempt: 1, error: e1, elapsedMs: 0, next: 'retry', delayMs: 100, reason: undefined }],
      ['onRetry', { attempt: 1, error: e1, delayMs: 100, elapsedMs: 0 }],
      ['onFailedAttempt', { attempt: 2, error: e2, elapsedMs: 100, next: 'retry', delayMs: 200, reason: undefined }],
      ['onRetry', { attempt: 2, error: e2, delayMs: 200, elapsedMs: 100 }],
      ['onSuccess', { attempt: 3, elapsedMs: 300, value: 'v3' }],
    ]);
  });

  it('give-up: onFailedAttempt on the last failure too (next: give-up), then onGiveUp, then RetryError', async () => {
    const { clock, log, options } = recorded();
    const errors = [e1, e2, e3];
    const { error } = (await outcome(
      retry(({ attempt }) => Promise.reject(errors[attempt - 1]), options),
      clock,
    )) as { error: RetryError };
    expect(error).toBeInstanceOf(RetryError);
    expect(error).toMatchObject({ reason: 'attempts', attempts: 3, cause: e3 });
    expect(log.map(([name]) => name)).toEqual([
      'onFailedAttempt',
      'onRetry',
      'onFailedAttempt',
      'onRetry',
      'onFailedAttempt',
      'onGiveUp',
    ]);
    expect(log[4]).toEqual([
      'onFailedAttempt',
      { attempt: 3, error: e3, elapsedMs: 300, next: 'give-up', delayMs: undefined, reason: 'attempts' },
    ]);
    expect(log[5]).toEqual(['onGiveUp', { attempts: 3, error: e3, elapsedMs: 300, reason: 'attempts' }]);
  });

  it('an error that is no failure (isFailure false): next final, onGiveUp reason final, the error itself', async () => {
    const { clock, log, options } = recorded({ isFailure: (o) => o.error !== e2 });
    const errors = [e1, e2];
    const result = await outcome(
      retry(({ attempt }) => Promise.reject(errors[attempt - 1]), options),
      clock,
    );
    expect(result).toEqual({ error: e2 });
    expect(log.slice(2)).toEqual([
      [
        'onFailedAttempt',
        { attempt: 2, error: e2, elapsedMs: 100, next: 'final', delayMs: undefined, reason: undefined },
      ],
      ['onGiveUp', { attempts: 2, error: e2, elapsedMs: 100, reason: 'final' }],
    ]);
  });

  it('FinalError / stop(): ends at once with the wrapped error, isFailure not asked', async () => {
    for (const wrap of [(e: unknown) => new FinalError(e), stop]) {
      let asked = 0;
      const { clock, log, options } = recorded({
        isFailure: () => {
          asked++;
          return true;
        },
      });
      const result = await outcome(
        retry(({ attempt }) => {
          if (attempt === 1) throw e1;
          throw wrap(e2);
        }, options),
        clock,
      );
      expect(result).toEqual({ error: e2 });
      expect(asked).toBe(1);
      expect(log.slice(2)).toEqual([
        [
          'onFailedAttempt',
          { attempt: 2, error: e2, elapsedMs: 100, next: 'final', delayMs: undefined, reason: undefined },
        ],
        ['onGiveUp', { attempts: 2, error: e2, elapsedMs: 100, reason: 'final' }],
      ]);
    }
    const wrapped = new FinalError('text');
    expect(wrapped).toMatchObject({ name: 'FinalError', code: 'EBB_FINAL', cause: 'text', message: 'final: text' });
  });

  it('abort: no hook fires for it; the caller receives signal.reason', async () => {
    const controller = new AbortController();
    const { clock, log, options } = recorded({ signal: controller.signal });
    const p = retry(() => Promise.reject(e1), options);
    const settled = p.then(
      () => 'resolved',
      (e: unknown) => e,
    );
    await clock.advance(50); // attempt 1 failed; waiting 100 ms
    controller.abort(new Error('stop now'));
    expect(await settled).toMatchObject({ message: 'stop now' });
    expect(log.map(([name]) => name)).toEqual(['onFailedAttempt', 'onRetry']);
    expect(clock.pending).toBe(0);
  });

  it('an attempt that fails past the deadline: onFailedAttempt (give-up, elapsed), onGiveUp', async () => {
    const { clock, log, options } = recorded({
      backoff: constant({ delayMs: 10, maxElapsedMs: 50, jitter: noJitter }),
    });
    const { error } = (await outcome(
      retry(({ signal }) => clock.sleep(1_000, signal).then(() => Promise.reject(e1)), options),
      clock,
    )) as { error: RetryError };
    expect(error).toMatchObject({ reason: 'elapsed', attempts: 1, elapsedMs: 1_000 });
    expect(log).toEqual([
      [
        'onFailedAttempt',
        expect.objectContaining({
          attempt: 1,
          elapsedMs: 1_000,
          next: 'give-up',
          reason: 'elapsed',
          delayMs: undefined,
        }),
      ],
      ['onGiveUp', expect.objectContaining({ attempts: 1, elapsedMs: 1_000, reason: 'elapsed' })],
    ]);
  });

  it('async hooks are awaited in order before the run goes on', async () => {
    const clock = virtualClock(1_000);
    const log: string[] = [];
    const slow = (name: string) => async () => {
      await clock.sleep(30);
      log.push(`${name} done at ${clock.now()}`);
    };
    const p = retry(({ attempt }) => (attempt === 1 ? Promise.reject(e1) : 'ok'), {
      clock,
      backoff: constant({ delayMs: 10, maxAttempts: 2, jitter: noJitter }),
      onFailedAttempt: slow('onFailedAttempt'),
      onRetry: slow('onRetry'),
      onSuccess: slow('onSuccess'),
    });
    expect(await outcome(p, clock)).toEqual({ value: 'ok' });
    expect(log).toEqual(['onFailedAttempt done at 1030', 'onRetry done at 1060', 'onSuccess done at 1100']);
  });
});

describe('hooks that throw or reject: the operation rejects with that error and leaves nothing behind', () => {
  const hookError = new Error('hook failed');
  const cases: [string, keyof RetryOptions, (op: number) => unknown][] = [
    ['onFailedAttempt', 'onFailedAttempt', (a) => (a === 1 ? Promise.reject(e1) : 'ok')],
    ['onRetry', 'onRetry', (a) => (a === 1 ? Promise.reject(e1) : 'ok')],
    ['onGiveUp', 'onGiveUp', () => Promise.reject(e1)],
    ['onSuccess', 'onSuccess', () => 'ok'],
  ];
  for (const [name, key, op] of cases) {
    for (const style of ['throws', 'rejects'] as const) {
      it(`${name} ${style}`, async () => {
        const clock = virtualClock(2_000);
        let calls = 0;
        const hook =
          style === 'throws'
            ? () => {
                throw hookError;
              }
            : () => Promise.reject(hookError);
        const p = retry(
          ({ attempt }) => {
            calls++;
            return op(attempt);
          },
          {
            clock,
            backoff: constant({ delayMs: 10, maxAttempts: 1 + (key === 'onGiveUp' ? 0 : 1), jitter: noJitter }),
            [key]: hook,
          },
        );
        expect(await outcome(p, clock)).toEqual({ error: hookError });
        expect(calls).toBe(1);
        expect(clock.pending).toBe(0);
      });
    }
  }

  it('on the system clock: a throwing onRetry leaves no queued wake-up and no host timer', async () => {
    const timers = trackHostTimers();
    try {
      const error = await retry(() => Promise.reject(e1), {
        backoff: constant({ delayMs: 10_000, maxAttempts: 2, jitter: noJitter }),
        onRetry: () => {
          throw hookError;
        },
      }).catch((e: unknown) => e);
      expect(error).toBe(hookError);
      expect(refQueue.size).toBe(0);
      expect(timers.live).toBe(0);
    } finally {
      timers.restore();
    }
  });
});

describe('retrySync and poll: the same hooks', () => {
  it('retrySync calls them in the same order with the same arguments', () => {
    let now = 0;
    const log: [string, unknown][] = [];
    const errors = [e1, e2, e3];
    const options = {
      clock: {
        now: () => now,
        sleepSync: (ms: number) => {
          now += ms;
        },
      },
      backoff: exponential({ initialDelayMs: 100, maxAttempts: 3, jitter: noJitter }),
      onFailedAttempt: (c: object) => log.push(['onFailedAttempt', { ...c }]),
      onRetry: (c: object) => log.push(['onRetry', { ...c }]),
      onGiveUp: (c: object) => log.push(['onGiveUp', { ...c }]),
      onSuccess: (c: object) => log.push(['onSuccess', { ...c }]),
    };
    expect(() =>
      retrySync(({ attempt }) => {
        throw errors[attempt - 1];
      }, options),
    ).toThrow(RetryError);
    expect(log).toEqual([
      ['onFailedAttempt', { attempt: 1, error: e1, elapsedMs: 0, next: 'retry', delayMs: 100, reason: undefined }],
      ['onRetry', { attempt: 1, error: e1, delayMs: 100, elapsedMs: 0 }],
      ['onFailedAttempt', { attempt: 2, error: e2, elapsedMs: 100, next: 'retry', delayMs: 200, reason: undefined }],
      ['onRetry', { attempt: 2, error: e2, delayMs: 200, elapsedMs: 100 }],
      [
        'onFailedAttempt',
        { attempt: 3, error: e3, elapsedMs: 300, next: 'give-up', delayMs: undefined, reason: 'attempts' },
      ],
      ['onGiveUp', { attempts: 3, error: e3, elapsedMs: 300, reason: 'attempts' }],
    ]);
    log.length = 0;
    expect(() =>
      retrySync(() => {
        throw stop(e2);
      }, options),
    ).toThrow(e2);
    expect(log.map(([n]) => n)).toEqual(['onFailedAttempt', 'onGiveUp']);
    log.length = 0;
    now = 0;
    expect(
      retrySync(
        ({ attempt }) =>
          attempt === 1
            ? (() => {
                throw e1;
              })()
            : 'v',
        options,
      ),
    ).toBe('v');
    expect(log.at(-1)).toEqual(['onSuccess', { attempt: 2, elapsedMs: 100, value: 'v' }]);
    const hookError = new Error('hook');
    expect(() =>
      retrySync(() => 'v', {
        onSuccess: () => {
          throw hookError;
        },
      }),
    ).toThrow(hookError);
  });

  it('poll: onFailedAttempt sees each not-done check, onSuccess the value', async () => {
    const clock = virtualClock(300);
    const log: string[] = [];
    const p = poll(({ attempt }) => (attempt < 3 ? { done: false } : { done: true, value: 'job' }), {
      clock,
      backoff: constant({ delayMs: 10, maxAttempts: 5, jitter: noJitter }),
      onFailedAttempt: (c) => {
        log.push(`${c.attempt}:${(c.error as Error).name}:${c.next}`);
      },
      onSuccess: (c) => {
        log.push(`ok:${c.attempt}:${String(c.value)}`);
      },
    });
    expect(await outcome(p, clock)).toEqual({ value: 'job' });
    expect(log).toEqual(['1:NotDoneError:retry', '2:NotDoneError:retry', 'ok:3:job']);
  });
});

describe('withRetry forwards the executor options', () => {
  it('the policy and the hooks reach the executor', async () => {
    const clock = virtualClock(40);
    let calls = 0;
    const networkError = () =>
      Object.assign(new TypeError('fetch failed'), {
        cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }),
      });
    const log: string[] = [];
    const fetchRetrying = withRetry(
      (_input: string) => {
        calls++;
        return Promise.reject(networkError());
      },
      {
        clock,
        backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter }),
        onFailedAttempt: (c) => {
          log.push(`${c.attempt}:${c.next}`);
        },
        onGiveUp: (c) => {
          log.push(`gave up:${c.reason}`);
        },
      },
    );
    const result = await outcome(fetchRetrying('http://127.0.0.1:9/'), clock);
    expect(calls).toBe(3);
    expect(result).toMatchObject({ error: { name: 'RetryError', reason: 'attempts', attempts: 3 } });
    expect(log).toEqual(['1:retry', '2:retry', '3:give-up', 'gave up:attempts']);
  });
});
