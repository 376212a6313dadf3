import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { type ShedStats, shedFastify, shedHono, shedMiddleware } from 'ebb/middleware';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';

/*
 * shed as middleware in front of a slow handler, in the real Express 5, Fastify 5 and Hono 4
 * (on @hono/node-server), each listening on 127.0.0.1. The file compiles under the test
 * project's `strict` with no cast: the middleware's types fit each framework's own.
 */

const MAX_CONCURRENT = 2;
const MAX_QUEUE = 2;
const REQUESTS = 8;
const options = { maxConcurrent: MAX_CONCURRENT, maxQueue: MAX_QUEUE, retryAfterMs: 1_500 };

/** The slow handler's side: each request waits until the test lets it finish. */
function slow() {
  const waiting: (() => void)[] = [];
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    get waiting() {
      return waiting.length;
    },
    /** Resolves when the test releases this request. */
    hold: (): Promise<void> => {
      calls++;
      return new Promise((resolve) => waiting.push(resolve));
    },
    releaseAll: () => {
      for (const r of waiting.splice(0)) r();
    },
  };
}

interface App {
  origin: string;
  stats(): ShedStats;
  close(): Promise<void>;
}

/** A listening server's origin (node:http's Server, and what @hono/node-server's serve returns). */
async function listen(server: {
  readonly listening: boolean;
  once(event: 'listening', listener: () => void): unknown;
  address(): AddressInfo | string | null;
}): Promise<string> {
  if (!server.listening) await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const address: AddressInfo | string | null = server.address();
  if (address === null || typeof address === 'string') throw new Error(`not a TCP address: ${address}`);
  return `http://127.0.0.1:${address.port}`;
}

const frameworks: Record<string, (s: ReturnType<typeof slow>) => Promise<App>> = {
  express: async (s) => {
    const app = express();
    const gate = shedMiddleware(options);
    app.use(gate);
    app.get('/work', async (_req, res) => {
      await s.hold();
      res.send('done');
    });
    const server = app.listen(0, '127.0.0.1');
    return {
      origin: await listen(server),
      stats: gate.stats,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  },
  fastify: async (s) => {
    const app = Fastify();
    const gate = shedFastify(options);
    await app.register(gate);
    app.get('/work', async () => {
      await s.hold();
      return 'done';
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { origin: await listen(app.server), stats: gate.stats, close: () => app.close() };
  },
  hono: async (s) => {
    const app = new Hono();
    const gate = shedHono(options);
    app.use(gate);
    app.get('/work', async (c) => {
      await s.hold();
      return c.text('done');
    });
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    return {
      origin: await listen(server),
      stats: gate.stats,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  },
};

let app: App | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe.each(Object.keys(frameworks))('shed under %s', (name) => {
  it(`${REQUESTS} requests at once, ${MAX_CONCURRENT} slots and ${MAX_QUEUE} in the queue: the rest get 503 with Retry-After while the slow ones still run, and every admitted one is answered`, async () => {
    const s = slow();
    const start = frameworks[name];
    if (start === undefined) throw new Error(name);
    app = await start(s);
    const a = app;
    const answers: { status: number; retryAfter: string | null; body: string }[] = [];
    const calls = Array.from({ length: REQUESTS }, () =>
      fetch(`${a.origin}/work`, { headers: { connection: 'close' } }).then(async (res) => {
        answers.push({ status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() });
      }),
    );
    // The refusals arrive while the admitted requests are still held: at once, not after them.
    await until(() => answers.length === REQUESTS - MAX_CONCURRENT - MAX_QUEUE && s.waiting === MAX_CONCURRENT);
    const refused = answers.filter((x) => x.status === 503);
    expect(refused.length).toBe(REQUESTS - MAX_CONCURRENT - MAX_QUEUE);
    for (const r of refused) {
      expect(r.retryAfter).toBe('2'); // 1,500 ms, sent as whole seconds rounded up
      expect(r.body).toMatch(/retry after 2 s/);
    }
    expect(a.stats()).toMatchObject({
      running: MAX_CONCURRENT,
      queued: MAX_QUEUE,
      shed: REQUESTS - MAX_CONCURRENT - MAX_QUEUE,
    });
    // Nothing lost: each admitted request reaches the handler once and is answered.
    while (answers.length < REQUESTS) {
      s.releaseAll();
      await new Promise((r) => setTimeout(r, 5));
    }
    await Promise.all(calls);
    const done = answers.filter((x) => x.status === 200);
    expect(done.length).toBe(MAX_CONCURRENT + MAX_QUEUE);
    expect(done.every((x) => x.body === 'done')).toBe(true);
    expect(s.calls).toBe(MAX_CONCURRENT + MAX_QUEUE);
    await until(() => a.stats().running === 0);
    expect(a.stats()).toMatchObject({ admitted: MAX_CONCURRENT + MAX_QUEUE, queued: 0, running: 0 });
  });

  it('a request whose client leaves while it waits leaves the queue and never reaches the handler', async () => {
    const s = slow();
    const start = frameworks[name];
    if (start === undefined) throw new Error(name);
    app = await start(s);
    const a = app;
    const held = fetch(`${a.origin}/work`, { headers: { connection: 'close' } });
    await until(() => s.waiting === 1);
    // Fill the second slot so the next one queues.
    const second = fetch(`${a.origin}/work`, { headers: { connection: 'close' } });
    await until(() => s.waiting === 2);
    const leaving = new AbortController();
    const gone = fetch(`${a.origin}/work`, { signal: leaving.signal, headers: { connection: 'close' } }).catch(
      () => 'aborted',
    );
    await until(() => a.stats().queued === 1);
    leaving.abort();
    expect(await gone).toBe('aborted');
    await until(() => a.stats().left === 1 && a.stats().queued === 0);
    s.releaseAll();
    expect((await held).status).toBe(200);
    expect((await second).status).toBe(200);
    await until(() => a.stats().running === 0);
    expect(s.calls).toBe(2);
    expect(a.stats()).toMatchObject({ admitted: 2, left: 1, shed: 0 });
  });
});

describe('a factory handed to the framework as the middleware itself (no call)', () => {
  it('Express, Fastify and Hono each get a TypeError that says to call it, not one naming the request’s keys', async () => {
    const said =
      /called as the middleware itself\. Call shed(Middleware|Fastify|Hono)\(\{ maxConcurrent \}\) and pass what it returns\./;

    const ex = express();
    ex.use(shedMiddleware as never);
    let caught: unknown;
    ex.use((error: unknown, _req: unknown, res: { status(n: number): { send(s: string): void } }, _next: unknown) => {
      caught = error;
      res.status(500).send('failed');
    });
    const server = ex.listen(0, '127.0.0.1');
    try {
      const res = await fetch(`${await listen(server)}/`);
      expect(res.status).toBe(500);
      await res.text();
      expect(String(caught)).toMatch(said);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }

    const fa = Fastify();
    await expect(fa.register(shedFastify as never).ready()).rejects.toThrow(said);
    await fa.close();

    const ho = new Hono();
    ho.onError((error, c) => c.text(String(error), 500));
    ho.use(shedHono as never);
    ho.get('/', (c) => c.text('ok'));
    const answer = await ho.request('/');
    expect(answer.status).toBe(500);
    expect(await answer.text()).toMatch(said);
  });
});
