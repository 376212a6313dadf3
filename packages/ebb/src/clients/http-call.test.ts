import { describe, expect, it } from 'vitest';
import { exponential } from '../backoff/exponential.js';
import { noJitter } from '../backoff/jitter-none.js';
import { virtualClock } from '../core/virtual-clock.js';
import type { Result } from '../retry/errors.js';
import { type CallRequest, type ClientRetryOptions, httpCaller, type ResponseHead } from './http-call.js';

/*
 * The core every client integration shares, on virtual time: which requests are repeated, what
 * the caller gets when the retries end, and that each option is read.
 */

interface Reply {
  readonly status: number;
  readonly headers?: Record<string, string>;
}
const head = (o: Result<Reply>): ResponseHead | undefined =>
  o.ok ? { status: o.value.status, headers: o.value.headers ?? {} } : undefined;

function setup(options: ClientRetryOptions = {}) {
  const clock = virtualClock();
  const caller = httpCaller('test()', {
    backoff: exponential({ initialDelayMs: 10, jitter: noJitter, maxAttempts: 4 }),
    budget: false,
    clock,
    ...options,
  });
  const run = async (request: Partial<CallRequest>, replies: (Reply | Error)[]) => {
    let sent = 0;
    const discarded: Reply[] = [];
    const p = caller.call(
      { method: 'GET', url: 'http://x.example/', hasIdempotencyKey: false, body: undefined, ...request },
      async () => {
        const r = replies[Math.min(sent++, replies.length - 1)] as Reply | Error;
        if (r instanceof Error) throw r;
        return r;
      },
      head,
      (o) => {
        if (o.ok) discarded.push(o.value);
      },
    );
    const settled = p.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    await clock.runAll();
    return { ...(await settled), sent: () => sent, discarded };
  };
  return run;
}

const refused = (): Error => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
const reset = (): Error => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

describe('httpCaller', () => {
  it('retries a failed response to the success, and frees each retried response exactly once', async () => {
    const r = await setup()({}, [{ status: 503 }, { status: 502 }, { status: 200 }]);
    expect(r).toMatchObject({ value: { status: 200 } });
    expect(r.sent()).toBe(3);
    expect(r.discarded.map((x) => x.status)).toEqual([503, 502]);
  });

  it("when the retries end on a failed response, that response is the result (the client's own outcome)", async () => {
    const r = await setup()({}, [{ status: 503 }]);
    expect(r).toMatchObject({ value: { status: 503 } });
    expect(r.sent()).toBe(4);
    expect(r.discarded.length).toBe(3);
  });

  it('when the retries end on an error, that error itself is thrown, not wrapped', async () => {
    const e = reset();
    const r = await setup()({}, [e]);
    expect(r).toMatchObject({ error: e });
    expect(r.sent()).toBe(4);
  });

  it('an error no predicate calls a failure passes at once, unchanged', async () => {
    const e = new TypeError('bad input');
    const r = await setup()({}, [e, { status: 200 }]);
    expect(r).toMatchObject({ error: e });
    expect(r.sent()).toBe(1);
  });

  it('a POST is sent once, unless it has an Idempotency-Key or never left (connection refused)', async () => {
    const run = setup();
    expect((await run({ method: 'POST', body: 'b' }, [{ status: 503 }, { status: 200 }])).sent()).toBe(1);
    expect(
      (await run({ method: 'POST', body: 'b', hasIdempotencyKey: true }, [{ status: 503 }, { status: 200 }])).sent(),
    ).toBe(2);
    const r = await run({ method: 'POST', body: 'b' }, [refused(), { status: 200 }]);
    expect(r).toMatchObject({ value: { status: 200 } });
    expect(r.sent()).toBe(2);
    expect((await run({ method: 'POST', body: 'b' }, [reset(), { status: 200 }])).sent()).toBe(1);
  });

  it('a stream body is sent once, whatever the method and even when it never left', async () => {
    async function* stream() {
      yield 'x';
    }
    const run = setup();
    expect((await run({ method: 'PUT', body: stream() }, [{ status: 503 }, { status: 200 }])).sent()).toBe(1);
    expect((await run({ method: 'PUT', body: stream() }, [refused(), { status: 200 }])).sent()).toBe(1);
  });

  it('`methods` decides which methods are repeated', async () => {
    expect((await setup()({ method: 'PUT' }, [{ status: 503 }, { status: 200 }])).sent()).toBe(2);
    expect((await setup({ methods: ['GET'] })({ method: 'PUT' }, [{ status: 503 }, { status: 200 }])).sent()).toBe(1);
    expect((await setup({ methods: ['post'] })({ method: 'POST' }, [{ status: 503 }, { status: 200 }])).sent()).toBe(2);
  });

  it('`isFailure` decides which responses are failures', async () => {
    const isFailure = (o: Result): boolean => o.ok && (o.value as Response).status === 404;
    const r = await setup({ isFailure })({}, [{ status: 404 }, { status: 200 }]);
    expect(r.sent()).toBe(2);
    expect((await setup({ isFailure })({}, [{ status: 503 }, { status: 200 }])).sent()).toBe(1);
  });

  it('a Retry-After above `maxRetryAfterMs` ends the retries with that response', async () => {
    const run = setup({ maxRetryAfterMs: 5_000 });
    const r = await run({}, [{ status: 503, headers: { 'retry-after': '10' } }, { status: 200 }]);
    expect(r).toMatchObject({ value: { status: 503 } });
    expect(r.sent()).toBe(1);
    expect((await run({}, [{ status: 503, headers: { 'retry-after': '4' } }, { status: 200 }])).sent()).toBe(2);
  });

  it('refuses bad options at once, naming them', () => {
    expect(() => httpCaller('test()', { isFailure: 5 } as never)).toThrow(/`isFailure`/);
    expect(() => httpCaller('test()', { methods: ['G ET'] })).toThrow(/`methods`/);
    expect(() => httpCaller('test()', { use: {} } as never)).toThrow(/`use`/);
    expect(() => httpCaller('test()', { signal: AbortSignal.abort() } as never)).toThrow(/`signal` is per request/);
    expect(() => httpCaller('test()', { retries: 3 } as never)).toThrow(/retries/);
  });
});

describe('the adapters’ options', () => {
  it('an unknown option lists what an adapter takes: methods and use among them, signal not (it is per request)', () => {
    const known =
      'backoff, isFailure, maxRetryAfterMs, onRetry, onFailedAttempt, onGiveUp, onSuccess, clock, random, unref, budget, methods, use';
    expect(() => httpCaller('withRetryGot()', { limit: 2 } as never)).toThrow(
      new TypeError(`withRetryGot(): unknown option \`limit\`. Known options: ${known}.`),
    );
    expect(() => httpCaller('withRetryGot()', { methods: ['GET'], use: [] })).not.toThrow();
  });
});
