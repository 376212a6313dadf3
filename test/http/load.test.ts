import { exponential, fullJitter, seeded } from 'ebb';
import { withRetry } from 'ebb/http';
import { afterEach, describe, expect, it } from 'vitest';
import { BIG, expectNoLeaks, readBody, startServer, type TestServer } from './support/server.js';

/*
 * 2,000 concurrent requests against a server that fails 30 % of them at random —
 * 503s with bodies too big for the socket buffers, and connection resets before and after the
 * request body was read — all complete with 200, every echoed body intact, no socket leaked.
 * Bounded: 2,000 requests, each retried at most 30 times; it stops by itself.
 */

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const REQUESTS = 2000;

/** A request body of 1–8 KiB, different for every request, reproducible from its index. */
function bodyOf(i: number): Uint8Array<ArrayBuffer> {
  const random = seeded(1_000_000 + i);
  const length = 1024 + Math.floor(random() * 7 * 1024);
  const bytes = new Uint8Array(length);
  for (let k = 0; k < length; k++) bytes[k] = Math.floor(random() * 256);
  new DataView(bytes.buffer).setUint32(0, i); // and its index in the first four bytes
  return bytes;
}

describe('load against a flaky server, over sockets', () => {
  it('2,000 concurrent PUTs, 30 % failing (503s and resets): all 200, bodies intact, zero leaked sockets', async () => {
    const random = seeded(42); // the server's faults, reproducible in kind and rate
    const faults = { big503: 0, resetBeforeBody: 0, resetAfterBody: 0, ok: 0 };
    t = await startServer(async (req, res) => {
      const r = random();
      if (r < 0.075) {
        faults.resetBeforeBody++;
        req.socket.resetAndDestroy();
        return;
      }
      const body = await readBody(req).catch(() => undefined);
      if (body === undefined) return; // the client went away meanwhile
      if (r < 0.15) {
        faults.resetAfterBody++;
        req.socket.resetAndDestroy();
      } else if (r < 0.3) {
        faults.big503++;
        res.writeHead(503, { 'content-length': String(BIG.length) });
        res.end(BIG);
      } else {
        faults.ok++;
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(body);
      }
    });
    // A server failing 30 % of requests is beyond the default retry budget (20 %): this test is
    // about bodies under load and wants every request served, so it opts out.
    const f = withRetry(fetch, {
      backoff: exponential({
        initialDelayMs: 20,
        multiplier: 2,
        maxDelayMs: 1000,
        jitter: fullJitter,
        maxAttempts: 30,
      }),
      budget: false,
    });
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, i) => {
        const sent = bodyOf(i);
        const res = await f(`${t?.origin}/echo/${i}`, { method: 'PUT', body: sent });
        const echoed = new Uint8Array(await res.arrayBuffer());
        return { status: res.status, intact: Buffer.from(echoed).equals(Buffer.from(sent)) };
      }),
    );
    const elapsedMs = performance.now() - started;
    expect(results.filter((r) => r.status !== 200)).toEqual([]);
    expect(results.filter((r) => !r.intact)).toEqual([]);
    expect(faults.ok).toBe(REQUESTS);
    const failed = faults.big503 + faults.resetBeforeBody + faults.resetAfterBody;
    // The server failed close to 30 % of what it saw, and every kind of fault happened.
    expect(failed / (failed + faults.ok)).toBeGreaterThan(0.25);
    expect(failed / (failed + faults.ok)).toBeLessThan(0.35);
    expect(Math.min(faults.big503, faults.resetBeforeBody, faults.resetAfterBody)).toBeGreaterThan(50);
    await expectNoLeaks(t);
    // Measured, not asserted: reported so that a slow machine shows up in the log.
    console.info(`load: ${REQUESTS} PUTs, ${failed} injected faults, all served in ${Math.round(elapsedMs)} ms`);
  });
});
