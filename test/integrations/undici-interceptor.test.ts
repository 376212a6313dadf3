import type { IncomingMessage, ServerResponse } from 'node:http';
import { exponential, noJitter } from 'ebb';
import { circuitBreaker, isBrokenCircuitError } from 'ebb/resilience';
import { retryInterceptor } from 'ebb/undici';
import { Agent, type Dispatcher, getGlobalDispatcher, request, setGlobalDispatcher } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../http/support/server.js';

/*
 * ebb/undici against a real node:http server on 127.0.0.1, through the real undici 7 from npm:
 * Node's global fetch after setGlobalDispatcher, and undici.request. The server counts requests.
 */

const fast = exponential({ initialDelayMs: 1, maxDelayMs: 5, jitter: noJitter, maxAttempts: 4 });

let t: TestServer | undefined;
let saved: Dispatcher | undefined;
let agent: Agent | undefined;
beforeEach(() => {
  saved = getGlobalDispatcher();
});
afterEach(async () => {
  if (saved) setGlobalDispatcher(saved);
  await agent?.close();
  agent = undefined;
  await t?.close();
  t = undefined;
});

/** Answers each request with the next scripted reply; the last one repeats. */
function script(...replies: ((req: IncomingMessage, res: ServerResponse) => void)[]) {
  let i = 0;
  return (req: IncomingMessage, res: ServerResponse) => {
    const reply = replies[Math.min(i++, replies.length - 1)] as (q: IncomingMessage, s: ServerResponse) => void;
    req.resume();
    req.on('end', () => reply(req, res));
  };
}
const status =
  (code: number, headers: Record<string, string> = {}) =>
  (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(code, { 'content-type': 'text/plain', ...headers });
    res.end(code === 200 ? 'ok' : `status ${code}`);
  };

type Client = 'fetch' | 'undici.request';
/** One GET or POST by either client, through an Agent composed with the interceptor. */
async function send(
  client: Client,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
) {
  if (client === 'fetch') {
    const res = await fetch(url, init);
    return { status: res.status, body: await res.text() };
  }
  const res = await request(url, { method: (init.method ?? 'GET') as 'GET', headers: init.headers, body: init.body });
  return { status: res.statusCode, body: await res.body.text() };
}

function install(options: Parameters<typeof retryInterceptor>[0]) {
  agent = new Agent({ keepAliveTimeout: 100 });
  setGlobalDispatcher(agent.compose(retryInterceptor(options)));
}

