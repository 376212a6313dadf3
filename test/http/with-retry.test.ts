import { execFile } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import { constant, noJitter, RetryError, timeout, type VirtualClock, virtualClock } from 'ebb';
import { aws, type HttpStatusError, standard, withRetry } from 'ebb/http';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';
import { BIG, eventually, expectNoLeaks, readBody, startServer, type TestServer } from './support/server.js';

/*
 * withRetry against real node:http servers on 127.0.0.1, through Node's own fetch (undici),
 * over real sockets: resets are real resets, timeouts real aborts, leaks real open connections.
 */

let servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});
async function serve(...args: Parameters<typeof startServer>): Promise<TestServer> {
  const s = await startServer(...args);
  servers.push(s);
  return s;
}

/** Steps a virtual clock while the code under test sleeps on it, until `done()`. */
async function drive(clock: VirtualClock, done: () => boolean): Promise<void> {
  while (!done()) {
    if (clock.pending > 0) await clock.advance(10);
    else await new Promise((r) => setTimeout(r, 1));
  }
}

/** The outcome of a promise, settled, without throwing. */
function settle<T>(p: Promise<T>) {
  const box: { done: boolean; value?: T; error?: unknown } = { done: false };
  p.then(
    (value) => Object.assign(box, { done: true, value }),
    (error: unknown) => Object.assign(box, { done: true, error }),
  );
  return box;
}

describe('statuses and Retry-After, over sockets', () => {
  it('503, 503, 200 → 200 after exactly 3 requests; the server saw 3', async () => {
    const t = await serve((_req, res, _s) => {
      const n = t.seen.length;
      res.writeHead(n < 3 ? 503 : 200, { 'content-type': 'text/plain' });
      res.end(n < 3 ? 'busy' : 'ok');
    });
    const f = withRetry(fetch, { backoff: constant({ delayMs: 10, maxAttempts: 5, jitter: noJitter }) });
    const res = await f(`${t.origin}/x`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok');
    expect(t.seen).toHaveLength(3);
    await expectNoLeaks(t);
  });

  /** When the requests arrive (virtual clock) when the first answer is `first`'s, then 200; a 10-ms policy. */
  async function arrivalsAfter(first: (res: ServerResponse) => void): Promise<number[]> {
    const clock = virtualClock();
    const arrivals: number[] = [];
    const t = await serve((_req, res) => {
      arrivals.push(clock.now());
      if (arrivals.length === 1) first(res);
      else res.end('ok');
    });
    const f = withRetry(fetch, { backoff: constant({ delayMs: 10, maxAttempts: 5, jitter: noJitter }), clock });
    const box = settle(f(`${t.origin}/x`));
    await drive(clock, () => box.done);
    expect((box.value as Response).status).toBe(200);
    await expectNoLeaks(t);
    return arrivals;
  }

  it('429 with Retry-After: 1 → the next request comes 1 s later (virtual clock), not after the 10 ms policy', async () => {
    const arrivals = await arrivalsAfter((res) => {
      res.writeHead(429, { 'retry-after': '1' });
      res.end('slow down');
    });
    expect(arrivals).toEqual([0, 1000]);
  });

  it('503 with Retry-After sent twice (0 and 2) → the next request comes after the longer hint, 2 s (virtual clock)', async () => {
    const arrivals = await arrivalsAfter((res) => {
      res.statusCode = 503;
      res.setHeader('Retry-After', ['0', '2']); // two field lines; fetch joins them: "0, 2"
      res.end('busy');
    });
    expect(arrivals).toEqual([0, 2000]); // not 10 (the policy's own wait) nor 0 (the first value)
  });

  it('the AWS predicates read x-amz-retry-after (ms) as the SDK does; the standard one ignores it', async () => {
    const arrivalsWith = async (isFailure: typeof aws) => {
      const clock = virtualClock();
      const arrivals: number[] = [];
      const t = await serve((_req, res) => {
        arrivals.push(clock.now());
        if (arrivals.length === 1) {
          res.writeHead(503, { 'x-amz-retry-after': '1500' });
          res.end('busy');
        } else res.end('ok');
      });
      const f = withRetry(fetch, {
        backoff: constant({ delayMs: 10, maxAttempts: 5, jitter: noJitter }),
        isFailure,
        clock,
      });
      const box = settle(f(`${t.origin}/x`));
      await drive(clock, () => box.done);
      expect((box.value as Response).status).toBe(200);
      await expectNoLeaks(t);
      return arrivals;
    };
    expect(await arrivalsWith(aws)).toEqual([0, 1500]);
    expect(await arrivalsWith(standard)).toEqual([0, 10]);
  });

  it('a predicate whose serverHintMs is not a function is refused at once, naming it', () => {
    const bad = Object.assign(() => true, { serverHintMs: 5 });
    expect(() => withRetry(fetch, { isFailure: bad as never })).toThrow(/`isFailure.serverHintMs`.*got 5/);
  });

  it('429 with Retry-After: 86400 → gives up at once: one request, the 429 returned with its body', async () => {
    const clock = virtualClock();
    const t = await serve((_req, res) => {
      res.writeHead(429, { 'retry-after': '86400', 'content-type': 'text/plain' });
      res.end('come back tomorrow');
    });
    const f = withRetry(fetch, { backoff: constant({ delayMs: 10, maxAttempts: 5, jitter: noJitter }), clock });
    const res = await f(`${t.origin}/x`);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('86400');
    expect(await res.text()).toBe('come back tomorrow');
    expect(t.seen).toHaveLength(1);
    expect(clock.now()).toBe(0); // no wait at all
    await expectNoLeaks(t);
  });

  it('the final 503 after the last attempt is returned, not thrown, and earlier 16 MiB bodies freed their connections', async () => {
    const t = await serve((_req, res) => {
      res.writeHead(503, { 'content-length': String(BIG.length) });
      res.end(BIG);
    });
    const f = withRetry(fetch, { backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter }) });
    const res = await f(`${t.origin}/x`);
    expect(res.status).toBe(503);
    expect(t.seen).toHaveLength(3);
    // The two retried responses are over already; only the returned one waits to be read.
    expect(await eventually(() => t.openResponses() === 1)).toBe(true);
    expect((await res.arrayBuffer()).byteLength).toBe(BIG.length);
    await expectNoLeaks(t);
  });

  it('control: plain fetch that leaves 16 MiB bodies unread does leak, and the leak check sees it', async () => {
    const t = await serve((_req, res) => {
      res.writeHead(503, { 'content-length': String(BIG.length) });
      res.end(BIG);
    });
    const a = await fetch(`${t.origin}/a`);
    const b = await fetch(`${t.origin}/b`);
    expect(await eventually(() => t.openResponses() === 0, 300)).toBe(false);
    expect(t.openResponses()).toBe(2);
    await a.body?.cancel();
    await b.body?.cancel();
    await expectNoLeaks(t);
  });
});

