import { type VirtualClock, virtualClock } from 'ebb';
import { type WithRetryOptions, withRetry } from 'ebb/http';
import { afterEach, describe, expect, it } from 'vitest';
import { expectNoLeaks, startServer, type TestServer } from './support/server.js';

/*
 * What withRetry's defaults cost a service that is down, measured where it counts: the requests
 * a real node:http server on 127.0.0.1 receives, through Node's own fetch over real sockets.
 * The options are the defaults (exponential 100 ms ×2, full jitter, 5 attempts; the default
 * retry budget of max(20 % of calls, 10) per origin over a 10 s window) with one change: a
 * virtual clock, so the backoff waits and the budget's window pass in virtual time and the
 * test takes a second or two of real time.
 *
 * Calls arrive at a steady 20 a second (one every 50 ms of virtual time) and overlap: a call's
 * retries are still waiting while later calls start. Each call puts its index in the path, so
 * every request the server sees is counted against the call that sent it.
 */

let servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

/** Calls arrive every 50 ms of virtual time: 20 a second. */
const GAP_MS = 50;

/**
 * Runs `calls` logical calls through `withRetry(fetch, { clock, ...options })` against a server
 * that answers the k-th request it receives (1-based) with `status(k)`. Returns the status each
 * call ended with and the requests the server received for each call.
 */
async function crowd(calls: number, status: (k: number) => number, options: WithRetryOptions = {}) {
  const requestsOf = new Array<number>(calls).fill(0);
  const t = await startServer((req, res) => {
    const i = Number(/^\/call\/(\d+)$/.exec(req.url ?? '')?.[1]);
    requestsOf[i] = (requestsOf[i] ?? 0) + 1;
    const code = status(t.seen.length);
    res.writeHead(code, { 'content-type': 'text/plain' });
    res.end(code === 200 ? 'ok' : 'down');
  });
  servers.push(t);
  const clock: VirtualClock = virtualClock();
  const f = withRetry(fetch, { clock, ...options });
  const ended = new Array<number>(calls).fill(0);
  let settled = 0;
  const started: Promise<void>[] = [];
  for (let i = 0; i < calls; i++) {
    started.push(
      f(`${t.origin}/call/${i}`).then(async (res) => {
        // The body of the response a call ends with is the caller's: read it, so no socket is held.
        await res.arrayBuffer();
        ended[i] = res.status;
        settled++;
      }),
    );
    await tick(clock);
  }
  // The last calls' retries: step the clock while they sleep, let the sockets work while they do not.
  while (settled < calls) {
    if (clock.pending > 0) await clock.advance(10);
    else await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(started);
  await expectNoLeaks(t);
  return { ended, requestsOf, received: t.seen.length };
}

/** 50 ms of virtual time, with a real millisecond for the sockets in each 10 ms. */
async function tick(clock: VirtualClock): Promise<void> {
  for (let ms = 0; ms < GAP_MS; ms += 10) {
    await clock.advance(10);
    await new Promise((r) => setTimeout(r, 1));
  }
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

describe("withRetry's defaults against a real server that is down (every response 503)", () => {
  it('400 calls at 20 a second: once the floor of 10 retries is spent, at most 1.2 requests a call reach the server, not 5', async () => {
    const calls = 400;
    const { ended, requestsOf, received } = await crowd(calls, () => 503);
    // Every call ends with the server's last answer: the 503, returned as it is, not thrown.
    expect(new Set(ended)).toEqual(new Set([503]));
    expect(received).toBe(sum(requestsOf));
    // The floor: the first calls get their retries while the window holds too few calls for
    // 20 % of them to reach 10, so the first seconds cost more than 1.2 a call.
    const first = requestsOf.slice(0, 20);
    expect(sum(first)).toBeGreaterThanOrEqual(20 + 10);
    // Past the first 5 s (100 calls, the window's 20 % well above the floor): the ratio binds.
    const later = requestsOf.slice(100);
    // One request of slack: the budget bounds sums decayed over its window, and this counts
    // requests plainly, so a retry granted near the 100th call may fall on either side of it.
    expect(sum(later)).toBeLessThanOrEqual(1.2 * later.length + 1);
    const perCall = sum(later) / later.length;
    // And it is the ratio that binds, not something stricter: the 20 % is used, not lost.
    expect(perCall).toBeGreaterThanOrEqual(1.1);
    // The whole run, floor included: at most 20 % more requests than calls, plus the floor.
    expect(received).toBeLessThanOrEqual(1.2 * calls + 10);
  });

  it('budget: false, the same outage: every call sends its 5 requests (the load the default budget saves)', async () => {
    const calls = 60;
    const { ended, requestsOf } = await crowd(calls, () => 503, { budget: false });
    expect(new Set(ended)).toEqual(new Set([503]));
    expect(requestsOf).toEqual(new Array(calls).fill(5));
  });
});

describe("withRetry's defaults against a real server in a blip (every 10th request it receives is a 503)", () => {
  it('400 calls at 20 a second: every failed call is retried and ends 200; the retries are exactly the 503s', async () => {
    const calls = 400;
    const { ended, requestsOf, received } = await crowd(calls, (k) => (k % 10 === 0 ? 503 : 200));
    expect(new Set(ended)).toEqual(new Set([200]));
    // Each call sent one request per 503 it met, plus the one that succeeded.
    const failedCalls = requestsOf.filter((n) => n > 1).length;
    expect(failedCalls).toBeGreaterThanOrEqual(Math.floor(calls / 10) - 1);
    expect(received - calls).toBe(Math.floor(received / 10));
  });
});
