import { constant, guard } from 'ebb';
import { isHttpStatusError, withRetry } from 'ebb/http';
import { aimd, circuitBreaker, concurrencyLimit, isBrokenCircuitError, type LimitSample } from 'ebb/resilience';
import { afterEach, describe, expect, it } from 'vitest';
import { expectNoLeaks, startServer, type TestServer } from './support/server.js';

/*
 * What withRetry tells the mechanisms of its `use`, against a real node:http server on 127.0.0.1: every
 * response by what it says about the service, whatever the method; the retry decision apart,
 * keeping to idempotency.
 */

let servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

/** A server that answers `status` to everything (the body says which method it saw). */
async function answering(status: number, headers: Record<string, string> = {}): Promise<TestServer> {
  const t = await startServer((req, res) => {
    req.resume();
    res.writeHead(status, { 'content-type': 'text/plain', ...headers });
    res.end(`${req.method} ${status}`);
  });
  servers.push(t);
  return t;
}

const once = constant({ delayMs: 0, maxAttempts: 1 });

describe('withRetry reports every response to the mechanisms of `use` by what it says about the service', () => {
  it.each([
    ['GET', undefined],
    ['POST', 'order #1'],
    ['PATCH', 'x'],
  ])(
    '%s answered 503: three in a row open circuitBreaker({ consecutiveFailures: 3 }); the caller gets each 503 response',
    async (method, body) => {
      const t = await answering(503);
      const breaker = circuitBreaker({ consecutiveFailures: 3 });
      const f = withRetry(fetch, { use: [breaker], backoff: once });
      for (let i = 0; i < 3; i++) {
        const res = await f(`${t.origin}/x`, { method, body });
        expect(res.status).toBe(503);
        expect(await res.text()).toBe(`${method} 503`);
      }
      expect(breaker.state).toBe('open');
      // The fourth call is refused without reaching the server.
      const refused = await f(`${t.origin}/x`, { method, body }).catch((e: unknown) => e);
      expect(isBrokenCircuitError(refused)).toBe(true);
      expect(t.seen).toHaveLength(3);
      await expectNoLeaks(t);
    },
  );

  it('six POSTs answered 503 open the breaker just as six GETs do, and each POST went out once', async () => {
    const t = await answering(503);
    for (const method of ['POST', 'GET']) {
      const breaker = circuitBreaker({ consecutiveFailures: 3 });
      const f = withRetry(fetch, { use: [breaker], backoff: constant({ delayMs: 0, maxAttempts: 3 }) });
      const before = t.seen.length;
      const outcomes: string[] = [];
      for (let i = 0; i < 6; i++) {
        const r = await f(`${t.origin}/x`, { method, body: method === 'POST' ? 'b' : undefined }).then(
          async (res) => {
            await res.text();
            return String(res.status);
          },
          (e: unknown) => (isBrokenCircuitError(e) ? 'refused' : String(e)),
        );
        outcomes.push(r);
      }
      expect(breaker.state).toBe('open');
      if (method === 'POST') {
        // Not idempotent: one request per call, never a retry; three failures open it.
        expect(outcomes).toEqual(['503', '503', '503', 'refused', 'refused', 'refused']);
        expect(t.seen.length - before).toBe(3);
      } else {
        // GET is retried: the first call's three attempts open it, and its last response is the answer.
        expect(outcomes[0]).toBe('503');
        expect(outcomes.slice(1)).toEqual(['refused', 'refused', 'refused', 'refused', 'refused']);
        expect(t.seen.length - before).toBe(3);
      }
    }
    await expectNoLeaks(t);
  });

  it('in mixed traffic a POST 503 no longer resets the consecutive count: GET, POST, GET answered 503 open a breaker of 3', async () => {
    const t = await answering(503);
    const breaker = circuitBreaker({ consecutiveFailures: 3 });
    const f = withRetry(fetch, { use: [breaker], backoff: once });
    for (const method of ['GET', 'POST', 'GET'])
      await (await f(`${t.origin}/x`, { method, body: method === 'POST' ? 'b' : undefined })).text();
    expect(breaker.state).toBe('open');
    await expectNoLeaks(t);
  });

  it('a concurrencyLimit in the same place sees POST and GET 503s as drops (its algorithm gets dropped samples)', async () => {
    const t = await answering(503);
    for (const method of ['POST', 'GET']) {
      const samples: LimitSample[] = [];
      const inner = aimd({ initialLimit: 10 });
      const limiter = concurrencyLimit({
        algorithm: {
          get limit() {
            return inner.limit;
          },
          update(sample) {
            samples.push(sample);
            inner.update(sample);
          },
        },
      });
      const f = withRetry(fetch, { use: [limiter], backoff: once });
      for (let i = 0; i < 4; i++)
        await (await f(`${t.origin}/x`, { method, body: method === 'POST' ? 'b' : undefined })).text();
      expect(samples.map((s) => s.dropped)).toEqual([true, true, true, true]);
      // AIMD backs off on every drop: 10 → 9 → 8 → 7 → 6.
      expect(limiter.limit).toBe(6);
      expect(limiter.inflight).toBe(0);
    }
    await expectNoLeaks(t);
  });

  it('a POST answered 429 is recorded as throttled; a POST answered 404 or 200 as a success', async () => {
    for (const [status, expected] of [
      [429, 'throttled'],
      [404, 'success'],
      [200, 'success'],
      [500, 'failure'],
    ] as const) {
      const t = await answering(status);
      const heard: string[] = [];
      const rate = {
        acquire: () => undefined,
        record: (outcome: string, _ticket: unknown, detail: unknown) => {
          heard.push(outcome);
          if (outcome !== 'success') expect(isHttpStatusError(detail)).toBe(true);
        },
      };
      const f = withRetry(fetch, { use: [guard(rate)], backoff: constant({ delayMs: 0, maxAttempts: 3 }) });
      const res = await f(`${t.origin}/x`, { method: 'POST', body: 'b' });
      expect(res.status).toBe(status);
      await res.text();
      expect(heard).toEqual([expected]);
      expect(t.seen).toHaveLength(1);
    }
  });

  it('the hooks tell the same story: a POST 503 is a failed attempt whose next step is final, not a success', async () => {
    const t = await answering(503);
    const log: string[] = [];
    const f = withRetry(fetch, {
      backoff: constant({ delayMs: 0, maxAttempts: 3 }),
      onFailedAttempt: (c) => void log.push(`failed ${c.attempt} ${c.next}`),
      onGiveUp: (c) => void log.push(`give-up ${c.reason}`),
      onSuccess: () => void log.push('success'),
    });
    const res = await f(`${t.origin}/x`, { method: 'POST', body: 'b' });
    expect(res.status).toBe(503);
    await res.text();
    expect(log).toEqual(['failed 1 final', 'give-up final']);
    expect(t.seen).toHaveLength(1);
  });
});