describe('resets, methods and cut-off bodies, over sockets', () => {
  /** Resets the connection of the first request on each path, answers the rest with an echo. */
  async function resettingServer() {
    const perPath = new Map<string, number>();
    const bodies: string[] = [];
    const t = await serve(async (req, res) => {
      const n = (perPath.get(req.url ?? '') ?? 0) + 1;
      perPath.set(req.url ?? '', n);
      const body = (await readBody(req)).toString();
      bodies.push(body);
      if (n === 1) {
        req.socket.resetAndDestroy(); // a TCP RST before any response byte
        return;
      }
      res.end(`echo:${body}`);
    });
    return { t, bodies };
  }

  it('a GET whose connection is reset before the answer is retried: 2 requests, then 200', async () => {
    const { t } = await resettingServer();
    const res = await withRetry(fetch, { backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter }) })(
      `${t.origin}/get`,
    );
    expect(res.status).toBe(200);
    expect(t.seen).toHaveLength(2);
    await expectNoLeaks(t);
  });

  it('a POST is not retried: the reset reaches the caller as fetch reports it; the server saw 1 request', async () => {
    const { t } = await resettingServer();
    const f = withRetry(fetch, { backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter }) });
    const error = await f(`${t.origin}/post`, { method: 'POST', body: 'order #1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe('fetch failed');
    expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain(((error as Error).cause as { code: string }).code);
    expect(t.seen).toHaveLength(1);
    await expectNoLeaks(t);
  });

  it('a POST with Idempotency-Key is retried, and the server gets the same body twice', async () => {
    const { t, bodies } = await resettingServer();
    const f = withRetry(fetch, { backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter }) });
    const res = await f(`${t.origin}/post-key`, {
      method: 'POST',
      body: 'order #2',
      headers: { 'Idempotency-Key': '"a1b2c3"' },
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('echo:order #2');
    expect(t.seen).toHaveLength(2);
    expect(bodies).toEqual(['order #2', 'order #2']);
    await expectNoLeaks(t);
  });

  it('a POST to a port nobody listens on is retried: a refused connection proves it was never sent', async () => {
    const t = await serve((_req, res) => res.end());
    const origin = t.origin;
    await t.close();
    servers = [];
    const attempts: number[] = [];
    const f = withRetry(fetch, {
      backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter }),
      onRetry: ({ attempt }) => {
        attempts.push(attempt);
      },
    });
    const error = await f(`${origin}/post`, { method: 'POST', body: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryError);
    expect((((error as RetryError).cause as Error).cause as { code: string }).code).toBe('ECONNREFUSED');
    expect(attempts).toEqual([1, 2]);
  });

  it('a response cut off mid-body (Content-Length) ends in a clear error, never a short body', async () => {
    const t = await serve((req, res) => {
      res.writeHead(200, { 'content-length': '100000' });
      res.write(Buffer.alloc(1000, 0x62));
      setTimeout(() => req.socket.destroy(), 20);
    });
    const res = await withRetry(fetch)(`${t.origin}/x`);
    expect(res.status).toBe(200);
    const error = await res.text().then(
      (text) => new Error(`silently short body of ${text.length} characters`),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe('terminated');
    expect(((error as Error).cause as { code: string }).code).toBe('UND_ERR_SOCKET');
    await expectNoLeaks(t);
  });

  it('a chunked response cut off before its last chunk ends in the same clear error', async () => {
    const t = await serve((req, res) => {
      res.writeHead(200); // no length: chunked
      res.write('first chunk ');
      setTimeout(() => req.socket.destroy(), 20);
    });
    const res = await withRetry(fetch)(`${t.origin}/x`);
    const error = await res.text().then(
      (text) => new Error(`silently short body: ${text}`),
      (e: unknown) => e,
    );
    expect((error as Error).message).toBe('terminated');
    expect(((error as Error).cause as { code: string }).code).toBe('UND_ERR_SOCKET');
    await expectNoLeaks(t);
  });
});

