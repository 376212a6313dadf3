import { timeout } from 'ebb';
import { withRetry } from 'ebb/http';
import { afterEach, describe, expect, it } from 'vitest';
import { gc } from './support/gc.js';
import { startServer, type TestServer } from './support/server.js';

/*
 * A caller's `AbortSignal.timeout(…)` must abort a body still arriving after `withRetry` has
 * resolved, however often the garbage collector runs. On Node.js 20, `AbortSignal.any` holds its
 * sources without an `abort` listener, so once `withRetry` had resolved nothing kept the timeout
 * signal alive: a collection freed it and a read from a server that stalls mid-body waited
 * forever (10 of 10 reads with a collection every 20 ms). Plain `fetch` has no such problem (its
 * listener keeps the signal alive): the first test checks that this test's setup does abort.
 */

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const READS = 8;
const TIMEOUT_MS = 600;

/** READS requests whose bodies stall after 100 of 1,000 bytes, read under a collection every 20 ms. */
async function stalledReads(f: typeof fetch): Promise<string[]> {
  server = await startServer((_req, res) => {
    res.writeHead(200, { 'content-length': '1000' });
    res.write('x'.repeat(100));
  });
  const origin = server.origin;
  const collector = setInterval(gc, 20);
  try {
    return await Promise.all(
      Array.from({ length: READS }, async (_, i) => {
        let res: Response;
        try {
          res = await f(`${origin}/${i}`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
        } catch (error) {
          // On a very busy machine the headers may come after the timeout: aborted all the same.
          return `fetch: ${(error as Error).name}`;
        }
        let watchdog: NodeJS.Timeout | undefined;
        const hung = new Promise<string>((resolve) => {
          watchdog = setTimeout(() => resolve('hung'), TIMEOUT_MS + 5_000);
        });
        const read = res.arrayBuffer().then(
          () => 'read whole',
          (error: Error) => `read: ${error.name}`,
        );
        const outcome = await Promise.race([read, hung]);
        clearTimeout(watchdog);
        return outcome;
      }),
    );
  } finally {
    clearInterval(collector);
    server.server.closeAllConnections();
  }
}

const aborted = (outcome: string): boolean => outcome === 'read: TimeoutError' || outcome === 'fetch: TimeoutError';

describe("the caller's timeout aborts a body read under garbage collection", () => {
  it('plain fetch (the setup aborts every read)', async () => {
    const outcomes = await stalledReads(fetch);
    expect(
      outcomes.filter((o) => !aborted(o)),
      outcomes.join(', '),
    ).toEqual([]);
  }, 30_000);

  it('withRetry(fetch): no read waits past the timeout', async () => {
    const outcomes = await stalledReads(withRetry(fetch, { use: [timeout(30_000)] }));
    expect(
      outcomes.filter((o) => !aborted(o)),
      outcomes.join(', '),
    ).toEqual([]);
  }, 30_000);
});
