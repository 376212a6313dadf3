import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { constant } from '../backoff/constant.js';
import { exponential } from '../backoff/exponential.js';
import { fullJitter } from '../backoff/jitter-full.js';
import { noJitter } from '../backoff/jitter-none.js';
import { type VirtualClock, virtualClock } from '../core/virtual-clock.js';
import type { HedgeCallOptions, Hedging } from '../resilience/hedging.js';
import { RetryError } from '../retry/errors.js';
import { guard } from '../retry/guard.js';
import type { AttemptContext, Outcome } from '../retry/options.js';
import { retrying } from '../retry/retrying.js';
import { timeout } from '../retry/timeout.js';
import { aws } from './aws.js';
import { responseText } from './response-text.js';
import { serverHintMs } from './server-hint.js';
import { HttpStatusError } from './status-error.js';
import { type HttpRetryContext, type WithRetryOptions, withRetry } from './with-retry.js';

/*
 * Unit tests with a scripted fetch on a virtual clock: the rules, exactly, without sockets or
 * sleeping. test/http/ runs the same rules against real node:http servers.
 */

interface Call {
  readonly input: RequestInfo | URL;
  readonly init: RequestInit | undefined;
  readonly at: number;
}

/** A response whose body never ends on its own, so that a cancel is observable. */
function tracked(status: number, headers: Record<string, string> = {}) {
  const state = { cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new TextEncoder().encode(`status ${status}`));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { response: new Response(body, { status, headers }), state };
}

type Step = number | Response | Error | ((call: Call) => Response | Promise<Response>);

/** A fetch that answers from a script (a status, a Response, an Error to reject with, or a function). */
function scripted(clock: VirtualClock, steps: Step[]) {
  const calls: Call[] = [];
  const made: { response: Response; state: { cancelled: boolean } }[] = [];
  const fetchImpl = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const call = { input, init, at: clock.now() };
    calls.push(call);
    const step = steps[Math.min(calls.length - 1, steps.length - 1)] as Step;
    if (step instanceof Error) throw step;
    if (typeof step === 'function') return step(call);
    if (step instanceof Response) return step;
    const t = tracked(step);
    made.push(t);
    return t.response;
  };
  return { fetchImpl, calls, made };
}

/**
 * Runs one request through withRetry on the virtual clock until it settles; `options` may be
 * made from the clock (a `timeout()` in `use` waits on it too).
 */
async function run(
  steps: Step[],
  options: WithRetryOptions | ((clock: VirtualClock) => WithRetryOptions) = {},
  input: RequestInfo | URL = 'http://127.0.0.1/x',
  init?: RequestInit,
) {
  const clock = virtualClock();
  const s = scripted(clock, steps);
  const retries: HttpRetryContext[] = [];
  const f = withRetry(s.fetchImpl, {
    backoff: constant({ delayMs: 100, maxAttempts: 5, jitter: noJitter }),
    clock,
    onRetry: (c) => {
      retries.push(c);
    },
    ...(typeof options === 'function' ? options(clock) : options),
  });
  const settled = f(input, init).then(
    (response) => ({ response, error: undefined }),
    (error: unknown) => ({ response: undefined, error }),
  );
  await clock.runAll();
  return { ...(await settled), ...s, retries, clock };
}

const econn = (code: string) => new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });

describe('withRetry: statuses', () => {
  it('503, 503, 200 → the 200, after 3 calls, 100 ms apart; the two 503 bodies cancelled', async () => {
    const r = await run([503, 503, 200]);
    expect(r.response?.status).toBe(200);
    expect(r.calls.map((c) => c.at)).toEqual([0, 100, 200]);
    expect(r.made.map((m) => m.state.cancelled)).toEqual([true, true, false]);
    expect(r.retries.map((c) => [c.attempt, c.response?.status, c.delayMs])).toEqual([
      [1, 503, 100],
      [2, 503, 100],
    ]);
    expect(r.retries[0]?.error).toBeInstanceOf(HttpStatusError);
    expect(Object.isFrozen(r.retries[0])).toBe(true);
    expect(r.retries[0]?.method).toBe('GET');
    expect(r.retries[0]?.url).toBe('http://127.0.0.1/x');
  });

  it('when the attempts run out, returns the last response itself, unread, like fetch', async () => {
    const r = await run([503]);
    expect(r.calls).toHaveLength(5);
    expect(r.response?.status).toBe(503);
    expect(r.made.map((m) => m.state.cancelled)).toEqual([true, true, true, true, false]);
    expect(await r.response?.body?.getReader().read()).toEqual({
      done: false,
      value: new TextEncoder().encode('status 503'),
    });
  });

  it('never retries a 4xx other than 408 and 429, nor a 501', async () => {
    for (const status of [400, 401, 403, 404, 409, 422, 501]) {
      const r = await run([status, 200]);
      expect(r.calls, String(status)).toHaveLength(1);
      expect(r.response?.status).toBe(status);
      expect(r.made[0]?.state.cancelled).toBe(false);
    }
    expect((await run([408, 200])).calls).toHaveLength(2);
  });
});

