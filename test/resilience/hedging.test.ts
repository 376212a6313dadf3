// Hedging against a real node:http server on 127.0.0.1: the loser's request is cut off at the
// socket (the server sees its response closed before it finished), and a POST is never hedged.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hedging } from 'ebb/resilience';
import { afterEach, describe, expect, it } from 'vitest';

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/** The first request hangs for 5 s; later ones answer at once. Records how each response ended. */
async function start() {
  const ended: string[] = [];
  let n = 0;
  server = createServer((_req, res) => {
    const i = n++;
    const timer = setTimeout(() => res.end(`r${i}`), i === 0 ? 5_000 : 0);
    res.on('close', () => {
      clearTimeout(timer);
      ended.push(`${i}:${res.writableFinished ? 'finished' : 'cut off'}`);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const get =
    (method: string) =>
    async ({ signal }: { signal: AbortSignal }) => {
      const res = await fetch(url, { method, signal });
      return res.text();
    };
  return { ended, get, requests: () => n };
}

const until = async (check: () => boolean, ms = 3_000) => {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
};

describe('hedging against a real server', () => {
  it('the hedge wins and the slow loser’s request is closed at the server', async () => {
    const s = await start();
    const h = hedging({ delayMs: 100, budget: { tryAcquireRetry: () => true, recordSuccess() {} } });
    const t = performance.now();
    expect(await h.run(s.get('GET'), { method: 'GET' })).toBe('r1');
    // Far below the loser's 5 s, with room for a busy machine.
    expect(performance.now() - t).toBeLessThan(2_500);
    await until(() => s.ended.length === 2);
    expect(s.ended.sort()).toEqual(['0:cut off', '1:finished']);
  }, 10_000);

  it('never hedges a POST, however slow', async () => {
    const s = await start();
    const h = hedging({ delayMs: 20, budget: { tryAcquireRetry: () => true, recordSuccess() {} } });
    const controller = new AbortController();
    const p = h.run(s.get('POST'), { method: 'POST', signal: controller.signal }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 300));
    expect(s.requests()).toBe(1);
    controller.abort(new Error('done'));
    expect(await p).toMatchObject({ message: 'done' });
    await until(() => s.ended.length === 1);
    expect(s.ended).toEqual(['0:cut off']);
  }, 10_000);
});
