import { describe, expect, it } from 'vitest';
import type { BackoffPolicy } from '../backoff/backoff.js';
import { constant } from '../backoff/constant.js';
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
  'backoff, retries, retryIf, maxRetryAfterMs, onRetry, onFailedAttempt, onGiveUp, onSuccess, clock, random, signal, attemptTimeoutMs, unref, rate, budget';
const SYNC_KEYS =
  'backoff, retries, retryIf, maxRetryAfterMs, onRetry, onFailedAttempt, onGiveUp, onSuccess, clock, random';

describe('retry() options: every refusal, exactly', () => {
  const cases: [string, unknown, ErrorConstructor, string][] = [
    [
      'backoff: a number',
      { backoff: 5 },
      RangeError,
      'retry(): expected `backoff` to be a backoff policy, got 5. Build one with exponential() or take one from presets.',
    ],
    [
      'backoff: null',
      { backoff: null },
      TypeError,
      'retry(): expected `backoff` to be a backoff policy, got null. Build one with exponential() or take one from presets.',
    ],
    [
      'backoff: start is not a function',
      { backoff: { start: 1, maxElapsedMs: Infinity } },
      TypeError,
      'retry(): expected `backoff` to be a backoff policy, got an object. Build one with exponential() or take one from presets.',
    ],
    [
      'backoff: a function carrying start()',
      { backoff: Object.assign(() => {}, { start: () => ({ next: () => -1 }), maxElapsedMs: Infinity }) },
      TypeError,
      'retry(): expected `backoff` to be a backoff policy, got a function. Build one with exponential() or take one from presets.',
    ],
    [
      'rate: a function carrying acquire() and record()',
      { rate: Object.assign(() => {}, { acquire: noop, record: noop }) },
      TypeError,
      'retry(): expected `rate` to be a rate controller { acquire(), record() }, got a function.',
    ],
    [
      'retries: -1',
      { retries: -1 },
      RangeError,
      'retry(): expected `retries` to be a whole number >= 0 (or Infinity), got -1. For example 3: one call and up to three retries.',
    ],
    [
      'retries on a custom policy',
      { retries: 2, backoff: policy() },
      TypeError,
      'retry(): `retries` sets the attempt limit of a Backoff value (withOptions()); this custom policy has none. Stop in its next() (return -1) instead.',
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
    [
      'retryIf: 5',
      { retryIf: 5 },
      RangeError,
      'retry(): expected `retryIf` to be a function (error, context) => boolean, got 5.',
    ],
    [
      'onRetry',
      { onRetry: 'x' },
      TypeError,
      'retry(): expected `onRetry` to be a function (context) => void, got "x".',
    ],
    [
      'onFailedAttempt',
      { onFailedAttempt: {} },
      TypeError,
      'retry(): expected `onFailedAttempt` to be a function (context) => void, got an object.',
    ],
    [
      'onGiveUp',
      { onGiveUp: 1 },
      RangeError,
      'retry(): expected `onGiveUp` to be a function (context) => void, got 1.',
    ],
    [
      'onSuccess',
      { onSuccess: null },
      TypeError,
      'retry(): expected `onSuccess` to be a function (context) => void, got null.',
    ],
    [
      'signal: a plain object',
      { signal: {} },
      TypeError,
      'retry(): expected `signal` to be an AbortSignal, got an object. Pass controller.signal.',
    ],
    [
      'signal: listeners but no aborted',
      { signal: { addEventListener: noop, removeEventListener: noop } },
      TypeError,
      'retry(): expected `signal` to be an AbortSignal, got an object. Pass controller.signal.',
    ],
    [
      'signal: no removeEventListener',
      { signal: { aborted: false, addEventListener: noop } },
      TypeError,
      'retry(): expected `signal` to be an AbortSignal, got an object. Pass controller.signal.',
    ],
    [
      'clock without sleep',
      { clock: { now: () => 0 } },
      TypeError,
      'retry(): expected `clock` to be a Clock { now(), sleep(ms, signal) }, got an object.',
    ],
    [
      'random: 0.5',
      { random: 0.5 },
      RangeError,
      'retry(): expected `random` to be a function returning a number in [0, 1), got 0.5.',
    ],
    ['unref: "yes"', { unref: 'yes' }, TypeError, 'retry(): expected `unref` to be a boolean, got "yes".'],
    [
      'unref with a clock',
      { unref: true, clock: virtualClock() },
      TypeError,
      'retry(): `unref` applies to the system clock; with a custom `clock`, the clock decides how it waits.',
    ],
    [
      'rate without record',
      { rate: { acquire: noop } },
      TypeError,
      'retry(): expected `rate` to be a rate controller { acquire(), record() }, got an object.',
    ],
    [
      'rate: null',
      { rate: null },
      TypeError,
      'retry(): expected `rate` to be a rate controller { acquire(), record() }, got null.',
    ],
    [
      'budget without recordSuccess',
      { budget: { tryAcquireRetry: () => true } },
      TypeError,
      'retry(): expected `budget` to be a retry budget { tryAcquireRetry(), recordSuccess() }, got an object.',
    ],
    [
      'attemptTimeoutMs: -1',
      { attemptTimeoutMs: -1 },
      RangeError,
      'retry(): expected `attemptTimeoutMs` to be a number >= 0 (or Infinity for no limit), got -1. For example 5000 for five seconds.',
    ],
    [
      'attemptTimeoutMs: 0',
      { attemptTimeoutMs: 0 },
      RangeError,
      'retry(): expected `attemptTimeoutMs` to be a number > 0, got 0. Leave it out for no limit.',
    ],
    [
      'maxRetryAfterMs: -1',
      { maxRetryAfterMs: -1 },
      RangeError,
      'retry(): expected `maxRetryAfterMs` to be a number >= 0 (or Infinity for no limit), got -1. For example 60000; Infinity always waits.',
    ],
    [
      'an unknown option',
      { retry: 3 },
      TypeError,
      `retry(): unknown option \`retry\`. Did you mean \`retries\`? Known options: ${ALL_KEYS}.`,
    ],
    [
      "poll()'s own option",
      { initialDelayMs: 5 },
      TypeError,
      `retry(): unknown option \`initialDelayMs\`. Known options: ${ALL_KEYS}.`,
    ],
    ['options: an array', [], TypeError, 'retry(): expected an options object, got an array.'],
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
      backoff: constant({ delayMs: 1, maxAttempts: 2 }),
      retries: 0,
      retryIf: () => true,
      onRetry: noop,
      onFailedAttempt: noop,
      onGiveUp: noop,
      onSuccess: noop,
      signal,
      clock,
      random: () => 0,
      unref: false,
      rate: { acquire: noop, record: noop },
      budget: { tryAcquireRetry: () => true, recordSuccess: noop },
      attemptTimeoutMs: Infinity,
      maxRetryAfterMs: 0,
    });
    await clock.runAll();
    expect(await p).toBe(1);
  });
});

describe('retrySync() and poll() options', () => {
  it('retrySync() knows only the options that make sense without a promise', () => {
    for (const key of ['signal', 'attemptTimeoutMs', 'unref', 'rate', 'budget']) {
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
        /^retrySync\(\): expected `clock` to be a SyncClock \{ now\(\), sleepSync\(ms\) \}, got (an object|null)\.$/,
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
