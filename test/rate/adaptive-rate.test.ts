// 50 clients share one adaptiveRate against a real node:http server on 127.0.0.1 that allows R
// requests per second (a token bucket; 429 beyond it), then halves R.
//
// Time is virtual, traffic is real: the server's bucket and every client's clock are one
// virtualClock, which the test moves 1 ms at a time, waiting after each step until every
// request in flight has had its real HTTP response. So a request takes no virtual time, the
// 40 s of the scenario run in a few seconds of real time, and the figures do not depend on
// the speed of the machine. (Real time would need the full 40 s and would measure the event
// loop's jitter as much as the controller.)
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exponential, fullJitter, pipeline, retrying, seeded, virtualClock } from 'ebb';
import { adaptiveRate } from 'ebb/rate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const clock = virtualClock();
let capacity = 100; // R, requests per virtual second
const burstSeconds = 0.1; // the bucket holds 100 ms worth of requests
let tokens = capacity * burstSeconds;
let refilledAt = 0;
const served: number[] = [];
const rejected: number[] = [];

const server = createServer((_req, res) => {
  const now = clock.now();
  tokens = Math.min(capacity * burstSeconds, tokens + ((now - refilledAt) / 1000) * capacity);
  refilledAt = now;
  const second = Math.floor(now / 1000);
  served[second] ??= 0;
  rejected[second] ??= 0;
  if (tokens >= 1) {
    tokens -= 1;
    served[second]++;
    res.end('ok');
  } else {
    rejected[second]++;
    res.statusCode = 429;
    res.end('slow down');
  }
});
let url = '';

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  server.closeAllConnections();
  server.close();
});

const sum = (counts: number[], from: number, to: number) => {
  let s = 0;
  for (let i = from; i < to; i++) s += counts[i] ?? 0;
  return s;
};

/** The first second from which every 1-s window up to `to` serves within ±15 % of `r`. */
const settledAt = (from: number, to: number, r: number): number => {
  let at = to;
  for (let s = to - 1; s >= from && Math.abs((served[s] ?? 0) - r) <= 0.15 * r; s--) at = s;
  return at;
};

describe('adaptiveRate over real sockets', () => {
  it('50 clients settle within ±15 % of the server’s limit within 10 s, with under 10 % rejected, and again when it halves', async () => {
    const rate = adaptiveRate({ clock }); // the defaults: unlimited until the first 429
    const backoff = exponential({ initialDelayMs: 100, maxDelayMs: 2000, jitter: fullJitter, maxAttempts: 4 });
    const random = seeded(2026);
    let inflight = 0;
    const halveAt = 20_000;
    const end = 40_000;
    const call = async () => {
      inflight++;
      try {
        const res = await fetch(url);
        await res.arrayBuffer();
        if (res.status === 429) throw Object.assign(new Error('429 Too Many Requests'), { throttled: true });
      } finally {
        inflight--;
      }
    };
    const client = async () => {
      const through = pipeline([retrying({ clock, backoff, random }), rate]);
      while (clock.now() < end) await through.execute(call).catch(() => {});
    };
    const clients = Array.from({ length: 50 }, client);
    const settle = async () => {
      do await new Promise((r) => setImmediate(r));
      while (inflight > 0);
    };
    const started = performance.now();
    for (let t = 0; t < end; t++) {
      if (t === halveAt) capacity /= 2;
      await clock.advance(1);
      await settle();
    }
    await clock.runAll();
    await Promise.all(clients);
    const realMs = performance.now() - started;

    const first = settledAt(0, 20, 100);
    const second = settledAt(20, 40, 50);
    const rejectedShare = (from: number, to: number) =>
      sum(rejected, from, to) / (sum(served, from, to) + sum(rejected, from, to));
    // Reported, for the figures quoted in the README.
    console.info(
      JSON.stringify({
        settledAfterSeconds: first,
        resettledAfterSeconds: second - 20,
        rejectedShare: [rejectedShare(first, 20), rejectedShare(second, 40)],
        servedPerSecond: served,
        rejectedPerSecond: rejected,
        realMs: Math.round(realMs),
      }),
    );

    expect(first).toBeLessThanOrEqual(10);
    expect(second - 20).toBeLessThanOrEqual(10);
    for (let s = 10; s < 20; s++) expect(Math.abs((served[s] ?? 0) - 100)).toBeLessThanOrEqual(15);
    for (let s = 30; s < 40; s++) expect(Math.abs((served[s] ?? 0) - 50)).toBeLessThanOrEqual(7.5);
    expect(rejectedShare(10, 20)).toBeLessThan(0.1);
    expect(rejectedShare(30, 40)).toBeLessThan(0.1);
    expect(rate.waiting).toBe(0);
    expect(clock.pending).toBe(0);
  });
});
