import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { virtualClock } from '../core/virtual-clock.js';
import { guard } from './guard.js';
import type { Outcome, RateController } from './options.js';
import { pipeline } from './pipeline.js';
import { retrying } from './retrying.js';

/** What a pipeline hands a guard's `record`: the outcome, the ticket, and what the attempt ended with. */
function recorder() {
  const calls: [Outcome, unknown, unknown][] = [];
  let n = 0;
  const rate: RateController = {
    acquire: () => `t${++n}`,
    record: (outcome, ticket, detail) => {
      calls.push([outcome, ticket, detail]);
    },
  };
  return { rate, calls };
}

describe("a guard's record() gets what the attempt ended with", () => {
  it('the error of each failure and the value of the success, the very objects, in order', async () => {
    const { rate, calls } = recorder();
    const clock = virtualClock();
    const throttle = Object.assign(new Error('429'), { throttled: true });
    const plain = new Error('500');
    const value = { headers: 'the response' };
    const outcomes = [throttle, plain, value];
    let i = 0;
    const p = pipeline([
      retrying({ backoff: constant({ delayMs: 10, maxAttempts: 5, jitter: noJitter }), clock }),
      guard(rate),
    ]).execute(() => {
      const next = outcomes[i++];
      if (next instanceof Error) throw next;
      return next;
    });
    await clock.runAll();
    expect(await p).toBe(value);
    expect(calls).toEqual([
      ['throttled', 't1', throttle],
      ['failure', 't2', plain],
      ['success', 't3', value],
    ]);
    expect(calls[2]?.[2]).toBe(value);
  });

  it('an async success hands over the resolved value, not the promise', async () => {
    const { rate, calls } = recorder();
    const value = new Map([['k', 1]]);
    expect(await pipeline([retrying(), guard(rate)]).execute(async () => value)).toBe(value);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.[2]).toBe(value);
  });
});