describe('withRetry: executor options pass through', () => {
  it('random drives the jitter: with random() = 0.5, full-jitter waits are half of each window', async () => {
    const backoff = exponential({ initialDelayMs: 100, multiplier: 2, jitter: fullJitter, maxAttempts: 4 });
    const r = await run([503], { backoff, random: () => 0.5 });
    expect(r.retries.map((c) => c.delayMs)).toEqual([50, 100, 200]);
    expect(r.calls.map((c) => c.at)).toEqual([0, 50, 150, 350]);
  });

  it('unref: the waits between attempts do not hold the process (Node.js)', async () => {
    const handles: ReturnType<typeof setTimeout>[] = [];
    const real = globalThis.setTimeout;
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((callback: () => void, ms?: number) => {
      const handle = real(callback, ms);
      handles.push(handle);
      return handle;
    }) as typeof setTimeout);
    const controller = new AbortController();
    try {
      const unavailable: typeof fetch = async () => new Response(null, { status: 503 });
      const backoff = constant({ delayMs: 60_000, maxAttempts: 2, jitter: noJitter });
      const p = withRetry(unavailable, { unref: true, backoff })('http://127.0.0.1/x', {
        signal: controller.signal,
      }).catch((e: unknown) => e);
      for (let i = 0; i < 5 && handles.length === 0; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(handles.length).toBeGreaterThan(0);
      expect(handles.filter((h) => h.hasRef())).toEqual([]);
      controller.abort(new Error('stop'));
      expect(await p).toMatchObject({ message: 'stop' });
    } finally {
      spy.mockRestore();
    }
  });
});

describe('HttpStatusError', () => {
  it('says what failed, and carries the response, the hint and the throttle flag', () => {
    const response = new Response(null, { status: 503, statusText: 'Service Unavailable' });
    const e = new HttpStatusError(response, 'GET', 'http://127.0.0.1/x', 2000, false);
    expect(e.message).toBe('HTTP 503 Service Unavailable from GET http://127.0.0.1/x (server asked to wait 2000 ms)');
    expect(e).toMatchObject({ name: 'HttpStatusError', code: 'EBB_HTTP_STATUS', status: 503, retryAfterMs: 2000 });
    expect(e.response).toBe(response);
    expect(new HttpStatusError(new Response(null, { status: 429 }), 'PUT', 'u', undefined, true).message).toBe(
      'HTTP 429 from PUT u',
    );
  });
});

describe('withRetry: server hints', () => {
  const withHeaders = (status: number, headers: Record<string, string>) => () =>
    new Response('wait', { status, headers });

  it('429 with Retry-After: 1 → the next call 1000 ms later, not the 100 ms of the policy', async () => {
    const r = await run([withHeaders(429, { 'retry-after': '1' }), 200]);
    expect(r.calls.map((c) => c.at)).toEqual([0, 1000]);
    expect(r.retries[0]?.delayMs).toBe(1000);
    expect((r.retries[0] as HttpRetryContext).error).toMatchObject({ retryAfterMs: 1000 });
    expect(r.response?.status).toBe(200);
  });

  it('Retry-After: 86400 → gives up at once and returns the 429 (maxRetryAfterMs defaults to 60 s)', async () => {
    const r = await run([withHeaders(429, { 'retry-after': '86400' }), 200]);
    expect(r.calls).toHaveLength(1);
    expect(r.response?.status).toBe(429);
    expect(r.response?.headers.get('retry-after')).toBe('86400');
    expect(await r.response?.text()).toBe('wait');
    expect(r.retries).toHaveLength(0);
  });

  it('a Retry-After too long for a double (400 digits) gives up at once, as 10000000 does', async () => {
    for (const value of ['10000000', '9'.repeat(400)]) {
      const r = await run([withHeaders(503, { 'retry-after': value }), 200]);
      expect(r.calls, value).toHaveLength(1);
      expect(r.response?.status).toBe(503);
      expect(r.retries).toHaveLength(0);
    }
    // With no limit on hints, it is the longest wait ebb knows: finite, 2^53 − 1 ms.
    const waits: number[] = [];
    const clock = virtualClock();
    const s = scripted(clock, [withHeaders(503, { 'retry-after': '9'.repeat(400) }), 200]);
    const f = withRetry(s.fetchImpl, {
      backoff: constant({ delayMs: 100, maxAttempts: 5, jitter: noJitter }),
      clock,
      maxRetryAfterMs: Infinity,
      onRetry: (c) => {
        waits.push(c.delayMs);
      },
    });
    const controller = new AbortController();
    const done = f('http://127.0.0.1/x', { signal: controller.signal }).catch((error: unknown) => error);
    await clock.advance(1_000);
    expect(waits).toEqual([Number.MAX_SAFE_INTEGER]);
    controller.abort(new Error('enough'));
    expect(await done).toMatchObject({ message: 'enough' });
    expect(s.calls).toHaveLength(1);
  });

  it('maxRetryAfterMs is passed through: Infinity waits the whole day', async () => {
    const r = await run([withHeaders(429, { 'retry-after': '86400' }), 200], { maxRetryAfterMs: Infinity });
    expect(r.calls.map((c) => c.at)).toEqual([0, 86_400_000]);
  });

  it("an exhausted RateLimit policy's t is a hint only when asked (serverHintMs); a 503's Retry-After date counts", async () => {
    const limited = withHeaders(503, { ratelimit: '"default";r=0;t=3' });
    expect((await run([limited, 200])).calls.map((c) => c.at)).toEqual([0, 100]);
    expect((await run([limited, 200], { serverHintMs })).calls.map((c) => c.at)).toEqual([0, 3000]);
    const date = withHeaders(503, {
      date: 'Sun, 06 Nov 1994 08:49:37 GMT',
      'retry-after': 'Sun, 06 Nov 1994 08:49:39 GMT',
    });
    expect((await run([date, 200])).calls.map((c) => c.at)).toEqual([0, 2000]);
  });

  it('429 is throttled for the rate controller; 503 a failure; the end a success', async () => {
    const outcomes: Outcome[] = [];
    const rate = { acquire: () => {}, record: (o: Outcome) => outcomes.push(o) };
    await run([429, 503, 200], { use: [guard(rate)] });
    expect(outcomes).toEqual(['throttled', 'failure', 'success']);
  });

  it("a predicate's 'throttled' answer sets throttled: true (AWS ThrottlingException)", async () => {
    const outcomes: Outcome[] = [];
    const rate = { acquire: () => {}, record: (o: Outcome) => outcomes.push(o) };
    const throttling = () => new Response('{"__type":"ThrottlingException"}', { status: 400 });
    const r = await run([throttling, 200], { use: [guard(rate)], isFailure: aws });
    expect(outcomes).toEqual(['throttled', 'success']);
    expect((r.retries[0] as HttpRetryContext).error).toMatchObject({ throttled: true });
  });

  it('a retry budget of your own replaces the default: it sees each HttpStatusError, and its refusal returns the last response', async () => {
    const seen: unknown[] = [];
    const budget = {
      tryAcquireRetry: (e: unknown) => {
        seen.push(e);
        return seen.length < 2;
      },
      recordSuccess: () => {},
    };
    const r = await run([503], { budget });
    expect(r.calls).toHaveLength(2);
    expect(r.response?.status).toBe(503);
    expect(seen.map((e) => (e as HttpStatusError).status)).toEqual([503, 503]);
  });
});

