import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { virtualClock } from '../core/virtual-clock.js';
import { defaultRetryIf, isAbortError, stop } from './errors.js';
import { poll } from './poll.js';
import { retry } from './retry.js';
import { retrySync } from './retry-sync.js';

/** Calls of the operation before `retry` settles, on a virtual clock, with `thrown` as every failure. */
async function callsFor(thrown: () => unknown, retryIf?: (e: unknown) => boolean): Promise<number> {
  const clock = virtualClock(777);
  let calls = 0;
  const p = retry(
    () => {
      calls++;
      throw thrown();
    },
    { clock, backoff: constant({ delayMs: 10, maxAttempts: 4 }), ...(retryIf ? { retryIf } : {}) },
  ).catch(() => undefined);
  await clock.runAll();
  await p;
  return calls;
}

const fetchFailed = () =>
  Object.assign(new TypeError('fetch failed'), {
    cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
  });

describe('the default retryIf treats errors from the caller’s own code as final', () => {
  it('retry(async () => undefined.x) makes one call and rejects with the TypeError itself', async () => {
    const clock = virtualClock(1_000);
    let calls = 0;
    const p = retry(
      async () => {
        calls++;
        const missing = undefined as unknown as { x: number };
        return missing.x;
      },
      { clock },
    );
    const outcome = p.catch((e: unknown) => e);
    await clock.runAll();
    const error = await outcome;
    expect(error).toBeInstanceOf(TypeError);
    expect(error).not.toHaveProperty('reason');
    expect(calls).toBe(1);
  });

  it('TypeError, ReferenceError, SyntaxError, RangeError (and their subclasses) are final; others retried', async () => {
    class MyTypeError extends TypeError {}
    for (const make of [
      () => new TypeError('t'),
      () => new ReferenceError('r'),
      () => new SyntaxError('s'),
      () => new RangeError('g'),
      () => new MyTypeError('sub'),
    ]) {
      expect(defaultRetryIf(make())).toBe(false);
      expect(await callsFor(make)).toBe(1);
    }
    for (const make of [
      () => new Error('e'),
      () => new EvalError('e'),
      () => new URIError('u'),
      () => Object.assign(new Error('x'), { name: 'TypeError' }), // a name alone does not make a bug
      () => 'a string',
      () => undefined,
      () => 42,
    ]) {
      expect(defaultRetryIf(make())).toBe(true);
      expect(await callsFor(make)).toBe(4);
    }
  });

  it('a network TypeError (fetch failed, browser messages, Deno) is still retried', async () => {
    for (const make of [
      fetchFailed,
      () => new TypeError('Failed to fetch'),
      () => new TypeError('NetworkError when attempting to fetch resource.'),
      () => new TypeError('Load failed'),
      () => new TypeError('error sending request for url (http://x/)'),
    ]) {
      expect(defaultRetryIf(make())).toBe(true);
      expect(await callsFor(make)).toBe(4);
    }
  });

  it('aborts are final; a TypeError whose cause chain throws on reading is final (not a network error)', async () => {
    const abort = Object.assign(new Error('aborted'), { name: 'AbortError' });
    expect(defaultRetryIf(abort)).toBe(false);
    const hostile = new TypeError('x');
    Object.defineProperty(hostile, 'cause', {
      get() {
        throw new Error('getter');
      },
    });
    expect(defaultRetryIf(hostile)).toBe(false);
  });

  it('opting back in: retryIf: (e) => !isAbortError(e) retries programming errors again; poll and retrySync share the default', async () => {
    expect(
      await callsFor(
        () => new TypeError('t'),
        (e) => !isAbortError(e),
      ),
    ).toBe(4);
    let calls = 0;
    expect(() =>
      retrySync(
        () => {
          calls++;
          throw new ReferenceError('nope');
        },
        { clock: { now: () => 0, sleepSync: () => {} } },
      ),
    ).toThrow(ReferenceError);
    expect(calls).toBe(1);
    const clock = virtualClock(5);
    let checks = 0;
    const p = poll(
      () => {
        checks++;
        throw new SyntaxError('bad JSON handling');
      },
      { clock },
    ).catch((e: unknown) => e);
    await clock.runAll();
    expect(await p).toBeInstanceOf(SyntaxError);
    expect(checks).toBe(1);
  });

  it('poll: a check that throws stop(error) ends at once with that error, whatever retryIf says', async () => {
    const clock = virtualClock(5);
    const own = new Error('job failed for good');
    let checks = 0;
    const p = poll(
      ({ attempt }) => {
        checks++;
        if (attempt === 1) return { done: false };
        throw stop(own);
      },
      { clock, retryIf: () => true },
    ).catch((e: unknown) => e);
    await clock.runAll();
    expect(await p).toBe(own);
    expect(checks).toBe(2);
  });
});
