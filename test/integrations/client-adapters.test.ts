import type { IncomingMessage, ServerResponse } from 'node:http';
import axios, { isAxiosError } from 'axios';
import { exponential, noJitter, retrying } from 'ebb';
import { type ClientRetryOptions, withRetryAxios, withRetryGot, withRetryKy } from 'ebb/clients';
import { circuitBreaker, isBrokenCircuitError } from 'ebb/resilience';
import got, { HTTPError as GotHTTPError } from 'got';
import ky, { HTTPError as KyHTTPError } from 'ky';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../http/support/server.js';

/*
 * The axios, ky and got adapters against a real node:http server on 127.0.0.1, with the real
 * clients from npm: the same outcomes as the undici interceptor, and the server never sees more
 * requests than ebb's policy allows (each client's own retry is off).
 */

const MAX = 4;
const fast = exponential({ initialDelayMs: 1, maxDelayMs: 5, jitter: noJitter, maxAttempts: MAX });

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

function script(...codes: [number, Record<string, string>?][]) {
  let i = 0;
  return (req: IncomingMessage, res: ServerResponse) => {
    const [code, headers = {}] = codes[Math.min(i++, codes.length - 1)] as [number, Record<string, string>?];
    req.resume();
    req.on('end', () => {
      res.writeHead(code, { 'content-type': 'text/plain', connection: 'close', ...headers });
      res.end(code === 200 ? 'ok' : `status ${code}`);
    });
  };
}

type Options = Pick<ClientRetryOptions, 'use' | 'maxRetryAfterMs' | 'backoff'>;
/** One call by each client, reduced to its status (a client's HTTP error gives its response's status). */
type Call = (
  url: string,
  init?: { method?: string; headers?: Record<string, string>; body?: string },
) => Promise<number>;
const clients: Record<string, (o: Options) => Call> = {
  axios: (o) => {
    const api = axios.create({
      adapter: withRetryAxios(axios.getAdapter(axios.defaults.adapter), { budget: false, backoff: fast, ...o }),
    });
    return async (url, init = {}) => {
      try {
        return (await api.request({ url, method: init.method ?? 'GET', headers: init.headers, data: init.body }))
          .status;
      } catch (error) {
        if (isAxiosError(error) && error.response) return error.response.status;
        throw error;
      }
    };
  },
  ky: (o) => {
    // ky's timeout (10 s by default) bounds the whole call, ebb's waits included.
    const api = withRetryKy(ky.extend({ timeout: 60_000 }), { budget: false, backoff: fast, ...o });
    return async (url, init = {}) => {
      try {
        return (await api(url, { method: init.method ?? 'GET', headers: init.headers, body: init.body })).status;
      } catch (error) {
        if (error instanceof KyHTTPError) return error.response.status;
        throw error;
      }
    };
  },
  got: (o) => {
    const call = withRetryGot(got, { budget: false, backoff: fast, ...o });
    return async (url, init = {}) => {
      try {
        return (await call(url, { method: init.method ?? 'GET', headers: init.headers, body: init.body })).statusCode;
      } catch (error) {
        if (error instanceof GotHTTPError) return error.response.statusCode;
        throw error;
      }
    };
  },
};

describe.each(Object.keys(clients))('%s through ebb', (name) => {
  const make = clients[name] as (o: Options) => Call;

  it('503, 503, 200: retried to the 200, the first wait at least the Retry-After of 1 s', async () => {
    t = await startServer(script([503, { 'retry-after': '1' }], [503], [200]));
    expect(await make({})(`${t.origin}/r`)).toBe(200);
    expect(t.seen.length).toBe(3);
    const [a, b, c] = t.seen.map((s) => s.at) as [number, number, number];
    expect(b - a).toBeGreaterThanOrEqual(990);
    expect(c - b).toBeLessThan(900);
  });

  it(`a service that stays down: exactly ${MAX} requests (the policy's maxAttempts), the client's own retry off, the last 503 returned`, async () => {
    t = await startServer(script([503]));
    expect(await make({})(`${t.origin}/r`)).toBe(503);
    expect(t.seen.length).toBe(MAX);
  });

  it('a Retry-After above maxRetryAfterMs: one request, its 503 returned', async () => {
    t = await startServer(script([503, { 'retry-after': '120' }], [200]));
    expect(await make({ maxRetryAfterMs: 60_000 })(`${t.origin}/r`)).toBe(503);
    expect(t.seen.length).toBe(1);
  });

  it('a POST without Idempotency-Key is sent once; with one, retried to the 200', async () => {
    t = await startServer(script([503]));
    const call = make({});
    expect(await call(`${t.origin}/p`, { method: 'POST', body: 'order' })).toBe(503);
    expect(t.seen.length).toBe(1);
    await t.close();
    t = await startServer(script([503], [503], [200]));
    const keyed = { method: 'POST', body: 'order', headers: { 'idempotency-key': 'k-1' } };
    expect(await call(`${t.origin}/p`, keyed)).toBe(200);
    expect(t.seen.length).toBe(3);
  });

  it('an open breaker: refused at once, no request leaves', async () => {
    t = await startServer(script([503]));
    const breaker = circuitBreaker({ consecutiveFailures: 2 });
    const call = make({
      use: [breaker],
      backoff: exponential({ initialDelayMs: 1, jitter: noJitter, maxAttempts: 2 }),
    });
    expect(await call(`${t.origin}/b`)).toBe(503);
    expect(t.seen.length).toBe(2);
    const refused = await call(`${t.origin}/b`).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isBrokenCircuitError(refused)).toBe(true);
    expect(t.seen.length).toBe(2);
  });
});

