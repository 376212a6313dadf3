import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { virtualClock } from '../core/virtual-clock.js';
import { type WithRetryOptions, withRetry } from './with-retry.js';

/*
 * withRetry's default retry budget, one per origin, on a virtual clock with a scripted fetch:
 * which requests share a budget, how many origins are kept, and what a refusal returns.
 */

const fiveAttempts = constant({ delayMs: 100, maxAttempts: 5, jitter: noJitter });

/** A withRetry over a fetch that answers `status(url)`, counting the requests per URL. */
function setup(status: (url: string) => number, options: WithRetryOptions = {}) {
  const clock = virtualClock();
  const sent: string[] = [];
  const f = withRetry(
    async (input: string, _init?: RequestInit) => {
      sent.push(input);
      return new Response(null, { status: status(input) });
    },
    { backoff: fiveAttempts, clock, ...options },
  );
  /** One request to `url`, run to its end: its status and the requests it sent. */
  const call = async (url: string) => {
    const before = sent.length;
    const p = f(url);
    await clock.runAll();
    return { status: (await p).status, requests: sent.length - before };
  };
  return { clock, sent, f, call };
}

const down = (url: string) => (url.includes('down') ? 503 : 200);

describe('withRetry keeps a retry budget per origin', () => {
  it('a dead origin: the floor (10 retries) is spent, then each call gets one request, and the last 503 back', async () => {
    const { call } = setup(down);
    const requests: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await call('http://down.example/x');
      expect(r.status).toBe(503);
      requests.push(r.requests);
    }
    expect(requests).toEqual([5, 5, 3, 1, 1]);
  });

  it('another origin keeps its own: its failures are retried while the dead one gets none', async () => {
    let flaky = 0;
    const { call } = setup((url) => (url.includes('down') ? 503 : ++flaky % 2 === 1 ? 503 : 200));
    for (let i = 0; i < 4; i++) await call('http://down.example/x');
    expect((await call('http://down.example/x')).requests).toBe(1);
    const r = await call('http://flaky.example/y');
    expect(r).toEqual({ status: 200, requests: 2 });
  });

  it('the origin is the scheme, host and port, in any case, without user info; the path, query and fragment do not matter', async () => {
    const { call } = setup(() => 503);
    for (let i = 0; i < 3; i++) await call('http://down.example:8080/a');
    // The floor is spent for this origin: one request each, however it is spelled.
    for (const url of [
      'http://down.example:8080/b?q=1',
      'HTTP://DOWN.example:8080/c#f',
      'http://user:secret@down.example:8080/d',
    ]) {
      expect((await call(url)).requests, url).toBe(1);
    }
    // Another port, scheme or host is another origin: a floor of its own.
    for (const url of ['http://down.example:8081/a', 'https://down.example:8080/a', 'http://down.example.org:8080/a']) {
      expect((await call(url)).requests, url).toBe(5);
    }
  });

  it('a relative URL (a browser page calling its own server) shares one budget', async () => {
    const { call } = setup(() => 503);
    for (let i = 0; i < 3; i++) await call('/api/a');
    expect((await call('/api/b')).requests).toBe(1);
  });

  it('keeps a budget for each of 256 origins in use; the 257th and beyond share one, and no origin in use is forgotten', async () => {
    const { call } = setup((url) => (url.includes('down') ? 503 : 200));
    for (let i = 0; i < 3; i++) await call('http://down.example/x');
    expect((await call('http://down.example/x')).requests).toBe(1);
    for (let i = 0; i < 300; i++) await call(`http://up-${i}.example/`);
    // Still spent: forgetting it would have handed it a fresh floor of retries.
    expect((await call('http://down.example/x')).requests).toBe(1);
    // Two origins past the 256: one shared budget, whose floor the first spends.
    for (let i = 0; i < 3; i++) await call('http://down-a.example/');
    expect((await call('http://down-b.example/')).requests).toBe(1);
  });

  it('an outage across 300 origins called in turn costs about 1.2 requests a call, not 5', async () => {
    // No waits, so that no budget's window decays: only the budgets' bound is measured.
    const { call } = setup(() => 503, { backoff: constant({ delayMs: 0, maxAttempts: 5, jitter: noJitter }) });
    let requests = 0;
    const calls = 300 * 30;
    for (let i = 0; i < calls; i++) requests += (await call(`http://down-${i % 300}.example/`)).requests;
    // 256 budgets of their own (a floor of 10 retries for 30 calls each) and a shared one for 44
    // origins: (9,000 + 2,560 + 264) / 9,000. Forgetting the least recent origin instead: 5.
    expect(requests / calls).toBeLessThan(1.35);
  });

  it('an origin unused for a minute gives its place to a new one, which then has a budget of its own', async () => {
    const instant = constant({ delayMs: 0, maxAttempts: 5, jitter: noJitter });
    const { call, clock } = setup((url) => (url.includes('up') ? 200 : 503), { backoff: instant });
    for (let i = 0; i < 256; i++) await call(`http://up-${i}.example/`);
    await clock.advance(59_000);
    // Every origin still in use: two new ones share a budget, whose floor the first spends.
    for (let i = 0; i < 3; i++) await call('http://new-a.example/');
    expect((await call('http://new-b.example/')).requests).toBe(1);
    await clock.advance(1_000);
    // A minute on, the least recent give their places: each new origin has a floor of its own.
    for (let i = 0; i < 3; i++) await call('http://new-c.example/');
    expect((await call('http://new-d.example/')).requests).toBe(5);
  });

  it('using an origin keeps it: one touched again is not the least recent', async () => {
    const { call } = setup((url) => (url.includes('down') ? 503 : 200));
    for (let i = 0; i < 3; i++) await call('http://down.example/x');
    for (let i = 0; i < 200; i++) await call(`http://up-${i}.example/`);
    expect((await call('http://down.example/x')).requests).toBe(1);
    for (let i = 200; i < 300; i++) await call(`http://up-${i}.example/`);
    expect((await call('http://down.example/x')).requests).toBe(1);
  });

  it('budget: false: every call runs its five attempts', async () => {
    const { call } = setup(() => 503, { budget: false });
    for (let i = 0; i < 5; i++) expect((await call('http://down.example/x')).requests).toBe(5);
  });

  it('a budget given is shared by every origin', async () => {
    let granted = 0;
    const budget = { tryAcquireRetry: () => ++granted <= 6, recordSuccess: () => {} };
    const { call } = setup(() => 503, { budget });
    expect((await call('http://a.example/')).requests).toBe(5);
    expect((await call('http://b.example/')).requests).toBe(3);
    expect((await call('http://c.example/')).requests).toBe(1);
  });

  it('a POST is not retried, so it spends nothing: the budget is left for the GETs', async () => {
    const { f, clock, sent } = setup(() => 503);
    for (let i = 0; i < 20; i++) {
      const p = f('http://down.example/x', { method: 'POST', body: 'b' });
      await clock.runAll();
      expect((await p).status).toBe(503);
    }
    expect(sent).toHaveLength(20);
    const before = sent.length;
    const p = f('http://down.example/x');
    await clock.runAll();
    await p;
    expect(sent.length - before).toBe(5);
  });
});
