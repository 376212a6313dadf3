import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { virtualClock } from '../core/virtual-clock.js';
import { defaultIsFailure, isAbortError, type Result, stop } from './errors.js';
import { pipeline } from './pipeline.js';
import { poll } from './poll.js';
import { retry } from './retry.js';
import { retrySync } from './retry-sync.js';
import { retrying } from './retrying.js';

/** The default's answer for a thrown `error`. */
const defaultRetryIf = (error: unknown) => defaultIsFailure({ ok: false, error }) !== false;

/** Calls of the operation before `retry` settles, on a virtual clock, with `thrown` as every failure. */
async function callsFor(thrown: () => unknown, isFailure?: (o: Result) => boolean): Promise<number> {
  const clock = virtualClock(777);
  let calls = 0;
  const p = retry(
    () => {
      calls++;
      throw thrown();
    },
    {
      clock,
      backoff: constant({ delayMs: 10, maxAttempts: 4, jitter: noJitter }),
      ...(isFailure ? { isFailure } : {}),
    },
  ).catch(() => undefined);
  await clock.runAll();
  await p;
  return calls;
}

const fetchFailed = () =>
  Object.assign(new TypeError('fetch failed'), {
    cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
  });

describe('defaultIsFailure: errors from the caller’s own code are no failure (final), values never are', () => {
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

  it('a network TypeError (fetch failed or terminated in Node.js, browser messages, Deno) is still retried', async () => {
    for (const make of [
      fetchFailed,
      () => new TypeError('terminated'),
      () => new TypeError('Failed to fetch'),
      () => new TypeError('NetworkError when attempting to fetch resource.'),
      () => new TypeError('The Internet connection appears to be offline.'),
      () => new TypeError('Load failed'),
      () => new TypeError('Network request failed'),
      () => new TypeError('error sending request for url (http://x/)'),
    ]) {
      expect(defaultRetryIf(make())).toBe(true);
      expect(await callsFor(make)).toBe(4);
    }
    // The message must be the whole message (Deno's: its start); a bug that merely mentions fetch is final.
    for (const message of [
      'fetch failed!',
      "Cannot read properties of undefined (reading 'fetch')",
      'sending request for url',
    ]) {
      expect(defaultRetryIf(new TypeError(message))).toBe(false);
    }
  });

  it('aborts are final; a TypeError whose message getter throws is final (not a network error), without a throw', async () => {
    const abort = Object.assign(new Error('aborted'), { name: 'AbortError' });
    expect(defaultRetryIf(abort)).toBe(false);
    const hostile = new TypeError('x');
    Object.defineProperty(hostile, 'message', {
      get() {
        throw new Error('getter');
      },
    });
    expect(defaultRetryIf(hostile)).toBe(false);
  });

  it("values are never failures; an error with throttled: true is 'throttled'", () => {
    expect(defaultIsFailure({ ok: true, value: { status: 503 } })).toBe(false);
    expect(defaultIsFailure({ ok: true, value: undefined })).toBe(false);
    expect(defaultIsFailure({ ok: false, error: Object.assign(new Error('429'), { throttled: true }) })).toBe(
      'throttled',
    );
    expect(defaultIsFailure({ ok: false, error: Object.assign(new Error('x'), { throttled: 'yes' }) })).toBe(true);
    expect(defaultIsFailure({ ok: false, error: new Error('x') })).toBe(true);
  });

  it('opting back in: isFailure: (o) => !o.ok && !isAbortError(o.error) retries programming errors again; poll and retrySync share the default', async () => {
    expect(
      await callsFor(
        () => new TypeError('t'),
        (o) => !o.ok && !isAbortError(o.error),
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

  it('poll: a check that throws stop(error) ends at once with that error, whatever isFailure says', async () => {
    const clock = virtualClock(5);
    const own = new Error('job failed for good');
    let checks = 0;
    const p = poll(
      ({ attempt }) => {
        checks++;
        if (attempt === 1) return { done: false };
        throw stop(own);
      },
      { clock, isFailure: () => true },
    ).catch((e: unknown) => e);
    await clock.runAll();
    expect(await p).toBe(own);
    expect(checks).toBe(2);
  });

  it('a stop(error) returned instead of thrown ends the run at once with that error, as a thrown one does', async () => {
    const clock = virtualClock(5);
    const own = new Error('no such item');
    const seen: string[] = [];
    let calls = 0;
    const p = retry(
      async () => {
        calls++;
        return stop(own);
      },
      {
        clock,
        isFailure: () => true,
        onFailedAttempt: ({ next, error }) => void seen.push(`${next}:${error === own}`),
      },
    ).catch((e: unknown) => e);
    await clock.runAll();
    expect(await p).toBe(own);
    expect(calls).toBe(1);
    expect(seen).toEqual(['final:true']);
    let syncCalls = 0;
    expect(() =>
      retrySync(
        () => {
          syncCalls++;
          return stop(own);
        },
        { isFailure: () => true },
      ),
    ).toThrow(own);
    expect(syncCalls).toBe(1);
    let piped = 0;
    const q = pipeline([retrying({ clock, isFailure: () => true })])
      .execute(async () => {
        piped++;
        return stop(own);
      })
      .catch((e: unknown) => e);
    await clock.runAll();
    expect(await q).toBe(own);
    expect(piped).toBe(1);
  });
});