describe('got through ebb: its own retry stays off', () => {
  it(`a request that asks got to retry (retry: { limit: 2 }) still sends ${MAX} requests, not ${MAX} × 3`, async () => {
    t = await startServer(script([503]));
    const call = withRetryGot(got, { budget: false, backoff: fast });
    const res = await call(`${t.origin}/g`, { retry: { limit: 2 }, throwHttpErrors: false });
    expect(res.statusCode).toBe(503);
    expect(t.seen.length).toBe(MAX);
  });

  it('isStream: true is refused with a TypeError and sends nothing (it resolved undefined, and a 503 crashed the process)', async () => {
    t = await startServer(script([503]));
    const call = withRetryGot(got, { budget: false, backoff: fast });
    await expect(call(`${t.origin}/s`, { isStream: true } as never)).rejects.toThrow(
      new TypeError(
        'withRetryGot(): `isStream: true` is not supported: a stream reaches you before its response is known, so no attempt could be judged or retried. Call got.stream() without ebb, or leave isStream out.',
      ),
    );
    await new Promise((r) => setTimeout(r, 50));
    expect(t.seen.length).toBe(0);
  });
});

describe("ky through ebb: ky's own errors, and ky's timeout", () => {
  /** What a call rejected with (undefined: it resolved). */
  const thrown = (p: Promise<unknown>): Promise<unknown> =>
    p.then(
      () => undefined,
      (e: unknown) => e,
    );
  const codeOf = (e: unknown): unknown => (e as { cause?: { code?: unknown } }).cause?.code;

  it('a connection reset on every attempt: ky rejects with fetch’s own error, as ky without ebb does, after the policy’s attempts', async () => {
    t = await startServer((req) => req.socket.destroy());
    const bare = await thrown(ky(`${t.origin}/reset`, { retry: 0 }));
    expect(t.seen.length).toBe(1);
    const error = await thrown(withRetryKy(ky, { budget: false, backoff: fast })(`${t.origin}/reset`));
    expect(t.seen.length).toBe(1 + MAX);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).constructor).toBe((bare as Error).constructor);
    expect((error as Error).message).toBe((bare as Error).message);
    expect(codeOf(error)).toBe(codeOf(bare));
    expect(codeOf(error)).toBe('UND_ERR_SOCKET');
  });

  it('a refused connection: fetch’s own TypeError (ECONNREFUSED), whether the attempts, the time budget or the retry budget ended the retries', async () => {
    t = await startServer(() => {});
    const url = `${t.origin}/refused`;
    await t.close();
    t = undefined;
    let sent = 0;
    const counting = ((input: RequestInfo | URL, init?: RequestInit) => {
      sent++;
      return fetch(input, init);
    }) as typeof fetch;
    const refuses = { tryAcquireRetry: () => false, recordSuccess: () => {} };
    const endings: [ClientRetryOptions, number][] = [
      [{ budget: false, backoff: fast }, MAX],
      [{ budget: false, backoff: exponential({ initialDelayMs: 50, jitter: noJitter, maxElapsedMs: 120 }) }, 2],
      [{ budget: refuses, backoff: fast }, 1],
    ];
    for (const [options, attempts] of endings) {
      sent = 0;
      const error = await thrown(withRetryKy(ky, options, counting)(url));
      expect(sent).toBe(attempts);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toBe('fetch failed');
      expect(codeOf(error)).toBe('ECONNREFUSED');
    }
  });

  it('a Retry-After longer than ky’s timeout: the 503 at once, as ky’s HTTPError, after one request', async () => {
    t = await startServer(script([503, { 'retry-after': '2' }], [200]));
    const api = withRetryKy(ky.extend({ timeout: 1_000 }), { budget: false, backoff: fast });
    const started = performance.now();
    const error = await thrown(api.get(`${t.origin}/ra`));
    expect(error).toBeInstanceOf(KyHTTPError);
    expect((error as InstanceType<typeof KyHTTPError>).response.status).toBe(503);
    expect(performance.now() - started).toBeLessThan(900);
    expect(t.seen.length).toBe(1);
  });

  it('a maxRetryAfterMs longer than ky’s timeout is refused at once; with a longer timeout, a Retry-After within it is waited', async () => {
    expect(() => withRetryKy(ky, { maxRetryAfterMs: 30_000 })).toThrow(RangeError);
    expect(() => withRetryKy(ky, { maxRetryAfterMs: 30_000 })).toThrow(/`maxRetryAfterMs`.*ky's timeout, 10000 ms/);
    expect(() => withRetryKy(ky.extend({ timeout: false }), { maxRetryAfterMs: 30_000 })).not.toThrow();
    // Its messages name it, not the withRetry() it is built on.
    expect(() => withRetryKy(ky, { retries: 3 } as never)).toThrow(/^withRetryKy\(\): `retries` moved/);
    t = await startServer(script([503, { 'retry-after': '1' }], [200]));
    const api = withRetryKy(ky.extend({ timeout: 5_000 }), { budget: false, backoff: fast, maxRetryAfterMs: 3_000 });
    expect(await api.get(`${t.origin}/ra`).text()).toBe('ok');
    expect(t.seen.length).toBe(2);
    const [a, b] = t.seen.map((s) => s.at) as [number, number];
    expect(b - a).toBeGreaterThanOrEqual(990);
  });

  it('a retrying() in use is refused: use runs inside the adapter’s own retry, where a second multiplies the attempts', () => {
    expect(() => withRetryGot(got, { use: [retrying()] })).toThrow(
      new TypeError(
        "withRetryGot(): `use[0]` is a retrying(): `use` runs inside withRetryGot()'s own retry, where a second one multiplies the attempts. Give its options to withRetryGot() instead.",
      ),
    );
  });

  it('what an adapter is given is checked when it is made: axios itself, or no function, where the adapter goes', () => {
    // axios itself where its adapter goes called itself without end at the first request.
    expect(() => withRetryAxios(axios as never)).toThrow(
      new TypeError(
        'withRetryAxios(): got axios itself where its adapter goes. Pass axios.getAdapter(axios.defaults.adapter).',
      ),
    );
    expect(() => withRetryAxios('http' as never)).toThrow(/expected `adapter` to be an axios adapter/);
  });
});