describe.each<Client>(['fetch', 'undici.request'])('retryInterceptor under %s', (client) => {
  it('503, 503, 200: retried to the 200, waiting at least the Retry-After of 1 s before the second request', async () => {
    t = await startServer(script(status(503, { 'retry-after': '1' }), status(503), status(200)));
    install({ backoff: fast, budget: false });
    const res = await send(client, `${t.origin}/r`);
    expect(res).toEqual({ status: 200, body: 'ok' });
    expect(t.seen.length).toBe(3);
    const [a, b, c] = t.seen.map((s) => s.at) as [number, number, number];
    // The hint is 1 s; the policy alone waits 1–2 ms (no jitter): so the first gap is the hint's.
    expect(b - a).toBeGreaterThanOrEqual(990);
    expect(c - b).toBeLessThan(900);
  });

  it('a Retry-After above maxRetryAfterMs gives up at once and returns that 503, with its body', async () => {
    t = await startServer(script(status(503, { 'retry-after': '120' }), status(200)));
    install({ backoff: fast, budget: false, maxRetryAfterMs: 60_000 });
    const res = await send(client, `${t.origin}/r`);
    expect(res).toEqual({ status: 503, body: 'status 503' });
    expect(t.seen.length).toBe(1);
  });

  it('the retries used up: the last 503 is the answer (4 requests, the policy maxAttempts)', async () => {
    t = await startServer(script(status(503)));
    install({ backoff: fast, budget: false });
    expect(await send(client, `${t.origin}/r`)).toEqual({ status: 503, body: 'status 503' });
    expect(t.seen.length).toBe(4);
  });

  it('a POST without Idempotency-Key is sent once, even with a replayable body', async () => {
    t = await startServer(script(status(503)));
    install({ backoff: fast, budget: false });
    expect((await send(client, `${t.origin}/p`, { method: 'POST', body: 'order' })).status).toBe(503);
    expect(t.seen.length).toBe(1);
  });

  // Node's fetch hands every request body to the dispatcher as an async iterable (undici's
  // fetch: "body: an async generator over request.body.stream"), which no dispatcher can send
  // twice: through fetch, only a request without a body is retried. undici.request passes the
  // string itself.
  const replays = client === 'undici.request';
  it(`a POST with Idempotency-Key and a string body is ${replays ? 'retried to the 200, the body sent whole each time' : 'sent once: fetch streams the body'}`, async () => {
    const bodies: string[] = [];
    t = await startServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        bodies.push(body);
        (bodies.length < 3 ? status(503) : status(200))(req, res);
      });
    });
    install({ backoff: fast, budget: false });
    const res = await send(client, `${t.origin}/p`, {
      method: 'POST',
      body: 'order',
      headers: { 'idempotency-key': 'k-1' },
    });
    expect(res.status).toBe(replays ? 200 : 503);
    expect(bodies).toEqual(replays ? ['order', 'order', 'order'] : ['order']);
  });

  it('a POST with Idempotency-Key and no body is retried to the 200', async () => {
    t = await startServer(script(status(503), status(503), status(200)));
    install({ backoff: fast, budget: false });
    const res = await send(client, `${t.origin}/p`, { method: 'POST', headers: { 'idempotency-key': 'k-2' } });
    expect(res.status).toBe(200);
    expect(t.seen.length).toBe(3);
  });

  it('an open breaker: the call is refused and no request leaves the process', async () => {
    t = await startServer(script(status(503)));
    const breaker = circuitBreaker({ consecutiveFailures: 2 });
    install({
      backoff: exponential({ initialDelayMs: 1, jitter: noJitter, maxAttempts: 2 }),
      budget: false,
      use: [breaker],
    });
    expect((await send(client, `${t.origin}/b`)).status).toBe(503);
    expect(t.seen.length).toBe(2);
    expect(breaker.state).toBe('open');
    const refused = await send(client, `${t.origin}/b`).then(
      () => undefined,
      (error: unknown) => error,
    );
    // fetch wraps a dispatcher's error as TypeError('fetch failed', { cause }); undici.request rejects with it.
    const cause = client === 'fetch' ? (refused as { cause?: unknown }).cause : refused;
    expect(isBrokenCircuitError(cause)).toBe(true);
    expect(t.seen.length).toBe(2);
  });
});

