// withRetry({ hedge }) against a real node:http server on 127.0.0.1: an idempotent request is
// hedged and the loser's socket is closed at the server; a POST is never hedged; a hedged
// attempt's retryable status (a fast 503) does not beat a slow 200.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { constant, noJitter } from 'ebb';
import { withRetry } from 'ebb/http';
import { hedging } from 'ebb/resilience';
import { afterEach, describe, expect, it } from 'vitest';

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/** Answers request i after `delays[i]` ms (the last delay for later ones) with `statuses[i]`. */
async function start(delays: number[], statuses: number[] = []) {
  const ended: string[] = [];
  let n = 0;
  server = createServer((_req, res) => {
    const i = n++;
    res.statusCode = statuses[Math.min(i, statuses.length - 1)] ?? 200;
    const timer = setTimeout(() => res.end(`r${i}`), delays[Math.min(i, delays.length - 1)]);
    res.on('close', () => {
      clearTimeout(timer);
      ended.push(`${i}:${res.writableFinished ? 'finished' : 'cut off'}`);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, ended, requests: () => n };
}

const until = async (check: () => boolean, ms = 3_000) => {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
};
const always = { tryAcquireRetry: () => true, recordSuccess() {} };

describe('withRetry({ hedge })', () => {
  it('hedges a GET: the hedge wins, the loser’s socket is closed at the server', async () => {
    const s = await start([5_000, 0]);
    const fetchHedged = withRetry(fetch, { hedge: hedging({ delayMs: 100, budget: always }) });
    const t = performance.now();
    const res = await fetchHedged(s.url);
    expect(await res.text()).toBe('r1');
    expect(performance.now() - t).toBeLessThan(2_500);
    await until(() => s.ended.length === 2);
    expect(s.ended.sort()).toEqual(['0:cut off', '1:finished']);
  });

  it('never hedges a POST: one request, however slow', async () => {
    const s = await start([400, 0]);
    const hedger = hedging({ delayMs: 50, budget: always });
    const res = await withRetry(fetch, { hedge: hedger })(s.url, { method: 'POST', body: 'x' });
    expect(await res.text()).toBe('r0');
    expect(s.requests()).toBe(1);
    expect(hedger.stats.hedges).toBe(0);
  });

  it('a hedged attempt’s fast 503 does not win over a slow 200', async () => {
    // Request 0: a 200 after 300 ms; request 1 (the hedge, at 50 ms): a 503 at once.
    const s = await start([300, 0], [200, 503]);
    const fetchHedged = withRetry(fetch, {
      hedge: hedging({ delayMs: 50, budget: always }),
      backoff: constant({ delayMs: 0, maxAttempts: 1, jitter: noJitter }),
    });
    const res = await fetchHedged(s.url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('r0');
    expect(s.requests()).toBe(2);
  });

  it('refuses a hedge that is not a hedging(), naming the option', () => {
    expect(() => withRetry(fetch, { hedge: {} as never })).toThrow(/`hedge`/);
  });
});
