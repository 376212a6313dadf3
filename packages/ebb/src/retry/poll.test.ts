import { describe, expect, it, vi } from 'vitest';
import { constant } from '../backoff/constant.js';
import { exponential } from '../backoff/exponential.js';
import { noJitter } from '../backoff/jitter-none.js';
import { presets } from '../backoff/presets.js';
import { virtualClock } from '../core/virtual-clock.js';
import type { RetryError } from './errors.js';
import type { AttemptContext } from './options.js';
import { NotDoneError, type PollResult, poll } from './poll.js';

async function settle<T>(p: Promise<T>, clock: ReturnType<typeof virtualClock>) {
  const outcome = p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  await clock.runAll();
  return outcome;
}

describe('poll', () => {
  it("runs the AWS sample's loop: 100 ms before the first check, then 200, 400, 800 ms", async () => {
    const clock = virtualClock();
    const times: number[] = [];
    let n = 0;
    const check = (): PollResult<string> => {
      times.push(clock.now());
      return ++n < 4 ? { done: false } : { done: true, value: 'SUCCESS' };
    };
    const out = await settle(poll(check, { clock, backoff: presets.awsPolling, initialDelayMs: 100 }), clock);
    expect(out).toEqual({ value: 'SUCCESS' });
    expect(times).toEqual([100, 300, 700, 1_500]);
  });

  it('initialDelayMs defaults to 0', async () => {
    const clock = virtualClock();
    const out = await settle(
      poll(() => ({ done: true, value: clock.now() }), { clock }),
      clock,
    );
    expect(out).toEqual({ value: 0 });
  });

  it('gives up when the policy runs out while the work is still not done, with NotDoneError as cause', async () => {
    const clock = virtualClock();
    const check = vi.fn((): PollResult<never> => ({ done: false }));
    const out = await settle(
      poll(check, { clock, backoff: constant({ delayMs: 10, maxAttempts: 4, jitter: noJitter }) }),
      clock,
    );
    expect(check).toHaveBeenCalledTimes(4);
    const error = (out as { error: RetryError }).error;
    expect(error).toMatchObject({ reason: 'attempts', attempts: 4 });
    expect(error.cause).toBeInstanceOf(NotDoneError);
    expect((error.cause as NotDoneError).attempt).toBe(4);
  });

  it('thrown errors go through isFailure: throttling continues, other errors stop', async () => {
    const clock = virtualClock();
    const throttled = Object.assign(new Error('THROTTLED'), { code: 'Throttling' });
    const fatal = Object.assign(new Error('ValidationError'), { code: 'Validation' });
    const results: Array<() => PollResult<string>> = [
      () => ({ done: false }),
      () => {
        throw throttled;
      },
      () => {
        throw fatal;
      },
      () => ({ done: true, value: 'never' }),
    ];
    let i = 0;
    const isFailure = vi.fn((o: { error?: unknown }) => (o.error as { code?: string }).code === 'Throttling');
    const out = await settle(
      poll(() => (results[i++] as () => PollResult<string>)(), { clock, isFailure }),
      clock,
    );
    expect(out).toEqual({ error: fatal });
    expect(i).toBe(3);
    // NotDone results never reach the user's classifier.
    expect(isFailure.mock.calls.map(([o]) => o)).toEqual([
      { ok: false, error: throttled },
      { ok: false, error: fatal },
    ]);
  });

  it('honours abort, including during the initial wait', async () => {
    const clock = virtualClock();
    const controller = new AbortController();
    const check = vi.fn((): PollResult<number> => ({ done: false }));
    const p = poll(check, { clock, signal: controller.signal, initialDelayMs: 1_000 });
    await clock.advance(500);
    controller.abort(new Error('cancel'));
    await expect(p).rejects.toThrow('cancel');
    expect(check).not.toHaveBeenCalled();
    expect(clock.pending).toBe(0);
  });

  it('honours abort during a check that never settles and during a backoff wait: rejects at once, no check after it', async () => {
    const clock = virtualClock();
    const hung = new AbortController();
    const signals: AbortSignal[] = [];
    const stuck = poll(
      ({ signal }) => {
        signals.push(signal);
        return new Promise<PollResult<number>>(() => {});
      },
      { clock, signal: hung.signal },
    ).catch((error: unknown) => error);
    await clock.advance(10);
    const reason = new Error('cancel the check');
    hung.abort(reason);
    expect(await stuck).toBe(reason);
    expect(signals.map((s) => s.aborted)).toEqual([true]);

    const waiting = new AbortController();
    const check = vi.fn((): PollResult<number> => ({ done: false }));
    const p = poll(check, {
      clock,
      signal: waiting.signal,
      backoff: constant({ delayMs: 60_000, maxAttempts: 5, jitter: noJitter }),
    }).catch((error: unknown) => error);
    await clock.advance(1_000);
    expect(check).toHaveBeenCalledTimes(1);
    waiting.abort(new Error('cancel the wait'));
    expect(await p).toMatchObject({ message: 'cancel the wait' });
    await clock.runAll();
    expect(check).toHaveBeenCalledTimes(1);
    expect(clock.pending).toBe(0);
  });

  it('honours the time budget and server hints like retry()', async () => {
    const clock = virtualClock();
    const out = await settle(
      poll(() => ({ done: false }), {
        clock,
        backoff: exponential({ initialDelayMs: 100, maxElapsedMs: 1_000, jitter: noJitter }),
      }),
      clock,
    );
    expect((out as { error: RetryError }).error.reason).toBe('elapsed');
    const clock2 = virtualClock();
    const seen: number[] = [];
    const hinted = Object.assign(new Error('busy'), { retryAfterMs: 5_000 });
    await settle(
      poll(
        (c: AttemptContext) => {
          seen.push(clock2.now());
          if (c.attempt === 1) throw hinted;
          return { done: true, value: 1 };
        },
        { clock: clock2 },
      ),
      clock2,
    );
    expect(seen).toEqual([0, 5_000]);
  });

  it('rejects a check result of the wrong shape and bad options', async () => {
    const clock = virtualClock();
    const out = await settle(
      poll(() => 'yes' as never, { clock }),
      clock,
    );
    expect((out as { error: Error }).error.message).toMatch(
      /must return \{ done: true, value \} or \{ done: false \}, got string/,
    );
    await expect(poll(() => ({ done: false }), { initialDelayMs: -1 })).rejects.toThrow(/`initialDelayMs`/);
    await expect(poll(null as never)).rejects.toThrow(/`check` to be a function/);
  });
});

