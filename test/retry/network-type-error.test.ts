import { createServer } from 'node:net';
import { constant, noJitter, retry } from 'ebb';
import { describe, expect, it } from 'vitest';

/** A port on 127.0.0.1 that nothing listens on: bind port 0, note the port, close. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('against a real socket: fetch’s TypeError is retried, a bug in the caller’s code is not', () => {
  it('fetch to a closed port on 127.0.0.1: TypeError: fetch failed (ECONNREFUSED), retried to the limit', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/`;
    let calls = 0;
    const error = await retry(
      () => {
        calls++;
        return fetch(url);
      },
      { backoff: constant({ delayMs: 1, maxAttempts: 3, jitter: noJitter }) },
    ).catch((e: unknown) => e);
    expect(calls).toBe(3);
    expect(error).toMatchObject({ name: 'RetryError', reason: 'attempts', attempts: 3 });
    const cause = (error as { cause: Error }).cause;
    expect(cause).toBeInstanceOf(TypeError);
    expect(cause.message).toBe('fetch failed');
  });

  it('a TypeError from the response handling (a bug) ends after one call', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/`;
    let calls = 0;
    const error = await retry(
      async () => {
        calls++;
        const response = await fetch(url).catch(() => undefined);
        return (response as unknown as { body: { x: number } }).body.x; // undefined.body
      },
      { backoff: constant({ delayMs: 1, maxAttempts: 3, jitter: noJitter }) },
    ).catch((e: unknown) => e);
    expect(calls).toBe(1);
    expect(error).toBeInstanceOf(TypeError);
  });
});