describe('a server that never answers', () => {
  it('use: [timeout(200)] → each attempt aborted on time, retried, then RetryError; zero open connections after', async () => {
    const closedAfter: number[] = [];
    const t = await serve((req, _res, seen) => {
      req.socket.once('close', () => closedAfter.push(performance.now() - seen.at));
    });
    const f = withRetry(fetch, {
      use: [timeout(200)],
      backoff: constant({ delayMs: 50, maxAttempts: 3, jitter: noJitter }),
    });
    const started = performance.now();
    const error = await f(`${t.origin}/never`).catch((e: unknown) => e);
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(RetryError);
    expect((error as RetryError).reason).toBe('attempts');
    expect(((error as RetryError).cause as Error).name).toBe('TimeoutError');
    expect(t.seen).toHaveLength(3);
    // Server side: each connection was closed by the client's abort, about 200 ms after its
    // request arrived (the attempt's clock started a little before the arrival).
    expect(await eventually(() => closedAfter.length === 3)).toBe(true);
    for (const ms of closedAfter) {
      expect(ms).toBeGreaterThan(150);
      expect(ms).toBeLessThan(1000);
    }
    expect(elapsed).toBeGreaterThanOrEqual(3 * 200 + 2 * 50 - 5);
    expect(t.openResponses()).toBe(0);
    await expectNoLeaks(t);
  });
});