describe('poll, exactly', () => {
  it('an already-aborted signal rejects with its reason before anything runs: no check, no budget request, no wait', async () => {
    const clock = virtualClock();
    const check = vi.fn((): PollResult<number> => ({ done: true, value: 1 }));
    const recordRequest = vi.fn();
    const reason = new Error('already');
    for (const initialDelayMs of [0, 100]) {
      await expect(
        poll(check, {
          clock,
          signal: AbortSignal.abort(reason),
          initialDelayMs,
          budget: { recordRequest, tryAcquireRetry: () => true, recordSuccess: () => {} },
        }),
      ).rejects.toBe(reason);
    }
    expect(check).not.toHaveBeenCalled();
    expect(recordRequest).not.toHaveBeenCalled();
    expect(clock.pending).toBe(0);
  });

  it('counts elapsed time from before the initial wait, and passes the attempt context to isFailure', async () => {
    const clock = virtualClock(1_000);
    const elapsed: number[] = [];
    const contexts: number[] = [];
    const out = await settle(
      poll(
        (c) => {
          elapsed.push(c.elapsedMs);
          if (c.attempt === 1) throw new Error('busy');
          return { done: true, value: c.attempt };
        },
        {
          clock,
          initialDelayMs: 30,
          backoff: constant({ delayMs: 7, maxAttempts: 3, jitter: noJitter }),
          isFailure: (_o, c) => {
            contexts.push(c.attempt);
            return true;
          },
        },
      ),
      clock,
    );
    expect(out).toEqual({ value: 2 });
    expect(elapsed).toEqual([30, 37]);
    expect(contexts).toEqual([1]);
  });

  it('without isFailure, a thrown error continues but a bug in the check (TypeError) is final', async () => {
    const clock = virtualClock();
    let calls = 0;
    const out = await settle(
      poll(
        (c) => {
          calls++;
          if (c.attempt === 1) throw new Error('transient');
          return (undefined as unknown as { x: PollResult<number> }).x;
        },
        { clock, backoff: constant({ delayMs: 1, maxAttempts: 5, jitter: noJitter }) },
      ),
      clock,
    );
    expect(calls).toBe(2);
    expect((out as { error: unknown }).error).toBeInstanceOf(TypeError);
  });

  it('rejects a result that is null, or whose done is not a boolean, naming what it got; the run gives up at once', async () => {
    for (const [result, shown] of [
      [null, 'null'],
      [{ done: 'yes' }, 'object'],
      [{}, 'object'],
      [undefined, 'undefined'],
    ] as const) {
      const clock = virtualClock();
      let calls = 0;
      const out = await settle(
        poll(
          () => {
            calls++;
            return result as never;
          },
          { clock },
        ),
        clock,
      );
      const error = (out as { error: Error }).error;
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toBe(
        `poll(): the check must return { done: true, value } or { done: false }, got ${shown}.`,
      );
      expect(calls).toBe(1);
    }
  });

  it('its own refusals, in full', async () => {
    await expect(poll(null as never)).rejects.toThrow(
      new TypeError('poll(): expected `check` to be a function, got null.'),
    );
    await expect(poll(5 as never)).rejects.toThrow('poll(): expected `check` to be a function, got number.');
    const error = await poll(() => ({ done: false }), { initialDelayMs: -1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RangeError);
    expect((error as Error).message).toBe(
      'poll(): expected `initialDelayMs` to be a finite number >= 0, got -1. Durations are milliseconds, such as 500.',
    );
    expect(new NotDoneError(3)).toMatchObject({
      name: 'NotDoneError',
      attempt: 3,
      message: 'check 3 reported not done',
    });
  });

  it('no initial wait: the first check starts at the call, without a sleep on the clock', async () => {
    const clock = virtualClock();
    const check = vi.fn((): PollResult<number> => ({ done: true, value: 1 }));
    const p = poll(check, { clock, initialDelayMs: 0 });
    expect(clock.pending).toBe(0);
    expect(check).toHaveBeenCalledTimes(1);
    expect(await p).toBe(1);
  });

  it('works without options: a check that is done at once resolves with its value, no wait on any clock', async () => {
    await expect(poll(() => ({ done: true, value: 'now' }))).resolves.toBe('now');
  });
});
