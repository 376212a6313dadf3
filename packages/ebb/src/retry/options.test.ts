import { describe, expect, it } from 'vitest';
import type { BackoffPolicy } from '../backoff/backoff.js';
import { constant } from '../backoff/constant.js';
import { exponential } from '../backoff/exponential.js';
import { noJitter } from '../backoff/jitter-none.js';
import { virtualClock } from '../core/virtual-clock.js';
import { poll } from './poll.js';
import { retry } from './retry.js';
import { retrySync } from './retry-sync.js';

/**
 * Every refusal of the executor's options, message and class exact: a message is the caller's
 * only guide to the fix, so each part of it (option, expected, value, fix) is specified here.
 */
const policy = (extra: object = {}): BackoffPolicy =>
  ({ maxElapsedMs: Infinity, start: () => ({ next: () => -1 }), ...extra }) as unknown as BackoffPolicy;
const noop = () => {};
const syncClock = { now: () => 0, sleepSync: noop };

async function rejection(options: unknown): Promise<Error> {
  try {
    await retry(() => 1, options as Parameters<typeof retry>[1]);
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

function syncThrow(options: unknown): Error {
  try {
    retrySync(() => 1, options as Parameters<typeof retrySync>[1]);
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

const ALL_KEYS =
  'backoff, isFailure, maxRetryAfterMs, onRetry, onFailedAttempt, onGiveUp, onSuccess, clock, random, signal, unref, budget';
const SYNC_KEYS = 'backoff, isFailure, maxRetryAfterMs, onRetry, onFailedAttempt, onGiveUp, onSuccess, clock, random';
const BACKOFF_FIX = 'Build one with exponential() or take one from presets.';

describe('retry() options: every refusal, exactly', () => {
  const cases: [string, unknown, ErrorConstructor, string][] = [
    [
      'backoff: a number',
      { backoff: 5 },
      TypeError,
      `retry(): expected \`backoff\` to be an object with start(), got 5. ${BACKOFF_FIX}`,
    ],
    [
      'backoff: null',
      { backoff: null },
      TypeError,
      `retry(): expected \`backoff\` to be an object with start(), got null. ${BACKOFF_FIX}`,
    ],
    [
      'backoff: start is not a function',
      { backoff: { start: 1, maxElapsedMs: Infinity } },
      TypeError,
      `retry(): expected \`backoff\` to be an object with start(), got an object. ${BACKOFF_FIX}`,
    ],
    [
      'backoff: a function carrying start()',
      { backoff: Object.assign(() => {}, { start: () => ({ next: () => -1 }), maxElapsedMs: Infinity }) },
      TypeError,
      `retry(): expected \`backoff\` to be an object with start(), got a function. ${BACKOFF_FIX}`,
    ],
    [
      'a custom policy with maxElapsedMs NaN',
      { backoff: policy({ maxElapsedMs: Number.NaN }) },
      RangeError,
      'retry(): expected `backoff.maxElapsedMs` to be a number >= 0 (or Infinity for no limit), got NaN. A policy without a time budget has maxElapsedMs: Infinity.',
    ],
    [
      'a custom policy without maxElapsedMs',
      { backoff: { start: () => ({ next: () => -1 }) } },
      TypeError,
      'retry(): expected `backoff.maxElapsedMs` to be a number >= 0 (or Infinity for no limit), got undefined. A policy without a time budget has maxElapsedMs: Infinity.',
    ],
    ['isFailure: 5', { isFailure: 5 }, TypeError, 'retry(): expected `isFailure` to be a function, got 5.'],
    ['onRetry', { onRetry: 'x' }, TypeError, 'retry(): expected `onRetry` to be a function, got "x".'],
    [
      'onFailedAttempt',
      { onFailedAttempt: {} },
      TypeError,
      'retry(): expected `onFailedAttempt` to be a function, got an object.',
    ],
    ['onGiveUp', { onGiveUp: 1 }, TypeError, 'retry(): expected `onGiveUp` to be a function, got 1.'],
    ['onSuccess', { onSuccess: null }, TypeError, 'retry(): expected `onSuccess` to be a function, got null.'],
    [
      'signal: a plain object',
      { signal: {} },
      TypeError,
      'retry(): expected `signal` to be an object with addEventListener() and removeEventListener(), got an object. Pass controller.signal.',
    ],
    [
      'signal: no removeEventListener',
      { signal: { aborted: false, addEventListener: noop } },
      TypeError,
      'retry(): expected `signal` to be an object with addEventListener() and removeEventListener(), got an object. Pass controller.signal.',
    ],
    [
      'clock without sleep',
      { clock: { now: () => 0 } },
      TypeError,
      'retry(): expected `clock` to be an object with now() and sleep(), got an object.',
    ],
    ['random: 0.5', { random: 0.5 }, TypeError, 'retry(): expected `random` to be a function, got 0.5.'],
    ['unref: "yes"', { unref: 'yes' }, TypeError, 'retry(): expected `unref` to be a boolean, got "yes".'],
    [
      'unref with a clock',
      { unref: true, clock: virtualClock() },
      TypeError,
      'retry(): `unref` is for the system clock; a custom `clock` decides how it waits.',
    ],
    [
      'budget without recordSuccess',
      { budget: { tryAcquireRetry: () => true } },
      TypeError,
      'retry(): expected `budget` to be an object with tryAcquireRetry() and recordSuccess(), got an object.',
    ],
    [
      'maxRetryAfterMs: -1',
      { maxRetryAfterMs: -1 },
      RangeError,
      'retry(): expected `maxRetryAfterMs` to be a number >= 0 (or Infinity for no limit), got -1. For example 60000; Infinity always waits.',
    ],
    [
      'maxRetryAfterMs: NaN',
      { maxRetryAfterMs: Number.NaN },
      RangeError,
      'retry(): expected `maxRetryAfterMs` to be a number >= 0 (or Infinity for no limit), got NaN. For example 60000; Infinity always waits.',
    ],
    [
      'maxRetryAfterMs: a string',
      { maxRetryAfterMs: '5' },
      TypeError,
      'retry(): expected `maxRetryAfterMs` to be a number >= 0 (or Infinity for no limit), got "5". For example 60000; Infinity always waits.',
    ],
    [
      'an unknown option',
      { backof: 3 },
      TypeError,
      `retry(): unknown option \`backof\`. Did you mean \`backoff\`? Known options: ${ALL_KEYS}.`,
    ],
    [
      "poll()'s own option",
      { initialDelayMs: 5 },
      TypeError,
      `retry(): unknown option \`initialDelayMs\`. Known options: ${ALL_KEYS}.`,
    ],
    ['options: an array', [], TypeError, 'retry(): expected an options object, got an array.'],
    ['retryIf (moved)', { retryIf: () => true }, TypeError, 'retry(): `retryIf` moved; use `isFailure`.'],
    [
      'a policy where the options go (it would be read by its own keys)',
      exponential({ maxAttempts: 3 }),
      TypeError,
      'retry(): got a backoff policy where the options go. Pass { backoff: policy }.',
    ],
    [
      "p-retry's maxRetryTime: the time budget, not maxRetryAfterMs (the first four letters' guess)",
      { maxRetryTime: 1_000 },
      TypeError,
      "retry(): unknown option `maxRetryTime` (another library's); use `backoff: exponential({ maxElapsedMs })`.",
    ],
    [
      "p-retry's shouldRetry",
      { shouldRetry: () => true },
      TypeError,
      "retry(): unknown option `shouldRetry` (another library's); use `isFailure`, which judges errors and results.",
    ],
    [
      "ky's and got's retry, a count; exponential-backoff's and undici's, a callback",
      { retry: 3 },
      TypeError,
      "retry(): unknown option `retry` (another library's); use `backoff: exponential({ maxAttempts: n + 1 })` for a count n, `isFailure` for a callback.",
    ],
    [
      "exponential-backoff's numOfAttempts",
      { numOfAttempts: 3 },
      TypeError,
      "retry(): unknown option `numOfAttempts` (another library's); use `backoff: exponential({ maxAttempts })`.",
    ],
    [
      'rate (moved)',
      { rate: { acquire: noop, record: noop } },
      TypeError,
      'retry(): `rate` moved; use a pipeline: `pipeline([retrying(options), rate])`.',
    ],
  ];
  for (const [name, options, type, message] of cases) {
    it(name, async () => {
      const error = await rejection(options);
      expect(error).toBeInstanceOf(type);
      expect(error.message).toBe(message);
    });
  }

  it('accepts what each check admits: every option at its edge, unref false beside a clock', async () => {
    const clock = virtualClock(5);
    const signal = new AbortController().signal;
    const p = retry((c) => c.attempt, {
      backoff: constant({ delayMs: 1, maxAttempts: 2, jitter: noJitter }),
      isFailure: () => false,
      onRetry: noop,
      onFailedAttempt: noop,
      onGiveUp: noop,
      onSuccess: noop,
      signal,
      clock,
      random: () => 0,
      unref: false,
      budget: { tryAcquireRetry: () => true, recordSuccess: noop },
      maxRetryAfterMs: 0,
    });
    await clock.runAll();
    expect(await p).toBe(1);
  });
});

describe('retrySync() and poll() options', () => {
  it('retrySync() knows only the options that make sense without a promise', () => {
    for (const key of ['signal', 'unref', 'budget']) {
      const error = syncThrow({ clock: syncClock, [key]: undefined });
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toBe(`retrySync(): unknown option \`${key}\`. Known options: ${SYNC_KEYS}.`);
    }
  });

  it('retrySync() wants a SyncClock, not a Clock', () => {
    for (const clock of [virtualClock(), { sleepSync: noop }, null]) {
      const error = syncThrow({ clock });
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toMatch(
        /^retrySync\(\): expected `clock` to be an object with now\(\) and sleepSync\(\), got (an object|null)\.$/,
      );
    }
    expect(retrySync(() => 7, { clock: syncClock })).toBe(7);
  });

  it('poll() knows initialDelayMs besides the options of retry()', async () => {
    await expect(poll(() => ({ done: true, value: 1 }), { bogus: 1 } as never)).rejects.toThrow(
      `poll(): unknown option \`bogus\`. Known options: ${ALL_KEYS}, initialDelayMs.`,
    );
    const clock = virtualClock();
    const p = poll(() => ({ done: true, value: clock.now() }), { clock, initialDelayMs: 25 });
    await clock.runAll();
    expect(await p).toBe(25);
  });
});
