import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import type { FailureVerdict } from './errors.js';
import { fallback } from './fallback.js';
import { pipeline } from './pipeline.js';
import { poll } from './poll.js';
import { retry } from './retry.js';
import { retrySync } from './retry-sync.js';
import { retrying } from './retrying.js';

const backoff = constant({ delayMs: 0, maxAttempts: 3, jitter: noJitter });
const fail = (): never => {
  throw new Error('down');
};
const BAD = [
  ['"false"', 'false'],
  ['"true"', 'true'],
  ['NaN', Number.NaN],
  ['undefined', undefined],
  ['1', 1],
  ['an object', { throttled: true }],
] as const;
const named = /`isFailure` returned .*; expected true, false or 'throttled'\./;

describe("isFailure answers true, false or 'throttled', and a budget's tryAcquireRetry true or false; anything else fails only their call", () => {
  it.each(BAD)(
    'isFailure returning %s on an error: a TypeError naming isFailure (retry, poll, retrySync, retrying), after one attempt',
    async (_, value) => {
      const isFailure = () => value as unknown as FailureVerdict;
      let calls = 0;
      const counted = (): never => {
        calls++;
        return fail();
      };
      await expect(retry(counted, { backoff, isFailure })).rejects.toThrow(named);
      await expect(poll(counted, { backoff, isFailure })).rejects.toThrow(named);
      expect(() => retrySync(counted, { backoff, isFailure: isFailure as () => FailureVerdict })).toThrow(named);
      await expect(pipeline([retrying({ backoff, isFailure })]).execute(counted)).rejects.toThrow(named);
      expect(calls).toBe(4);
    },
  );

  it.each(BAD)(
    'isFailure returning %s on a value: the same TypeError, never the value as a success',
    async (_, value) => {
      const isFailure = () => value as unknown as FailureVerdict;
      let calls = 0;
      const counted = () => ++calls;
      await expect(retry(counted, { backoff, isFailure })).rejects.toThrow(named);
      expect(() => retrySync(counted, { backoff, isFailure })).toThrow(named);
      await expect(pipeline([retrying({ backoff, isFailure })]).execute(counted)).rejects.toThrow(named);
      expect(calls).toBe(3);
    },
  );

  it.each(BAD)(
    "fallback's isFailure returning %s: the call fails with a TypeError naming fallback() and isFailure",
    async (_, value) => {
      const isFailure = () => value as unknown as FailureVerdict;
      const message = /^fallback\(\): `isFailure` returned .*; expected true, false or 'throttled'\.$/;
      await expect(pipeline([fallback('spare', { isFailure })]).execute(fail)).rejects.toThrow(message);
      await expect(pipeline([fallback('spare', { isFailure })]).execute(() => 'value')).rejects.toThrow(message);
      await expect(
        pipeline([fallback('spare', { isFailure: async () => value as unknown as FailureVerdict })]).execute(fail),
      ).rejects.toThrow(message);
    },
  );

  it("'throttled' is a failure like true: retried to the policy's end, on errors and on values", async () => {
    let calls = 0;
    const error = await retry(
      () => {
        calls++;
        return fail();
      },
      { backoff, isFailure: () => 'throttled' },
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'RetryError', reason: 'attempts', attempts: 3 });
    calls = 0;
    expect(await retry(() => ++calls, { backoff, isFailure: () => 'throttled' })).toBe(3);
    calls = 0;
    expect(retrySync(() => ++calls, { backoff, isFailure: () => 'throttled' })).toBe(3);
    expect(await pipeline([fallback('spare', { isFailure: () => 'throttled' })]).execute(() => 'value')).toBe('spare');
  });

  it('an async isFailure answering garbage fails the same way; retrySync refuses a promise and handles its rejection', async () => {
    await expect(retry(fail, { backoff, isFailure: async () => 'yes' as unknown as boolean })).rejects.toThrow(
      /`isFailure` returned "yes"/,
    );
    expect(() => retrySync(fail, { backoff, isFailure: (() => Promise.reject(new Error('async'))) as never })).toThrow(
      /must answer synchronously/,
    );
  });

  it.each(BAD)('tryAcquireRetry returning %s: a TypeError naming it (retry, poll, retrying)', async (_, value) => {
    const budget = { tryAcquireRetry: () => value as unknown as boolean, recordSuccess() {} };
    const budgetNamed = /`budget\.tryAcquireRetry` returned .*; expected true or false\./;
    await expect(retry(fail, { backoff, budget })).rejects.toThrow(budgetNamed);
    await expect(poll(fail, { backoff, budget })).rejects.toThrow(budgetNamed);
    await expect(pipeline([retrying({ backoff, budget })]).execute(fail)).rejects.toThrow(budgetNamed);
  });
});