describe('withRetry: methods and bodies', () => {
  it('does not retry a POST; does with an Idempotency-Key header, or when POST is listed in methods', async () => {
    expect((await run([503, 200], {}, 'http://127.0.0.1/x', { method: 'POST', body: 'a' })).calls).toHaveLength(1);
    const keyed = await run([503, 200], {}, 'http://127.0.0.1/x', {
      method: 'post',
      body: 'a',
      headers: { 'Idempotency-Key': '"8e03978e-40d5-43e8-bc93-6894a57f9324"' },
    });
    expect(keyed.calls).toHaveLength(2);
    expect(keyed.response?.status).toBe(200);
    const optIn = await run([503, 200], { methods: ['GET', 'POST'] }, 'http://127.0.0.1/x', { method: 'POST' });
    expect(optIn.calls).toHaveLength(2);
  });

  it('headers fetch would refuse do not make withRetry throw: fetch gets them and decides', async () => {
    const r = await run([503, 200], {}, 'http://127.0.0.1/x', { method: 'POST', headers: { 'x-bad': 'a\nb' } });
    expect(r.calls).toHaveLength(1); // not idempotent, not retried; the scripted fetch accepted it
    expect(r.response?.status).toBe(503);
  });

  it('`methods` also narrows: with ["GET"], a PUT is not retried', async () => {
    const r = await run([503, 200], { methods: ['GET'] }, 'http://127.0.0.1/x', { method: 'PUT', body: 'x' });
    expect(r.calls).toHaveLength(1);
  });

  it('retries PUT, DELETE, HEAD, OPTIONS and TRACE by default, and not PATCH', async () => {
    for (const method of ['PUT', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE']) {
      expect((await run([503, 200], {}, 'http://127.0.0.1/x', { method })).calls, method).toHaveLength(2);
    }
    expect((await run([503, 200], {}, 'http://127.0.0.1/x', { method: 'PATCH' })).calls).toHaveLength(1);
  });

  it('a POST whose connection was refused is retried (it never left); one whose connection reset is not', async () => {
    const refused = await run([econn('ECONNREFUSED'), 200], {}, 'http://127.0.0.1/x', { method: 'POST', body: 'a' });
    expect(refused.calls).toHaveLength(2);
    expect(refused.response?.status).toBe(200);
    const reset = econn('ECONNRESET');
    const r = await run([reset, 200], {}, 'http://127.0.0.1/x', { method: 'POST', body: 'a' });
    expect(r.calls).toHaveLength(1);
    expect(r.error).toBe(reset); // the error itself, unchanged: final, not given up on
  });

  it('passes the same replayable body on every attempt', async () => {
    for (const body of [
      'text',
      new Uint8Array([1, 2, 3]),
      new ArrayBuffer(4),
      new Blob(['blob']),
      new URLSearchParams({ a: '1' }),
      new FormData(),
    ]) {
      const r = await run([503, 503, 200], {}, 'http://127.0.0.1/x', { method: 'PUT', body });
      expect(r.calls.map((c) => c.init?.body)).toEqual([body, body, body]);
    }
  });

  it('never retries a stream body: the first outcome is final', async () => {
    const stream = () => new ReadableStream({ start: (c) => c.close() });
    const r = await run([503, 200], {}, 'http://127.0.0.1/x', {
      method: 'PUT',
      body: stream(),
      duplex: 'half',
    } as RequestInit);
    expect(r.calls).toHaveLength(1);
    expect(r.response?.status).toBe(503);
    const reset = econn('ECONNRESET');
    const e = await run([reset, 200], {}, 'http://127.0.0.1/x', {
      method: 'PUT',
      body: stream(),
      duplex: 'half',
    } as RequestInit);
    expect(e.calls).toHaveLength(1);
    expect(e.error).toBe(reset);
  });

  it('replays a Request with a body from clones: every attempt reads the whole body', async () => {
    const request = new Request('http://127.0.0.1/r', { method: 'PUT', body: 'payload' });
    const bodies: string[] = [];
    const read = async (call: Call) => {
      bodies.push(await (call.input as Request).text());
      return new Response(null, { status: bodies.length < 3 ? 503 : 200 });
    };
    const r = await run([read], {}, request);
    expect(r.response?.status).toBe(200);
    expect(bodies).toEqual(['payload', 'payload', 'payload']);
    expect(r.retries[0]?.method).toBe('PUT');
    expect(r.retries[0]?.url).toBe('http://127.0.0.1/r');
  });
});

describe('withRetry: errors', () => {
  it('retries network errors and, when they persist, rejects with RetryError (cause: the last error)', async () => {
    const last = econn('ECONNRESET');
    const r = await run([econn('ECONNRESET'), econn('UND_ERR_SOCKET'), last]);
    expect(r.calls).toHaveLength(5);
    expect(r.error).toBeInstanceOf(RetryError);
    expect((r.error as RetryError).cause).toBe(last);
    expect((r.error as RetryError).reason).toBe('attempts');
  });

  it('a programming error is final and reaches the caller unchanged', async () => {
    const bad = new TypeError('Failed to parse URL from ::');
    const r = await run([bad, 200]);
    expect(r.calls).toHaveLength(1);
    expect(r.error).toBe(bad);
  });

  it('a timeout(ms) in `use` aborts each attempt on time; the timeouts are retried', async () => {
    const hang = (call: Call) =>
      new Promise<Response>((_, reject) => {
        const signal = call.init?.signal as AbortSignal;
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    const r = await run([hang], (clock) => ({
      use: [timeout(200, { clock })],
      backoff: constant({ delayMs: 50, maxAttempts: 3, jitter: noJitter }),
    }));
    expect(r.calls.map((c) => c.at)).toEqual([0, 250, 500]);
    expect(r.error).toBeInstanceOf(RetryError);
    expect(((r.error as RetryError).cause as Error).name).toBe('TimeoutError');
    expect(r.clock.now()).toBe(700);
  });

  it('a body that fails while the predicate reads it fails the attempt, which is retried', async () => {
    const broken = () =>
      new Response(
        new ReadableStream({
          pull: (c) => c.error(econn('UND_ERR_SOCKET')),
        }),
        { status: 400 },
      );
    const r = await run([broken, 200], { isFailure: aws });
    expect(r.calls).toHaveLength(2);
    expect(r.response?.status).toBe(200);
  });
});

describe('withRetry: isFailure', () => {
  it('a predicate of your own decides: true retries a 409, false returns a 503 at once', async () => {
    const conflict = await run([409, 200], { isFailure: (o) => o.ok && o.value.status === 409 });
    expect(conflict.calls).toHaveLength(2);
    const never = await run([503, 200], { isFailure: () => false });
    expect(never.calls).toHaveLength(1);
    expect(never.response?.status).toBe(503);
  });

  it('an async predicate is awaited, for responses and for errors', async () => {
    const r = await run([econn('ECONNRESET'), 503, 200], {
      isFailure: async (o) => (o.ok ? o.value.status === 503 : o.error !== undefined),
    });
    expect(r.calls).toHaveLength(3);
  });

  it('the predicate is told the attempt, the method and the URL with each outcome', async () => {
    const told: string[] = [];
    await run(
      [econn('ECONNRESET'), 503, 200],
      {
        isFailure: (o, c) => {
          told.push(`${c.attempt} ${c.method} ${c.url} ${o.ok ? o.value.status : 'error'}`);
          return o.ok ? o.value.status === 503 : true;
        },
      },
      'http://127.0.0.1/y',
      { method: 'put' },
    );
    expect(told).toEqual([
      '1 PUT http://127.0.0.1/y error',
      '2 PUT http://127.0.0.1/y 503',
      '3 PUT http://127.0.0.1/y 200',
    ]);
  });

  it("a predicate's own error, or a bad answer, reaches the caller, and the response is cancelled", async () => {
    const bug = new Error('predicate bug');
    const r = await run([503, 200], {
      isFailure: () => {
        throw bug;
      },
    });
    expect(r.error).toBe(bug);
    expect(r.calls).toHaveLength(1);
    expect(r.made[0]?.state.cancelled).toBe(true);
    // 0.1's verdict strings are no answer of 1.0.
    for (const odd of ['maybe', 'retry', 'final']) {
      const answered = await run([503, 200], { isFailure: () => odd as never });
      expect(answered.error).toBeInstanceOf(TypeError);
      expect((answered.error as Error).message).toBe(
        `withRetry(): \`isFailure\` returned "${odd}"; expected true, false or 'throttled'.`,
      );
    }
  });
});

describe('withRetry: the caller signal', () => {
  it('aborting during a wait rejects with the reason at once, and no call follows', async () => {
    const clock = virtualClock();
    const s = scripted(clock, [503]);
    const controller = new AbortController();
    const f = withRetry(s.fetchImpl, { backoff: constant({ delayMs: 1000, maxAttempts: 5, jitter: noJitter }), clock });
    const p = f('http://127.0.0.1/x', { signal: controller.signal }).catch((e: unknown) => e);
    await clock.advance(500);
    expect(s.calls).toHaveLength(1);
    const reason = new Error('stop');
    controller.abort(reason);
    expect(await p).toBe(reason);
    await clock.runAll();
    expect(s.calls).toHaveLength(1);
    expect(s.made[0]?.state.cancelled).toBe(true);
  });

  it('an aborted signal never calls fetch', async () => {
    const clock = virtualClock();
    const s = scripted(clock, [200]);
    const reason = new Error('already');
    const p = withRetry(s.fetchImpl, { clock })('http://127.0.0.1/x', { signal: AbortSignal.abort(reason) });
    await expect(p).rejects.toBe(reason);
    expect(s.calls).toHaveLength(0);
  });

  it('the signal fetch gets follows the caller signal after the response is returned (the body phase)', async () => {
    const clock = virtualClock();
    const s = scripted(clock, [200]);
    const controller = new AbortController();
    const response = await withRetry(s.fetchImpl, { clock })('http://127.0.0.1/x', { signal: controller.signal });
    const given = s.calls[0]?.init?.signal as AbortSignal;
    expect(response.status).toBe(200);
    expect(given.aborted).toBe(false);
    controller.abort(new Error('late'));
    expect(given.aborted).toBe(true);
  });

  it('one signal shared by 50 calls, each retried once, carries one listener (none once it aborts) and raises no MaxListenersExceededWarning', async () => {
    const warnings: string[] = [];
    const listen = (warning: Error): void => {
      warnings.push(warning.name);
    };
    process.on('warning', listen);
    try {
      const clock = virtualClock();
      // Each call: a 503, then a 200.
      const s = scripted(clock, [(call) => new Response('x', { status: s.calls.indexOf(call) % 2 === 0 ? 503 : 200 })]);
      const shared = new AbortController();
      const f = withRetry(s.fetchImpl, {
        backoff: constant({ delayMs: 10, maxAttempts: 2, jitter: noJitter }),
        budget: false,
        clock,
      });
      // Held, as a caller holds responses whose bodies it still reads: their signals stay live.
      const responses: Response[] = [];
      for (let i = 0; i < 50; i++) {
        const p = f('http://127.0.0.1/x', { signal: shared.signal });
        await clock.runAll();
        responses.push(await p);
      }
      expect(s.calls).toHaveLength(100);
      expect(responses.map((r) => r.status)).toEqual(Array(50).fill(200));
      expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
      await new Promise((resolve) => setImmediate(resolve)); // Node.js emits its warnings on a later tick
      expect(warnings.filter((name) => name === 'MaxListenersExceededWarning')).toEqual([]);
      // Still followed: the caller's abort reaches every held response's fetch signal.
      shared.abort(new Error('shutting down'));
      const given = s.calls.slice(1).filter((_, i) => i % 2 === 0);
      expect(given.filter((c) => c.init?.signal?.aborted === true)).toHaveLength(50);
      expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    } finally {
      process.off('warning', listen);
    }
  });

  it("a Request's own signal counts as the caller's", async () => {
    const clock = virtualClock();
    const s = scripted(clock, [503]);
    const reason = new Error('request signal');
    const request = new Request('http://127.0.0.1/x', { signal: AbortSignal.abort(reason) });
    await expect(withRetry(s.fetchImpl, { clock })(request)).rejects.toBe(reason);
    expect(s.calls).toHaveLength(0);
  });

  it("init.signal: undefined keeps the Request's own signal; null drops it — as fetch reads init", async () => {
    const reason = new Error('request signal');
    const request = new Request('http://127.0.0.1/x', { signal: AbortSignal.abort(reason) });
    for (const init of [{ signal: undefined }, {}, { signal: null }, undefined] as (RequestInit | undefined)[]) {
      // The oracle: the Fetch standard's own reading of init (WebIDL: an undefined member is absent).
      const keeps = new Request(request, init).signal.aborted;
      const clock = virtualClock();
      const s = scripted(clock, [200]);
      const outcome = await withRetry(s.fetchImpl, { clock })(request, init).then(
        (response) => response.status,
        (error: unknown) => error,
      );
      expect(outcome, JSON.stringify(init)).toBe(keeps ? reason : 200);
      expect(s.calls).toHaveLength(keeps ? 0 : 1);
    }
    expect(new Request(request, { signal: undefined }).signal.aborted).toBe(true);
    expect(new Request(request, { signal: null }).signal.aborted).toBe(false);
  });
});

describe('withRetry: options are checked at construction', () => {
  const f: typeof fetch = async () => new Response();

  it('names the option, the value and the fix', () => {
    expect(() => withRetry(42 as never)).toThrow(
      'withRetry(): expected `fetchImpl` to be a function with the signature of fetch, got 42. Pass fetch, or leave it out.',
    );
    expect(() => withRetry(f, { isFailure: 'standard' as never })).toThrow(TypeError);
    expect(() => withRetry(f, { methods: ['GET', 'BAD METHOD'] })).toThrow(
      "withRetry(): expected `methods` to be an array of method names such as ['GET', 'PUT'], got an array.",
    );
    expect(() => withRetry(f, { methods: 'GET' as never })).toThrow(TypeError);
    expect(() => withRetry(f, { onRetry: 'log' as never })).toThrow(TypeError);
    expect(() => withRetry(f, { use: [{}] as never })).toThrow(TypeError);
    expect(() => withRetry(f, { maxRetryAfterMs: Number.NaN })).toThrow(RangeError);
    expect(() => withRetry(f, { backoff: {} as never })).toThrow(TypeError);
  });

  it('names the option, the value and the fix: hedge, isFailure, serverHintMs, isFailure.serverHintMs, use, onRetry, methods', () => {
    const hedgeMessage = (got: string) =>
      `withRetry(): expected \`hedge\` to be a hedging() from ebb/resilience, got ${got}. Such as hedging({ delayMs: 50 }).`;
    expect(() => withRetry(f, { hedge: null as never })).toThrow(hedgeMessage('null'));
    expect(() => withRetry(f, { hedge: {} as never })).toThrow(hedgeMessage('an object'));
    expect(() => withRetry(f, { hedge: { run: 1 } as never })).toThrow(hedgeMessage('an object'));
    expect(() => withRetry(f, { hedge: 'fast' as never })).toThrow(hedgeMessage('"fast"'));
    expect(() => withRetry(f, { hedge: { run: () => {} } as never })).not.toThrow();
    // A function is no hedging() value, even with a run method.
    expect(() => withRetry(f, { hedge: Object.assign(() => {}, { run: () => {} }) as never })).toThrow(
      hedgeMessage('a function'),
    );
    expect(() => withRetry(f, { isFailure: 'standard' as never })).toThrow(
      'withRetry(): expected `isFailure` to be a function (outcome, context), got "standard". Such as standard, aws or googleDrive.',
    );
    const hinting = Object.assign(() => true, { serverHintMs: 5 });
    expect(() => withRetry(f, { isFailure: hinting as never })).toThrow(
      'withRetry(): expected `isFailure.serverHintMs` to be a function (response) => ms or undefined, got 5.',
    );
    expect(() => withRetry(f, { serverHintMs: 5 as never })).toThrow(
      'withRetry(): expected `serverHintMs` to be a function (response) => ms or undefined, got 5.',
    );
    // Its own serverHintMs comes first: the predicate's is then not read.
    expect(() => withRetry(f, { isFailure: hinting as never, serverHintMs })).not.toThrow();
    expect(() => withRetry(f, { isFailure: Object.assign(() => true, { serverHintMs: () => 1 }) })).not.toThrow();
    expect(() => withRetry(f, { use: 'breaker' as never })).toThrow(
      'withRetry(): expected `use` to be an array of mechanisms, got "breaker".',
    );
    expect(() => withRetry(f, { use: [timeout(1), null] as never })).toThrow(
      'withRetry(): expected `use[1]` to be a mechanism { execute(next, context) }, got null.',
    );
    // A bare guard: the fix is to wrap it, which keeps guard() out of bundles that never call it.
    expect(() => withRetry(f, { use: [{ acquire() {}, record() {} }] as never })).toThrow(
      new TypeError(
        "withRetry(): expected `use[0]` to be a mechanism { execute(next, context) }, got an object. It is a guard { acquire(), record() }: wrap it, `guard(x)` (import { guard } from 'ebb').",
      ),
    );
    expect(() => withRetry(f, { onRetry: 'log' as never })).toThrow(
      'withRetry(): expected `onRetry` to be a function (context) => void, got "log".',
    );
    // 42 would pass the token test as "42": the type is checked first.
    expect(() => withRetry(f, { methods: [42] as never })).toThrow(
      "withRetry(): expected `methods` to be an array of method names such as ['GET', 'PUT'], got an array.",
    );
  });

  it("rejects unknown options, and signal and 0.1's options with a pointer to what to use", () => {
    expect(() => withRetry(f, { isfailure: () => true } as never)).toThrow(
      'withRetry(): unknown option `isfailure`. Did you mean `isFailure`?',
    );
    // Its own options are known names too: a near miss of one is pointed to it, and the list says them.
    expect(() => withRetry(f, { method: ['GET'] } as never)).toThrow(
      'withRetry(): unknown option `method`. Did you mean `methods`? Known options: backoff, isFailure, maxRetryAfterMs, ' +
        'onRetry, onFailedAttempt, onGiveUp, onSuccess, clock, random, unref, budget, methods, hedge, use, serverHintMs.',
    );
    expect(() => withRetry(f, { signal: AbortSignal.abort() } as never)).toThrow('pass it as init.signal');
    expect(() => withRetry(f, { retryIf: () => true } as never)).toThrow(
      'withRetry(): `retryIf` moved; use `isFailure`.',
    );
    expect(() => withRetry(f, { retryOn: () => true } as never)).toThrow(
      'withRetry(): `retryOn` moved; use `isFailure`.',
    );
    expect(() => withRetry(f, { rate: {} } as never)).toThrow('withRetry(): `rate` moved; use `use: [rate]`.');
    // A retry inside withRetry's own multiplies the attempts.
    expect(() => withRetry(f, { use: [retrying()] })).toThrow(
      new TypeError(
        "withRetry(): `use[0]` is a retrying(): `use` runs inside withRetry()'s own retry, where a second one multiplies the attempts. Give its options to withRetry() instead.",
      ),
    );
    expect(() => withRetry(f, { attemptTimeoutMs: 5_000 } as never)).toThrow(
      'withRetry(): `attemptTimeoutMs` moved; use `use: [timeout(ms)]`.',
    );
  });

  it('defaults fetchImpl to the global fetch, read at construction', () => {
    expect(typeof withRetry()).toBe('function');
  });
});

describe('withRetry: the hooks that report a failure are told the response', () => {
  it('onFailedAttempt and onGiveUp get a failed response as `value` (their type says Response), beside its HttpStatusError', async () => {
    const failed: [number, unknown, unknown][] = [];
    const gaveUp: [string, unknown, unknown][] = [];
    const r = await run([503, 502], {
      backoff: constant({ delayMs: 100, maxAttempts: 2, jitter: noJitter }),
      onFailedAttempt: (c) => {
        failed.push([c.attempt, c.value?.status, c.error instanceof HttpStatusError]);
      },
      onGiveUp: (c) => {
        gaveUp.push([c.reason, c.value?.status, Object.isFrozen(c)]);
      },
    });
    expect(r.response?.status).toBe(502);
    expect(failed).toEqual([
      [1, 503, true],
      [2, 502, true],
    ]);
    expect(gaveUp).toEqual([['attempts', 502, true]]);
  });

  it('a thrown error has no value', async () => {
    const values: unknown[] = [];
    const r = await run([econn('ECONNREFUSED')], {
      backoff: constant({ delayMs: 100, maxAttempts: 2, jitter: noJitter }),
      onFailedAttempt: (c) => {
        values.push(c.value);
      },
    });
    expect(r.error).toBeInstanceOf(RetryError);
    expect(values).toEqual([undefined, undefined]);
  });
});

describe('withRetry: what counts as a Request', () => {
  const clone = function (this: unknown) {
    return this;
  };
  const shape = (fields: Record<string, unknown>) => ({ ...fields, toString: () => 'http://127.0.0.1/as-string' });

  it('only an object with a string url, a string method and a clone(); anything short of that is a URL, stringified', async () => {
    const full = shape({ url: 'http://127.0.0.1/own', method: 'POST', clone });
    const cases: [string, unknown, string, number][] = [
      // [what, input, the URL onRetry is told (or the call's), calls made for 503 then 200]
      ['a Request-shaped object is read as one: POST, not retried', full, 'http://127.0.0.1/own', 1],
      ['no url', shape({ method: 'POST', clone }), 'http://127.0.0.1/as-string', 2],
      ['url not a string', shape({ url: 7, method: 'POST', clone }), 'http://127.0.0.1/as-string', 2],
      ['no method', shape({ url: 'http://127.0.0.1/own', clone }), 'http://127.0.0.1/as-string', 2],
      ['no clone()', shape({ url: 'http://127.0.0.1/own', method: 'POST' }), 'http://127.0.0.1/as-string', 2],
      [
        'a function, not an object',
        Object.assign(() => {}, full, { toString: () => 'http://127.0.0.1/as-string' }),
        'http://127.0.0.1/as-string',
        2,
      ],
    ];
    for (const [what, input, url, calls] of cases) {
      const r = await run([503, 200], {}, input as RequestInfo);
      expect(r.calls, what).toHaveLength(calls);
      expect(r.calls[0]?.input, what).toBe(input);
      if (calls === 2) expect([r.retries[0]?.url, r.retries[0]?.method], what).toEqual([url, 'GET']);
    }
  });

  it('null is no Request: it reaches fetch as given (fetch, not withRetry, refuses it)', async () => {
    const r = await run([200], {}, null as unknown as RequestInfo);
    expect(r.calls.map((c) => c.input)).toEqual([null]);
    expect(r.response?.status).toBe(200);
  });

  it('a Request without a body is passed as it is, the same object on every attempt', async () => {
    const request = new Request('http://127.0.0.1/r');
    const r = await run([503, 200], {}, request);
    expect(r.calls.map((c) => c.input === request)).toEqual([true, true]);
  });

  it('init.body: null leaves the Request its own body, so every attempt gets a fresh clone of it (Fetch: null is absent)', async () => {
    const request = new Request('http://127.0.0.1/r', { method: 'PUT', body: 'payload' });
    const bodies: string[] = [];
    // As fetch does: a Request built from (input, init); a used body makes it throw.
    const read = async (call: Call) => {
      bodies.push(await new Request(call.input, call.init).text());
      return new Response(null, { status: bodies.length < 3 ? 503 : 200 });
    };
    const r = await run([read], {}, request, { body: null });
    expect(r.error).toBeUndefined();
    expect(bodies).toEqual(['payload', 'payload', 'payload']);
    expect(r.calls.every((c) => c.input !== request)).toBe(true);
  });

  it("a Request's own Idempotency-Key header makes its POST retryable", async () => {
    const request = new Request('http://127.0.0.1/r', {
      method: 'POST',
      body: 'a',
      headers: { 'Idempotency-Key': '"k-1"' },
    });
    const r = await run([503, 200], {}, request);
    expect(r.calls).toHaveLength(2);
    expect(r.response?.status).toBe(200);
    // init.headers, when given, replace the Request's (as fetch reads them): no key, no retry.
    expect((await run([503, 200], {}, request, { headers: { 'x-other': '1' } })).calls).toHaveLength(1);
  });
});

describe('withRetry: the predicate, in detail', () => {
  it("a predicate's own error stays final even when it would retry that error as a failure — objects, strings, null", async () => {
    for (const thrown of [new Error('predicate bug'), 'oops', null, 42]) {
      const isFailure = (o: { ok: boolean }) => {
        if (o.ok) throw thrown;
        return true;
      };
      const r = await run([503, 200], { isFailure });
      expect(r.calls, String(thrown)).toHaveLength(1);
      expect(r.error, String(thrown)).toBe(thrown);
      expect(r.made[0]?.state.cancelled).toBe(true);
    }
  });

  it("an async predicate's false for an error ends it: the error reaches the caller unchanged", async () => {
    const reset = econn('ECONNRESET');
    const r = await run([reset, 200], { isFailure: async (o) => o.ok });
    expect(r.calls).toHaveLength(1);
    expect(r.error).toBe(reset);
    const retried = await run([econn('ECONNRESET'), 200], { isFailure: async (o) => !o.ok || !o.value.ok });
    expect(retried.calls).toHaveLength(2);
  });

  it('a bad answer about an error, sync or async, rejects with the TypeError naming it', async () => {
    for (const answer of [7, Promise.resolve(7)]) {
      const r = await run([econn('ECONNRESET'), 200], { isFailure: (o) => (o.ok ? true : (answer as never)) });
      expect(r.calls).toHaveLength(1);
      expect((r.error as Error).message).toBe(
        "withRetry(): `isFailure` returned 7; expected true, false or 'throttled'.",
      );
    }
  });

  it("responseText is '' for what has no body to read, and one read serves every predicate that asks", async () => {
    const texts: string[] = [];
    const isFailure = async (o: { ok: boolean; value?: Response }) => {
      // Twice: the second read is the first one's promise.
      texts.push(await responseText(o.value as Response), await responseText(o.value as Response));
      return !o.ok;
    };
    const r = await run([econn('ECONNRESET'), () => new Response('ok')], { isFailure });
    expect(texts).toEqual(['', '', 'ok', 'ok']);
    expect(r.response?.status).toBe(200);
    expect(await r.response?.text()).toBe('ok');
  });

  it('a 429 is throttled whatever answer made it a failure: true is enough', async () => {
    const outcomes: Outcome[] = [];
    const rate = { acquire: () => {}, record: (o: Outcome) => outcomes.push(o) };
    const r = await run([429, 503, 200], { use: [guard(rate)], isFailure: (o) => o.ok && !o.value.ok });
    expect(outcomes).toEqual(['throttled', 'failure', 'success']);
    expect(r.retries.map((c) => (c.error as HttpStatusError).throttled)).toEqual([true, false]);
  });

  it('an HttpStatusError that fetch itself threw is an error like any other: no response in onRetry, RetryError at the end', async () => {
    const t = tracked(503);
    const own = new HttpStatusError(t.response, 'GET', 'http://127.0.0.1/x', undefined, false);
    const r = await run([own], {
      backoff: constant({ delayMs: 100, maxAttempts: 2, jitter: noJitter }),
      isFailure: (o) => !o.ok,
    });
    expect(r.calls).toHaveLength(2);
    expect(r.error).toBeInstanceOf(RetryError);
    expect((r.error as RetryError).cause).toBe(own);
    expect(r.retries.map((c) => [c.error === own, c.response])).toEqual([[true, undefined]]);
    expect(t.state.cancelled).toBe(false);
  });
});

describe('withRetry: hedge', () => {
  /** A hedging stand-in that records each call and runs the operation once, on a signal of its own. */
  function recordingHedge() {
    const runs: { options: HedgeCallOptions | undefined; signal: AbortSignal }[] = [];
    const hedge: Hedging = {
      delayMs: 0,
      stats: { calls: 0, hedges: 0 },
      run: async <T>(
        operation: (attempt: AttemptContext) => PromiseLike<T> | T,
        options?: HedgeCallOptions,
      ): Promise<Awaited<T>> => {
        const signal = new AbortController().signal;
        runs.push({ options, signal });
        return (await operation({ attempt: 1, signal, elapsedMs: 0 })) as Awaited<T>;
      },
    };
    return { hedge, runs };
  }

  it('runs every attempt of an idempotent request through hedge.run, with the method and the attempt signal', async () => {
    const { hedge, runs } = recordingHedge();
    const caller = new AbortController();
    const r = await run([503, 200], { hedge }, 'http://127.0.0.1/x', {
      method: 'put',
      body: 'b',
      signal: caller.signal,
    });
    expect(r.response?.status).toBe(200);
    expect(runs.map((x) => x.options?.method)).toEqual(['PUT', 'PUT']);
    // Each copy is sent on the signal hedging gave it.
    expect(r.calls.map((c, i) => c.init?.signal === runs[i]?.signal)).toEqual([true, true]);
    // The signal hedging is given follows the caller's.
    const given = runs[1]?.options?.signal as AbortSignal;
    expect(given.aborted).toBe(false);
    caller.abort(new Error('late'));
    expect(given.aborted).toBe(true);
  });

  it('never hedges a request that is not idempotent, not allowed by methods, or has a stream body', async () => {
    const cases: [WithRetryOptions, RequestInit][] = [
      [{ methods: ['GET', 'POST'] }, { method: 'POST', body: 'b' }], // retried, yet never two copies at once
      [{}, { method: 'POST', headers: { 'Idempotency-Key': 'k' } }],
      [{ methods: ['GET'] }, { method: 'PUT' }],
      [{}, { method: 'PUT', body: new ReadableStream(), duplex: 'half' } as RequestInit],
    ];
    for (const [options, init] of cases) {
      const { hedge, runs } = recordingHedge();
      const r = await run([200], { ...options, hedge }, 'http://127.0.0.1/x', init);
      expect(r.response?.status, JSON.stringify(init)).toBe(200);
      expect(runs, JSON.stringify(init)).toHaveLength(0);
    }
  });
});

describe('withRetry: without AbortSignal.any (runtimes before Node.js 20.3)', () => {
  /** Runs `f` with AbortSignal.any removed, as on an older runtime; puts it back after. */
  async function withoutAny<T>(f: () => Promise<T>): Promise<T> {
    const saved = Object.getOwnPropertyDescriptor(AbortSignal, 'any');
    delete (AbortSignal as { any?: unknown }).any;
    try {
      return await f();
    } finally {
      if (saved) Object.defineProperty(AbortSignal, 'any', saved);
    }
  }
  const hang = (call: Call) =>
    new Promise<Response>((_, reject) => {
      const signal = call.init?.signal as AbortSignal;
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });

  it("the caller's abort reaches the attempt's fetch, with the caller's reason", async () => {
    await withoutAny(async () => {
      expect((AbortSignal as { any?: unknown }).any).toBeUndefined();
      const clock = virtualClock();
      const s = scripted(clock, [hang]);
      const caller = new AbortController();
      const p = withRetry(s.fetchImpl, { clock })('http://127.0.0.1/x', { signal: caller.signal }).catch((e) => e);
      await clock.advance(10);
      const given = s.calls[0]?.init?.signal as AbortSignal;
      expect(given.aborted).toBe(false);
      const reason = new Error('stop');
      caller.abort(reason);
      expect(given.aborted).toBe(true);
      expect(given.reason).toBe(reason);
      expect(await p).toBe(reason);
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    });
  });

  it("after the response is returned, the caller's abort still reaches its body's fetch signal", async () => {
    await withoutAny(async () => {
      const clock = virtualClock();
      const s = scripted(clock, [200]);
      const caller = new AbortController();
      const response = await withRetry(s.fetchImpl, { clock })('http://127.0.0.1/x', { signal: caller.signal });
      expect(response.status).toBe(200);
      const given = s.calls[0]?.init?.signal as AbortSignal;
      expect(given.aborted).toBe(false);
      const reason = new Error('late');
      caller.abort(reason);
      expect(given.aborted).toBe(true);
      expect(given.reason).toBe(reason);
    });
  });

  it("a timeout in `use` aborts that attempt's fetch and leaves no listener on the caller's signal", async () => {
    await withoutAny(async () => {
      const clock = virtualClock();
      const s = scripted(clock, [hang]);
      const caller = new AbortController();
      const f = withRetry(s.fetchImpl, {
        clock,
        use: [timeout(100, { clock })],
        backoff: constant({ delayMs: 50, maxAttempts: 3, jitter: noJitter }),
      });
      const p = f('http://127.0.0.1/x', { signal: caller.signal }).catch((e) => e);
      await clock.runAll();
      const error = await p;
      expect(error).toBeInstanceOf(RetryError);
      expect(s.calls.map((c) => c.at)).toEqual([0, 150, 300]);
      expect(s.calls.map((c) => ((c.init as RequestInit).signal as AbortSignal).reason.name)).toEqual([
        'TimeoutError',
        'TimeoutError',
        'TimeoutError',
      ]);
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
      expect(caller.signal.aborted).toBe(false);
    });
  });
});
