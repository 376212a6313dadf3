import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import { adaptiveRate } from '../rate/adaptive-rate.js';
import { withRetry } from './with-retry.js';

/**
 * withRetry and a shared adaptiveRate on a virtual clock: what `ebb/http` puts on a 429's error
 * (`retryAfterMs`, `response`) and the `Response` of a success reach the controller, so one
 * caller's `Retry-After` or `RateLimit` holds every caller that shares it.
 */
function setup(answers: Response[], maxServerWaitMs?: number) {
  const clock = virtualClock();
  const rate = adaptiveRate({ clock, ...(maxServerWaitMs === undefined ? {} : { maxServerWaitMs }) });
  const calls: { url: string; at: number }[] = [];
  let i = 0;
  const fetchImpl = async (input: RequestInfo | URL) => {
    calls.push({ url: String(input), at: clock.now() });
    return (answers[i++] ?? new Response('ok')).clone();
  };
  const get = withRetry(fetchImpl, { clock, use: [rate], random: () => 0.5 });
  return { clock, calls, get };
}

/** Starts a request at virtual time `ms` (a timer of the same clock, so it keeps its place in time). */
const later = (clock: ReturnType<typeof virtualClock>, ms: number, start: () => Promise<Response>) =>
  clock.sleep(ms).then(start);

describe('withRetry + adaptiveRate: the server’s hints hold every caller of the controller', () => {
  it('a 429 with Retry-After: 2 pauses another caller’s request until 2 s; deaf to hints, it goes at once (100 ms)', async () => {
    for (const [max, expected] of [
      [undefined, 2000],
      [0, 100],
    ] as const) {
      const { clock, calls, get } = setup([new Response(null, { status: 429, headers: { 'retry-after': '2' } })], max);
      const a = get('http://a/');
      const b = later(clock, 100, () => get('http://b/'));
      await clock.runAll();
      expect((await a).status).toBe(200);
      expect((await b).status).toBe(200);
      expect(calls[0]).toEqual({ url: 'http://a/', at: 0 });
      expect(calls.find((c) => c.url === 'http://b/')?.at).toBe(expected);
      // The retry of a: the executor waits the 2 s itself, hints or not.
      expect(calls.filter((c) => c.url === 'http://a/')[1]?.at).toBeGreaterThanOrEqual(2000);
    }
  });

  it('a 200 saying RateLimit r=1;t=2 lets one more request go, the next 2 s later', async () => {
    const field = { ratelimit: '"default";r=1;t=2' };
    const { clock, calls, get } = setup([
      new Response('ok', { headers: field }),
      new Response('ok', { headers: field }),
    ]);
    await get('http://a/');
    const b = later(clock, 10, () => get('http://b/'));
    const c = later(clock, 20, () => get('http://c/'));
    await clock.runAll();
    await Promise.all([b, c]);
    expect(calls.map((x) => [x.url, x.at])).toEqual([
      ['http://a/', 0],
      ['http://b/', 10],
      ['http://c/', 2010],
    ]);
  });
});
