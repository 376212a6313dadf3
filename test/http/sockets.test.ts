import { constant, noJitter, timeout } from 'ebb';
import { withRetry } from 'ebb/http';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, startServer, type TestServer } from './support/server.js';

/*
 * Which connections does a server still hold after `withRetry(fetch, { use: [timeout(ms)] })`
 * gives up on it, and whose are they? Measured against a real node:http
 * server that never answers; docs/http-notes.md records the figures.
 */

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const OPERATIONS = 5;
/** undici's default keep-alive timeout (Node 20's undici 6 and Node 24's undici 7): 4 s. */
const UNDICI_KEEP_ALIVE_MS = 4_000;

/** N concurrent operations against a server that never answers; resolves when all gave up. */
async function giveUp(run: (url: string) => Promise<unknown>): Promise<unknown[]> {
  t = await startServer(() => {}); // never answers
  const url = `${(t as TestServer).origin}/never`;
  return Promise.all(
    Array.from({ length: OPERATIONS }, () =>
      run(url).then(
        () => 'resolved',
        (e: unknown) => e,
      ),
    ),
  );
}

const retrying = (init?: RequestInit) => (url: string) =>
  withRetry(fetch, { use: [timeout(200)], backoff: constant({ delayMs: 50, maxAttempts: 3, jitter: noJitter }) })(
    url,
    init,
  );

const bare = async (url: string) => {
  let last: unknown;
  for (let i = 0; i < 3; i++) {
    try {
      await fetch(url, { signal: AbortSignal.timeout(200) });
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw last;
};

describe('connections after timed-out attempts', () => {
  it('every connection that carried a timed-out attempt closes at once; what stays is no request of ours', async () => {
    const outcomes = await giveUp(retrying());
    for (const o of outcomes) expect(o).toMatchObject({ name: 'RetryError', attempts: 3 });
    const server = t as TestServer;
    expect(server.seen).toHaveLength(OPERATIONS * 3);
    // Aborting an attempt destroys its socket: no connection that carried a request survives it.
    // (The server never answers, so a socket left open would stay for minutes; 3 s is the margin
    // for a busy machine — 1 s was missed once at load 25–40.)
    expect(await eventually(() => server.openRequestConnections() === 0 && server.openResponses() === 0, 3_000)).toBe(
      true,
    );
    // What remains are fetch's own spare connections (undici reconnects after destroying one):
    // at most one per operation, none of which ever carried a request.
    const spares = await server.connections();
    expect(spares).toBeLessThanOrEqual(OPERATIONS);
    // fetch closes them itself, after its keep-alive timeout — nothing here destroys them.
    expect(await eventually(async () => (await server.connections()) === 0, UNDICI_KEEP_ALIVE_MS + 4_000)).toBe(true);
  });

  it('bare fetch with AbortSignal.timeout leaves the same: the spares are fetch’s, not ebb’s', async () => {
    const outcomes = await giveUp(bare);
    for (const o of outcomes) expect(o).toMatchObject({ name: 'TimeoutError' });
    const server = t as TestServer;
    expect(await eventually(() => server.openRequestConnections() === 0, 3_000)).toBe(true);
    expect(await server.connections()).toBeLessThanOrEqual(OPERATIONS);
    expect(await eventually(async () => (await server.connections()) === 0, UNDICI_KEEP_ALIVE_MS + 4_000)).toBe(true);
  });

  it('init.dispatcher reaches fetch: an Agent with a short keepAliveTimeout frees the spares within a second', async () => {
    // The Agent class of Node's bundled undici, reached through its global dispatcher (a caller
    // would `import { Agent } from 'undici'`; ebb itself has no dependency to offer one).
    await fetch('http://127.0.0.1:1').catch(() => {});
    const global = (globalThis as Record<symbol, unknown>)[Symbol.for('undici.globalDispatcher.1')];
    const Agent = (global as { constructor: new (o: object) => { close(): Promise<void> } }).constructor;
    const dispatcher = new Agent({ keepAliveTimeout: 100 });
    try {
      const init = { dispatcher } as RequestInit;
      const seenInit: (RequestInit | undefined)[] = [];
      const spy: typeof fetch = (input, i) => {
        seenInit.push(i);
        return fetch(input, i);
      };
      t = await startServer(() => {});
      const url = `${t.origin}/never`;
      const f = withRetry(spy, {
        use: [timeout(200)],
        backoff: constant({ delayMs: 50, maxAttempts: 3, jitter: noJitter }),
      });
      await Promise.all(Array.from({ length: OPERATIONS }, () => f(url, init).catch(() => {})));
      expect(seenInit.every((i) => (i as { dispatcher?: unknown }).dispatcher === dispatcher)).toBe(true);
      const server = t;
      expect(await eventually(async () => (await server.connections()) === 0, 1_500)).toBe(true);
    } finally {
      await dispatcher.close();
    }
  });
});
