import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { poll } from './poll.js';
import { retry } from './retry.js';
import { retrySync } from './retry-sync.js';

const backoff = constant({ delayMs: 0, maxAttempts: 3 });
const fail = (): never => {
  throw new Error('down');
};
const BAD = [
  ['the string "false"', 'false'],
  ['NaN', Number.NaN],
  ['undefined', undefined],
  ['1', 1],
] as const;

describe('retryIf and a budget’s tryAcquireRetry answer true or false, or fail only their call', () => {
  it.each(BAD)(
    'retryIf returning %s: a TypeError naming retryIf (retry, poll, retrySync), after one attempt',
    async (_, value) => {
      const retryIf = () => value as unknown as boolean;
      let calls = 0;
      const counted = (): never => {
        calls++;
        return fail();
      };
      const named = /`retryIf` returned .*; expected true or false\./;
      await expect(retry(counted, { backoff, retryIf })).rejects.toThrow(named);
      await expect(poll(counted, { backoff, retryIf })).rejects.toThrow(named);
      expect(() => retrySync(counted, { backoff, retryIf })).toThrow(named);
      expect(calls).toBe(3);
    },
  );

  it('an async retryIf answering garbage fails the same way; retrySync refuses a promise and handles its rejection', async () => {
    await expect(retry(fail, { backoff, retryIf: async () => 'yes' as unknown as boolean })).rejects.toThrow(
      /`retryIf` returned "yes"/,
    );
    expect(() => retrySync(fail, { backoff, retryIf: (() => Promise.reject(new Error('async'))) as never })).toThrow(
      /must answer synchronously/,
    );
  });

  it.each(BAD)('tryAcquireRetry returning %s: a TypeError naming it (retry and poll)', async (_, value) => {
    const budget = { tryAcquireRetry: () => value as unknown as boolean, recordSuccess() {} };
    const named = /`budget\.tryAcquireRetry` returned .*; expected true or false\./;
    await expect(retry(fail, { backoff, budget })).rejects.toThrow(named);
    await expect(poll(fail, { backoff, budget })).rejects.toThrow(named);
  });
});
