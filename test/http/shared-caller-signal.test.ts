import { getEventListeners } from 'node:events';
import { constant, noJitter } from 'ebb';
import { withRetry } from 'ebb/http';
import { afterEach, describe, expect, it } from 'vitest';
import { gc } from './support/gc.js';
import { startServer, type TestServer } from './support/server.js';

/*
 * A service passes one long-lived signal — its shutdown signal — to every request. Each request
 * must leave nothing behind on it once it is over and collected: no `abort` listener and, on
 * Node.js 20, no entry in the signal's list of dependants (where `AbortSignal.any` leaves one per
 * combined signal until the source aborts: 100,000 requests kept 100,000 entries). The signal
 * must still abort a request in flight.
 */

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Node.js's own list of the signals that depend on `signal` (absent where there is none). */
function dependants(signal: AbortSignal): number {
  const key = Object.getOwnPropertySymbols(signal).find((s) => s.description === 'kDependantSignals');
  const set = key === undefined ? undefined : (signal as unknown as Record<symbol, unknown>)[key];
  // Node.js's internal SafeSet, not a Set of this realm.
  const size = (set as { size?: unknown } | undefined)?.size;
  return typeof size === 'number' ? size : 0;
}

/** Collects until the listeners on `signal` are gone (finalizers run after a collection), at most 2 s. */
async function collected(signal: AbortSignal): Promise<number> {
  for (let i = 0; i < 200 && getEventListeners(signal, 'abort').length > 0; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return getEventListeners(signal, 'abort').length;
}

const quick = constant({ delayMs: 1, maxAttempts: 3, jitter: noJitter });

describe("withRetry with one long-lived caller signal (a service's shutdown signal)", () => {
  it('3,000 requests (503 then 200) leave no listener and no dependant on it; it still aborts one in flight', async () => {
    // Each path: 503 the first time, 200 the next.
    const tried = new Set<string>();
    server = await startServer((req, res) => {
      const again = tried.has(req.url as string);
      tried.add(req.url as string);
      res.writeHead(again ? 200 : 503, { 'content-length': '2' });
      res.end('ok');
    });
    const shutdown = new AbortController();
    const f = withRetry(fetch, { backoff: quick, budget: false }); // every request retried once
    for (let batch = 0; batch < 30; batch++) {
      await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          const res = await f(`${(server as TestServer).origin}/${batch}/${i}`, { signal: shutdown.signal });
          expect(res.status).toBe(200);
          await res.text();
        }),
      );
    }
    expect(await collected(shutdown.signal)).toBe(0);
    expect(dependants(shutdown.signal)).toBe(0);

    // A request the server never answers: the shutdown aborts it.
    server.server.removeAllListeners('request');
    server.server.on('request', () => {});
    const pending = f(`${server.origin}/stall`, { signal: shutdown.signal });
    setTimeout(() => shutdown.abort(new Error('shutting down')), 50);
    await expect(pending).rejects.toThrow('shutting down');
    server.server.closeAllConnections();
  }, 60_000);
});
