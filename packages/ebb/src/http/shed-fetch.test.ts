import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS } from './admission.js';
import { parseRetryAfter } from './retry-after.js';
import { shedFetch } from './shed-fetch.js';

/** A handler whose responses are released by hand, to hold requests "in flight". */
function held() {
  const pending: { url: string; finish: (r: Response) => void; fail: (e: unknown) => void }[] = [];
  const handler = (request: Request) =>
    new Promise<Response>((finish, fail) => {
      pending.push({ url: new URL(request.url).pathname, finish, fail });
    });
  return { handler, pending };
}

const req = (path: string, signal?: AbortSignal) => new Request(`http://127.0.0.1${path}`, { signal });

describe('shedFetch', () => {
  it('maxConcurrent 2, maxQueue 2, 10 requests: 4 served in order, 6 answered 503 with Retry-After at once', async () => {
    const { handler, pending } = held();
    const f = shedFetch(handler, { maxConcurrent: 2, maxQueue: 2, retryAfterMs: 2000 });
    const results = Array.from({ length: 10 }, (_, i) => f(req(`/${i}`)));
    const shed = await Promise.all(results.slice(4));
    for (const r of shed) {
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toBe('2');
      expect(await r.text()).toBe('Service overloaded: retry after 2 s.\n');
    }
    expect(pending.map((p) => p.url)).toEqual(['/0', '/1']);
    pending[0]?.finish(new Response('zero'));
    await new Promise((r) => setImmediate(r));
    expect(pending.map((p) => p.url)).toEqual(['/0', '/1', '/2']); // the first in line, next
    pending[1]?.finish(new Response('one'));
    await new Promise((r) => setImmediate(r));
    pending[2]?.finish(new Response('two'));
    await new Promise((r) => setImmediate(r));
    pending[3]?.finish(new Response('three'));
    const served = await Promise.all(results.slice(0, 4).map((p) => p.then((r) => r.text())));
    expect(served).toEqual(['zero', 'one', 'two', 'three']);
    expect(f.stats()).toEqual({ running: 0, queued: 0, admitted: 4, shed: 6, left: 0, peakRunning: 2, peakQueued: 2 });
  });

  it('a request whose signal aborts while it waits leaves the queue unhandled', async () => {
    const { handler, pending } = held();
    const f = shedFetch(handler, { maxConcurrent: 1, maxQueue: 5 });
    const first = f(req('/first'));
    const controller = new AbortController();
    const gone = f(req('/gone', controller.signal));
    const third = f(req('/third'));
    controller.abort();
    expect((await gone).status).toBe(503);
    pending[0]?.finish(new Response('1'));
    await first;
    await new Promise((r) => setImmediate(r));
    expect(pending.map((p) => p.url)).toEqual(['/first', '/third']);
    pending[1]?.finish(new Response('3'));
    expect(await (await third).text()).toBe('3');
    expect(f.stats().left).toBe(1);
    expect(f.stats().admitted).toBe(2);
  });

  it("passes the handler's rejections and throws through, and frees the slot", async () => {
    const boom = new Error('boom');
    const f = shedFetch(
      (request: Request) => {
        if (request.url.endsWith('/sync')) throw boom;
        return Promise.reject(boom);
      },
      { maxConcurrent: 1 },
    );
    await expect(f(req('/async'))).rejects.toBe(boom);
    await expect(f(req('/sync'))).rejects.toBe(boom);
    expect(f.stats().running).toBe(0);
  });

  it('passes extra arguments through (Deno info, Bun server, Worker env)', async () => {
    const f = shedFetch((_r: Request, env: { name: string }) => new Response(env.name), { maxConcurrent: 1 });
    expect(await (await f(req('/'), { name: 'env' })).text()).toBe('env');
  });

  it('sends delay-seconds digits up to the cap, and refuses retryAfterMs: 1e24', async () => {
    for (const [retryAfterMs, header] of [
      [MAX_RETRY_AFTER_MS, '2147483647'],
      [0, '0'],
      [0.001, '1'],
    ] as const) {
      const { handler } = held();
      const f = shedFetch(handler, { maxConcurrent: 1, retryAfterMs });
      void f(req('/held'));
      const refused = await f(req('/shed'));
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe(header);
      expect(parseRetryAfter(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(retryAfterMs);
    }
    expect(() => shedFetch(() => new Response(), { maxConcurrent: 1, retryAfterMs: 1e24 })).toThrow(
      /shedFetch\(\): expected `retryAfterMs` to be at most 2147483647000/,
    );
  });

  it('checks its arguments', () => {
    expect(() => shedFetch('x' as never, { maxConcurrent: 1 })).toThrow(TypeError);
    expect(() => shedFetch(() => new Response(), { maxConcurrent: 0 })).toThrow(
      'shedFetch(): expected `maxConcurrent` to be a whole number >= 1, got 0.',
    );
  });
});
