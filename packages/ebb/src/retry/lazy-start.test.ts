import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { exponential } from '../backoff/exponential.js';
import { noJitter } from '../backoff/jitter-none.js';
import { presets } from '../backoff/presets.js';
import { virtualClock } from '../core/virtual-clock.js';
import { RetryError } from './errors.js';
import { type AttemptContext, type Prepared, prepare, type RetryOptions } from './options.js';
import { execute } from './retry.js';

// When the executor reads the clock before attempt 1, and what elapsedMs counts from when it does
// not. On the system clock that choice cannot be watched from a test, so the executor runs here
// on a virtual clock whose readings are counted, with the choice forced either way.

/** A virtual clock counting its `now()` readings. */
function countingClock() {
  const clock = virtualClock(1_000);
  const counted = {
    reads: 0,
    now: () => {
      counted.reads++;
      return clock.now();
    },
    sleep: clock.sleep,
    clock,
  };
  return counted;
}

/** `prepare()` with a clock, then the start forced lazy or not. */
function prepared(options: RetryOptions, lazyStart: boolean): Prepared {
  const { timed: _, ...rest } = prepare('retry()', options);
  return lazyStart ? rest : { ...rest, timed: true };
}

/** Settles `p` while the clock runs every sleep. */
async function outcome<T>(p: Promise<T>, clock: { runAll(): Promise<void> }) {
  const settled = p.then(
    (value) => ({ value, error: undefined }),
    (error: unknown) => ({ value: undefined, error }),
  );
  await clock.runAll();
  return settled;
}

describe('which calls start without a clock reading', () => {
  const noop = () => {};
  const cases: [string, RetryOptions | undefined, boolean][] = [
    ['no options', undefined, true],
    ['empty options', {}, true],
    [
      'an exponential({ jitter: noJitter }) policy',
      { backoff: exponential({ initialDelayMs: 10, maxAttempts: 3, jitter: noJitter }) },
      true,
    ],
    ['isFailure', { isFailure: () => true }, true],
    ['maxRetryAfterMs', { maxRetryAfterMs: 5 }, true],
    ['unref (still the system clock)', { unref: true }, true],
    [
      'a time budget',
      { backoff: constant({ delayMs: 1, maxAttempts: 3, maxElapsedMs: 100, jitter: noJitter }) },
      false,
    ],
    ['a preset with a time budget (SIP)', { backoff: presets.sip }, false],
    ["Google's policy (its run reads the elapsed time)", { backoff: presets.googleHttpClient }, false],
    ["AWS's standard mode (its own run)", { backoff: presets.awsStandard }, false],
    ['a custom policy', { backoff: { maxElapsedMs: Infinity, start: () => ({ next: () => -1 }) } }, false],
    ['onRetry', { onRetry: noop }, false],
    ['onFailedAttempt', { onFailedAttempt: noop }, false],
    ['onGiveUp', { onGiveUp: noop }, false],
    ['onSuccess', { onSuccess: noop }, false],
    ['a custom clock', { clock: virtualClock() }, false],
    ['a signal', { signal: new AbortController().signal }, false],
    ['a budget', { budget: { tryAcquireRetry: () => true, recordSuccess: noop } }, false],
  ];
  it.each(cases)('%s → lazy start %s', (_, options, lazy) => {
    expect(prepare('retry()', options).timed === true).toBe(!lazy);
  });
});

