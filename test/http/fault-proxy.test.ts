import { exponential, fullJitter, pipeline, RetryError, retrying, seeded, timeout } from 'ebb';
import { isNetworkError, withRetry } from 'ebb/http';
import { afterEach, describe, expect, it } from 'vitest';
import { FAULT_MIX, type FaultProxy, startFaultProxy } from './support/fault-proxy.js';
import { expectNoLeaks, startServer, type TestServer } from './support/server.js';

/*
 * A TCP proxy between Node's fetch and a real node:http server resets, stalls,
 * truncates and slows connections at random (seeded). Every response the client accepts must
 * be exactly right; everything else must be a clear error — never a short or altered body.
 * With ebb's retry() around the whole read, every request ends right.
 */

let upstream: TestServer | undefined;
let proxy: FaultProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  await upstream?.close();
  proxy = upstream = undefined;
});

/** The content of /blob/<i>: 20–60 kB of bytes reproducible from i. */
function blob(i: number): Buffer {
  const random = seeded(7_000 + i);
  const bytes = Buffer.alloc(20_000 + Math.floor(random() * 40_000));
  for (let k = 0; k < bytes.length; k++) bytes[k] = Math.floor(random() * 256);
  return bytes;
}

/**
 * Serves /blob/<i>: even i with Content-Length and `Connection: close` (one request a
 * connection, so each gets its own fault), odd i chunked on a keep-alive connection.
 *
 * Not chunked with `Connection: close`: Node's fetch up to undici 6.24 (Node 20.20.2 here) takes
 * the end of such a connection for the end of the body, so a cut chunked body arrives short
 * with no error (nodejs/undici#5273, backported to 6.x in #5308, not yet in this Node). No
 * client library above fetch can see that: the HTTP framing never reaches it.
 */
async function blobServer(): Promise<TestServer> {
  return startServer((req, res) => {
    const i = Number(req.url?.split('/')[2]);
    const bytes = blob(i);
    if (i % 2 === 0) {
      res.writeHead(200, { 'content-length': String(bytes.length), connection: 'close' });
      res.end(bytes);
    } else {
      res.writeHead(200); // chunked, keep-alive
      const third = Math.floor(bytes.length / 3);
      res.write(bytes.subarray(0, third));
      res.write(bytes.subarray(third, 2 * third));
      res.end(bytes.subarray(2 * third));
    }
  });
}

/** Runs `task` over 0..n-1 with at most `width` at once. */
async function pool<T>(n: number, width: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await task(i);
      }
    }),
  );
  return out;
}

/** Names an outcome: 'ok', or the kind of clear error; 'CORRUPT' and 'unclear: …' fail the test. */
function kind(error: unknown): string {
  if (error instanceof RetryError)
    return isNetworkError(error.cause) || (error.cause as Error).name === 'TimeoutError'
      ? 'gave up'
      : `unclear: ${error.message}`;
  if (error instanceof TypeError && error.message === 'terminated' && isNetworkError(error)) return 'cut mid-body';
  if (error instanceof TypeError && error.message === 'fetch failed' && isNetworkError(error))
    return 'connection failed';
  if ((error as Error)?.name === 'TimeoutError') return 'timed out';
  return `unclear: ${(error as Error)?.name} ${(error as Error)?.message} ${String((error as Error)?.cause)}`;
}

const N = 120;

describe('a fault-injecting TCP proxy (seeded): every accepted response exact, every other outcome a clear error', () => {
  it('withRetry alone: every accepted response is exactly right, every failure a clear error', async () => {
    upstream = await blobServer();
    proxy = await startFaultProxy(Number(new URL(upstream.origin).port), seeded(20261121));
    // The proxy breaks most connections on purpose. The default retry budget would rightly stop
    // retrying a service this broken; these tests are about the bytes of each outcome, so every
    // request runs its attempts.
    const f = withRetry(fetch, {
      use: [timeout(250)],
      budget: false,
      backoff: exponential({ initialDelayMs: 10, multiplier: 2, maxDelayMs: 100, jitter: fullJitter, maxAttempts: 4 }),
    });
    const outcomes = await pool(N, 8, async (i) => {
      try {
        const res = await f(`${proxy?.origin}/blob/${i}`, { signal: AbortSignal.timeout(600) });
        const bytes = Buffer.from(await res.arrayBuffer());
        if (res.status !== 200) return `status ${res.status}`;
        return bytes.equals(blob(i)) ? 'ok' : 'CORRUPT';
      } catch (error) {
        return kind(error);
      }
    });
    const tally: Record<string, number> = {};
    for (const o of outcomes) tally[o] = (tally[o] ?? 0) + 1;
    const bad = Object.keys(tally).filter((k) => k === 'CORRUPT' || k.startsWith('unclear') || k.startsWith('status'));
    expect(bad, JSON.stringify(tally)).toEqual([]);
    expect(tally.ok ?? 0, JSON.stringify(tally)).toBeGreaterThan(N / 2);
    // The faults did happen: every kind, several times.
    for (const [fault] of FAULT_MIX)
      expect(proxy.counts[fault], `${fault}: ${JSON.stringify(proxy.counts)}`).toBeGreaterThan(2);
    await expectNoLeaks(upstream);
  });

  it("with ebb's retry() around fetch and read: all requests end with exactly the right bytes", async () => {
    upstream = await blobServer();
    proxy = await startFaultProxy(Number(new URL(upstream.origin).port), seeded(42));
    const f = withRetry(fetch, {
      use: [timeout(250)],
      budget: false,
      backoff: exponential({ initialDelayMs: 10, multiplier: 2, maxDelayMs: 100, jitter: fullJitter, maxAttempts: 4 }),
    });
    let reads = 0;
    const reading = pipeline([
      retrying({
        backoff: exponential({
          initialDelayMs: 10,
          multiplier: 2,
          maxDelayMs: 100,
          jitter: fullJitter,
          maxAttempts: 20,
        }),
        budget: false,
      }),
      timeout(600),
    ]);
    const bodies = await pool(N, 8, (i) =>
      reading.execute(async ({ signal }) => {
        reads++;
        const res = await f(`${proxy?.origin}/blob/${i}`, { signal });
        if (res.status !== 200) throw new Error(`status ${res.status}`);
        return Buffer.from(await res.arrayBuffer());
      }),
    );
    const wrong = bodies.map((b, i) => (b.equals(blob(i)) ? -1 : i)).filter((i) => i >= 0);
    expect(wrong).toEqual([]);
    expect(reads).toBeGreaterThan(N); // the outer loop had work to do: some reads failed mid-body
    for (const [fault] of FAULT_MIX)
      expect(proxy.counts[fault], `${fault}: ${JSON.stringify(proxy.counts)}`).toBeGreaterThan(2);
    await expectNoLeaks(upstream);
  });
});