describe('retryInterceptor, the defaults and the caller', () => {
  it('the default retry budget: 30 calls to a service that is down cost at most 30 + 10 retries (max(20 %, 10)), not 4 × 30', async () => {
    t = await startServer(script(status(503)));
    install({ backoff: fast });
    for (let i = 0; i < 30; i++) expect((await send('undici.request', `${t.origin}/d`)).status).toBe(503);
    expect(t.seen.length).toBeGreaterThan(30);
    expect(t.seen.length).toBeLessThanOrEqual(40);
  });

  it('an abort during the wait before a retry ends the call at once: no further request', async () => {
    t = await startServer(script(status(503, { 'retry-after': '5' })));
    install({ budget: false });
    const controller = new AbortController();
    const started = performance.now();
    const call = fetch(`${t.origin}/a`, { signal: controller.signal });
    while (t.seen.length === 0) await new Promise((r) => setTimeout(r, 5));
    setTimeout(() => controller.abort(new Error('caller gave up')), 50);
    await expect(call).rejects.toBeTruthy();
    expect(performance.now() - started).toBeLessThan(3_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(t.seen.length).toBe(1);
  });

  it('a signal aborted before the call: undici.request rejects with its reason at once and sends nothing, as without ebb', async () => {
    t = await startServer(script(status(200)));
    install({});
    const reason = new Error('aborted before the call');
    const call = request(`${t.origin}/p`, { signal: AbortSignal.abort(reason) });
    const settled = await Promise.race([
      call.then(
        () => 'resolved',
        (error: unknown) => error,
      ),
      new Promise((r) => setTimeout(() => r('still pending after 2 s'), 2_000)),
    ]);
    expect(settled).toBe(reason);
    expect(t.seen.length).toBe(0);
  });
});

const FILE = Buffer.from('0123456789'.repeat(20_000)); // 200,000 bytes
/** Sends the first half of FILE and cuts the connection, then serves ranges (206) when asked with If-Match. */
function flaky(headers: Record<string, string>) {
  let first = true;
  return (req: IncomingMessage, res: ServerResponse) => {
    const range = req.headers.range;
    if (range !== undefined) {
      const start = Number(/bytes=(\d+)-/.exec(range)?.[1]);
      if (req.headers['if-match'] !== headers.etag) {
        res.writeHead(412).end();
        return;
      }
      res.writeHead(206, {
        ...headers,
        'content-range': `bytes ${start}-${FILE.length - 1}/${FILE.length}`,
        'content-length': String(FILE.length - start),
      });
      res.end(FILE.subarray(start));
      return;
    }
    res.writeHead(200, { ...headers, 'content-length': String(FILE.length) });
    if (first) {
      first = false;
      res.write(FILE.subarray(0, 100_000), () => setTimeout(() => res.socket?.destroy(), 20));
    } else res.end(FILE);
  };
}

describe.each<Client>(['fetch', 'undici.request'])('an interrupted download under %s', (client) => {
  async function download(url: string): Promise<Buffer> {
    if (client === 'fetch') return Buffer.from(await (await fetch(url)).arrayBuffer());
    const res = await request(url);
    return Buffer.from(await res.body.arrayBuffer());
  }

  it('with a strong ETag and Accept-Ranges: resumed with Range and If-Match, the bytes whole and in order', async () => {
    t = await startServer(flaky({ etag: '"v1"', 'accept-ranges': 'bytes' }));
    install({ backoff: fast, budget: false });
    const body = await download(`${t.origin}/file`);
    expect(body.equals(FILE)).toBe(true);
    expect(t.seen.length).toBe(2);
    expect(t.seen[1]?.headers.range).toMatch(/^bytes=\d+-$/);
    expect(Number(/bytes=(\d+)-/.exec(t.seen[1]?.headers.range ?? '')?.[1])).toBeGreaterThan(0);
    expect(t.seen[1]?.headers['if-match']).toBe('"v1"');
  });

  it('without an ETag: not resumed (a Range alone could splice two versions), the error reaches the reader', async () => {
    t = await startServer(flaky({ 'accept-ranges': 'bytes' }));
    install({ backoff: fast, budget: false });
    await expect(download(`${t.origin}/file`)).rejects.toBeTruthy();
    expect(t.seen.length).toBe(1);
  });

  it('a server that answers the Range with a whole 200: not spliced, the error reaches the reader', async () => {
    let n = 0;
    t = await startServer((req, res) => {
      res.writeHead(200, { etag: '"v1"', 'accept-ranges': 'bytes', 'content-length': String(FILE.length) });
      if (n++ === 0) res.write(FILE.subarray(0, 100_000), () => setTimeout(() => res.socket?.destroy(), 20));
      else res.end(FILE);
      req.resume();
    });
    install({ backoff: fast, budget: false });
    await expect(download(`${t.origin}/file`)).rejects.toBeTruthy();
    expect(t.seen.length).toBe(2);
    expect(t.seen[1]?.headers['if-match']).toBe('"v1"');
  });

  it('with a weak ETag: not resumed, the error reaches the reader', async () => {
    t = await startServer(flaky({ etag: 'W/"v1"', 'accept-ranges': 'bytes' }));
    install({ backoff: fast, budget: false });
    await expect(download(`${t.origin}/file`)).rejects.toBeTruthy();
    expect(t.seen.length).toBe(1);
  });
});