describe("axios through ebb: responseType 'stream'", () => {
  it('the streams of the retried responses are closed, the 503s axios rejected as well: the server holds only the one the caller got', async () => {
    // Each response sends 64 KiB and never ends: only the client closing it frees its connection.
    t = await startServer((req, res) => {
      req.resume();
      res.writeHead(503, { 'content-type': 'application/octet-stream' });
      res.write(Buffer.alloc(64 * 1024));
    });
    const api = axios.create({
      adapter: withRetryAxios(axios.getAdapter(axios.defaults.adapter), { budget: false, backoff: fast }),
    });
    const error: unknown = await api.get(`${t.origin}/s`, { responseType: 'stream' }).then(
      () => 'resolved',
      (e: unknown) => e,
    );
    if (!isAxiosError(error) || !error.response)
      throw new Error(`expected axios's error with a response, got ${error}`);
    expect(error.response.status).toBe(503);
    expect(t.seen.length).toBe(MAX);
    const server = t;
    // Waits up to 2 s for the open responses to come down to `n`.
    const openAfter = async (n: number) => {
      for (let i = 0; i < 100 && server.openResponses() > n; i++) await new Promise((r) => setTimeout(r, 20));
      return server.openResponses();
    };
    expect(await openAfter(1)).toBe(1);
    (error.response.data as { destroy(): void }).destroy();
    expect(await openAfter(0)).toBe(0);
  });
});
