import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { poll } from './poll.js';
import { retry } from './retry.js';

// Request-scoped state (AsyncLocalStorage, OpenTelemetry's context) must follow each call across
// its backoff waits. The default host queue fires every due wait from one host timer armed by one
// call; each attempt after a wait must still run in its own call's context, as must its hooks.
describe('async context across backoff waits (default host queue, real timers of a few ms)', () => {
  it('ten concurrent retry() calls: every attempt, onRetry and isFailure see their own call’s store', async () => {
    const als = new AsyncLocalStorage<number>();
    const seen: Array<[number, string, number | undefined]> = [];
    const calls = Array.from({ length: 10 }, (_, id) =>
      als.run(id, () => {
        let attempts = 0;
        return retry(
          () => {
            attempts++;
            seen.push([id, 'attempt', als.getStore()]);
            return attempts < 3 ? Promise.reject(new Error(`down ${id}`)) : id;
          },
          {
            backoff: constant({ delayMs: 2, maxAttempts: 3, jitter: noJitter }),
            isFailure: () => {
              seen.push([id, 'isFailure', als.getStore()]);
              return true;
            },
            onRetry: () => {
              seen.push([id, 'onRetry', als.getStore()]);
            },
          },
        );
      }),
    );
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 10 }, (_, id) => id));
    expect(seen.filter(([, what]) => what === 'attempt')).toHaveLength(30);
    expect(seen.filter(([, what]) => what === 'onRetry')).toHaveLength(20);
    expect(seen.filter(([id, , store]) => id !== store)).toEqual([]);
  });

  it('ten concurrent poll() calls: every check after a wait sees its own call’s store', async () => {
    const als = new AsyncLocalStorage<number>();
    const wrong: Array<[number, number | undefined]> = [];
    const calls = Array.from({ length: 10 }, (_, id) =>
      als.run(id, () => {
        let checks = 0;
        return poll(
          () => {
            checks++;
            if (als.getStore() !== id) wrong.push([id, als.getStore()]);
            return checks < 3 ? { done: false } : { done: true, value: id };
          },
          { backoff: constant({ delayMs: 2, maxAttempts: 5, jitter: noJitter }) },
        );
      }),
    );
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 10 }, (_, id) => id));
    expect(wrong).toEqual([]);
  });
});