describe('bodies, over sockets', () => {
  /** Fails the first request on each path with 503, then echoes method, content-type and body. */
  async function echoServer() {
    const perPath = new Map<string, number>();
    return serve(async (req, res) => {
      const n = (perPath.get(req.url ?? '') ?? 0) + 1;
      perPath.set(req.url ?? '', n);
      const body = await readBody(req);
      if (n === 1) {
        res.writeHead(503);
        res.end();
        return;
      }
      res.writeHead(200, { 'x-content-type': req.headers['content-type'] ?? '', 'x-method': req.method ?? '' });
      res.end(body);
    });
  }

  const f = withRetry(fetch, { backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter }) });
  const bytes = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 31) % 251);

  it('resends string, ArrayBuffer, typed array, Blob, URLSearchParams and FormData bodies intact', async () => {
    const t = await echoServer();
    const cases: [string, BodyInit, Uint8Array][] = [
      ['string', 'héllo wörld', new TextEncoder().encode('héllo wörld')],
      ['arraybuffer', bytes.slice().buffer, bytes],
      ['typed', bytes, bytes],
      ['dataview', new DataView(bytes.buffer), bytes],
      ['blob', new Blob([bytes]), bytes],
      ['params', new URLSearchParams({ a: '1', b: 'x y' }), new TextEncoder().encode('a=1&b=x+y')],
    ];
    for (const [name, body, expected] of cases) {
      const res = await f(`${t.origin}/${name}`, { method: 'PUT', body });
      expect(res.status, name).toBe(200);
      expect(new Uint8Array(await res.arrayBuffer()), name).toEqual(expected);
    }
    const form = new FormData();
    form.set('field', 'value');
    form.set('file', new Blob([bytes]), 'data.bin');
    const res = await f(`${t.origin}/form`, { method: 'PUT', body: form });
    const echoed = await new Response(await res.arrayBuffer(), {
      headers: { 'content-type': res.headers.get('x-content-type') ?? '' },
    }).formData();
    expect(echoed.get('field')).toBe('value');
    expect(new Uint8Array(await (echoed.get('file') as Blob).arrayBuffer())).toEqual(bytes);
    expect(t.seen).toHaveLength(2 * (cases.length + 1));
    await expectNoLeaks(t);
  });

  it('replays a Request object with a body, from clones', async () => {
    const t = await echoServer();
    const res = await f(new Request(`${t.origin}/request`, { method: 'PUT', body: bytes }));
    expect(res.headers.get('x-method')).toBe('PUT');
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
    expect(t.seen).toHaveLength(2);
  });

  it('does not retry a stream body: one request, the 503 returned', async () => {
    const t = await echoServer();
    const stream = new Response(bytes).body as ReadableStream<Uint8Array>;
    const res = await f(`${t.origin}/stream`, { method: 'PUT', body: stream, duplex: 'half' } as RequestInit);
    expect(res.status).toBe(503);
    expect(t.seen).toHaveLength(1);
    await res.body?.cancel();
    await expectNoLeaks(t);
  });
});

describe('unref, in a process of its own', () => {
  it('with unref: true, a wait between attempts does not keep the process alive', async () => {
    // Against a port nobody listens on now: each attempt is refused at once, then a 10-minute wait.
    const script = `
      import { createServer } from 'node:net';
      import { constant, noJitter } from 'ebb';
      import { withRetry } from 'ebb/http';
      const probe = createServer();
      await new Promise((r) => probe.listen(0, '127.0.0.1', r));
      const { port } = probe.address();
      await new Promise((r) => probe.close(r));
      const f = withRetry(fetch, { backoff: constant({ delayMs: 600_000, maxAttempts: 3, jitter: noJitter }), unref: true,
        onRetry: () => process.stdout.write('waiting\\n') });
      const done = () => process.stdout.write('settled\\n');
      f('http://127.0.0.1:' + port + '/').then(done, done);
    `;
    const started = performance.now();
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, timeout: 20_000 }, (error, out) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout: out }),
      );
    });
    expect(stdout).toBe('waiting\n'); // it was waiting, and the process exited anyway
    expect(code).toBe(0);
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});

describe('the caller signal, over sockets', () => {
  it('aborts the wait between attempts: no request after the abort', async () => {
    const t = await serve((_req, res) => {
      res.writeHead(503);
      res.end();
    });
    const controller = new AbortController();
    const f = withRetry(fetch, {
      backoff: constant({ delayMs: 60_000, maxAttempts: 3, jitter: noJitter }),
      onRetry: () => {
        setTimeout(() => controller.abort(new Error('user left')), 20);
      },
    });
    const error = await f(`${t.origin}/x`, { signal: controller.signal }).catch((e: unknown) => e);
    expect((error as Error).message).toBe('user left');
    expect(t.seen).toHaveLength(1);
    await expectNoLeaks(t);
  });

  it('aborts the body of the returned response too', async () => {
    const t = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('partial'); // and then nothing: a stall mid-body
    });
    const controller = new AbortController();
    const res = await withRetry(fetch)(`${t.origin}/x`, { signal: controller.signal });
    const reading = res.text().catch((e: unknown) => e);
    controller.abort(new Error('enough'));
    expect(((await reading) as Error).message).toBe('enough');
    await expectNoLeaks(t);
  });

  it('onRetry sees the HttpStatusError and the response of the failed attempt', async () => {
    const t = await serve((_req, res) => {
      res.writeHead(t.seen.length === 1 ? 502 : 200);
      res.end();
    });
    const seen: [number, string, number | undefined][] = [];
    const f = withRetry(fetch, {
      backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter }),
      onRetry: ({ error, response, attempt }) => {
        seen.push([attempt, (error as HttpStatusError).name, response?.status]);
      },
    });
    expect((await f(`${t.origin}/x`)).status).toBe(200);
    expect(seen).toEqual([[1, 'HttpStatusError', 502]]);
  });
});