describe('the executor with a lazy start', () => {
  it('a success reads no clock; without the lazy start, exactly one reading', async () => {
    for (const [lazy, reads] of [
      [true, 0],
      [false, 1],
    ] as const) {
      const c = countingClock();
      const value = await execute(() => Promise.resolve(7), prepared({ clock: c }, lazy));
      expect(value).toBe(7);
      expect(c.reads).toBe(reads);
      // With isFailure the run needs the state machine from attempt 1 (a value may fail), and
      // still starts its clock lazily.
      const judged = countingClock();
      const isFailure = (o: { ok: boolean }) => !o.ok;
      expect(await execute(() => Promise.resolve(8), prepared({ clock: judged, isFailure }, lazy))).toBe(8);
      if (lazy) expect(judged.reads).toBe(0);
      else expect(judged.reads).toBeGreaterThan(0);
    }
  });

  it('an operation that throws at once also starts its clock at the failure', async () => {
    const c = countingClock();
    const seen: number[] = [];
    const op = (ctx: AttemptContext) => {
      seen.push(ctx.elapsedMs);
      if (ctx.attempt === 1) throw new Error('first');
      return ctx.attempt;
    };
    const result = await outcome(
      execute(op, prepared({ clock: c, backoff: constant({ delayMs: 40, maxAttempts: 3, jitter: noJitter }) }, true)),
      c.clock,
    );
    expect(result.value).toBe(2);
    expect(seen).toEqual([0, 40]);
  });

  // Attempt k takes durations[k - 1] ms of virtual time and fails, except the last, which
  // succeeds; constant waits of `delay` ms between them.
  async function run(durations: readonly number[], delay: number, lazy: boolean) {
    const c = countingClock();
    const seen: number[] = [];
    const op = async (ctx: AttemptContext) => {
      seen.push(ctx.elapsedMs);
      await c.clock.sleep(durations[ctx.attempt - 1] as number);
      if (ctx.attempt < durations.length) throw new Error(`attempt ${ctx.attempt}`);
      return 'done';
    };
    const backoff = constant({ delayMs: delay, maxAttempts: durations.length, jitter: noJitter });
    return { seen, result: await outcome(execute(op, prepared({ clock: c, backoff }, lazy)), c.clock) };
  }

  it('elapsedMs counts from the start when read before attempt 1, from its failure when lazy', async () => {
    // Attempt 1 takes 30 ms, attempt 2 takes 5 ms, waits of 100 ms.
    expect((await run([30, 5, 0], 100, false)).seen).toEqual([0, 130, 235]);
    expect((await run([30, 5, 0], 100, true)).seen).toEqual([0, 100, 205]);
  });

  it('property: the lazy start leaves out exactly attempt 1’s duration, nothing else', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 1_000 }), { minLength: 2, maxLength: 6 }),
        fc.integer({ min: 0, max: 1_000 }),
        async (durations, delay) => {
          const exact = await run(durations, delay, false);
          const lazy = await run(durations, delay, true);
          expect(exact.result.value).toBe('done');
          expect(lazy.result.value).toBe('done');
          const first = durations[0] as number;
          expect(lazy.seen).toEqual(exact.seen.map((ms, i) => (i === 0 ? 0 : ms - first)));
        },
      ),
      { numRuns: 50 },
    );
  });

  it('RetryError.elapsedMs after a lazy start counts from attempt 1’s failure', async () => {
    const c = countingClock();
    const op = async () => {
      await c.clock.sleep(25);
      throw new Error('down');
    };
    const backoff = constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter });
    const { error } = await outcome(execute(op, prepared({ clock: c, backoff }, true)), c.clock);
    expect(error).toBeInstanceOf(RetryError);
    // Three attempts of 25 ms and two waits of 10 ms: 95 ms in all, the first 25 left out.
    expect(error).toMatchObject({ reason: 'attempts', attempts: 3, elapsedMs: 70 });
    // The message does not pass 70 ms off as the whole run's time.
    expect((error as Error).message).toMatch(
      /^Gave up after 3 attempts, 70 ms after attempt 1 failed: maxAttempts \(3\) reached\./,
    );
  });

  it('RetryError read before attempt 1: the whole run, and the message says "in"', async () => {
    const c = countingClock();
    const op = async () => {
      await c.clock.sleep(25);
      throw new Error('down');
    };
    const backoff = constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter });
    const { error } = await outcome(execute(op, prepared({ clock: c, backoff }, false)), c.clock);
    expect(error).toMatchObject({ reason: 'attempts', attempts: 3, elapsedMs: 95 });
    expect((error as Error).message).toMatch(/^Gave up after 3 attempts in 95 ms: maxAttempts \(3\) reached\./);
  });
});
