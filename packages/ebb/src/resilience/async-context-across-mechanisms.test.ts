import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { adaptiveRate } from '../rate/adaptive-rate.js';
import type { AttemptContext } from '../retry/contexts.js';
import type { Mechanism } from '../retry/mechanism.js';
import { pipeline } from '../retry/pipeline.js';
import { retrying } from '../retry/retrying.js';
import { timeout } from '../retry/timeout.js';
import { aimd } from './aimd.js';
import { bulkhead } from './bulkhead.js';
import { concurrencyLimit } from './concurrency-limit.js';
import { hedging } from './hedging.js';

// Request-scoped state (AsyncLocalStorage, OpenTelemetry's context) must follow each call through
// every mechanism that makes it wait: a queue's slot handed over by another call's release, a
// hedge started by a timer another call armed, a retry after an attempt's timeout, a paced grant.
// Each case runs ten concurrent calls, each in its own store, on real timers of a few ms; every
// attempt records the store it sees.
const als = new AsyncLocalStorage<number>();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const always = { tryAcquireRetry: () => true, recordSuccess() {} };

async function storesSeen(
  chain: () => ReadonlyArray<Mechanism>,
  operation: (c: AttemptContext, id: number) => Promise<number>,
): Promise<{ results: number[]; attempts: number; wrong: Array<[number, number | undefined]> }> {
  const api = pipeline(chain() as Mechanism[]);
  const wrong: Array<[number, number | undefined]> = [];
  let attempts = 0;
  const results = await Promise.all(
    Array.from({ length: 10 }, (_, id) =>
      als.run(id, () =>
        api.execute((c: AttemptContext) => {
          attempts++;
          if (als.getStore() !== id) wrong.push([id, als.getStore()]);
          return operation(c, id);
        }),
      ),
    ),
  );
  return { results: results as number[], attempts, wrong };
}

const ids = Array.from({ length: 10 }, (_, id) => id);

describe('async context through the mechanisms that make a call wait', () => {
  it('concurrencyLimit: a queued call handed a slot by another call’s release runs in its own context', async () => {
    const r = await storesSeen(
      () => [concurrencyLimit({ algorithm: aimd({ initialLimit: 1, minLimit: 1, maxLimit: 1 }), maxQueue: 10 })],
      (_c, id) => sleep(2).then(() => id),
    );
    expect(r.results).toEqual(ids);
    expect(r.attempts).toBe(10);
    expect(r.wrong).toEqual([]);
  });

  it('bulkhead: a queued call runs in its own context', async () => {
    const r = await storesSeen(
      () => [bulkhead({ maxConcurrent: 1, maxQueue: 10 })],
      (_c, id) => sleep(2).then(() => id),
    );
    expect(r.results).toEqual(ids);
    expect(r.wrong).toEqual([]);
  });

  it('hedging: a hedge started by the shared timer runs in its own call’s context', async () => {
    const r = await storesSeen(
      () => [hedging({ delayMs: 2, budget: always })],
      (c, id) => sleep(c.attempt === 1 ? 30 : 1).then(() => id),
    );
    expect(r.results).toEqual(ids);
    expect(r.attempts).toBe(20);
    expect(r.wrong).toEqual([]);
  });

  it('timeout inside retrying: the retry after a timed-out attempt runs in its own context', async () => {
    const r = await storesSeen(
      () => [retrying({ backoff: constant({ delayMs: 1, maxAttempts: 3, jitter: noJitter }) }), timeout(5)],
      (c, id) => (c.attempt === 1 ? sleep(50) : Promise.resolve()).then(() => id),
    );
    expect(r.results).toEqual(ids);
    expect(r.attempts).toBe(20);
    expect(r.wrong).toEqual([]);
  });

  it('adaptiveRate: a call paced behind the others runs in its own context', async () => {
    const r = await storesSeen(
      () => [adaptiveRate({ initialRatePerSecond: 500 })],
      (_c, id) => Promise.resolve(id),
    );
    expect(r.results).toEqual(ids);
    expect(r.wrong).toEqual([]);
  });
});
