// Independent clients: K = 5 processes, each with its own adaptiveRate and no shared
// state (the realistic fleet before shared state exists), 8 client loops each through withRetry,
// against one real nginx `limit_req` (50 r/s, burst 5 nodelay) on 127.0.0.1. Each backs off on
// its own 429s only; together they must share the limit: most of it taken, fairly (Jain's index,
// (Σx)² / (n · Σx²): 1 when all equal, 1/n when one process takes everything).
//
// The targets of the issue are 85 % of the limit and a Jain index of 0.9 (benchmark figures).
// Near the rate it was last throttled at, each process probes by the same absolute step (0.5 r/s
// above 5 r/s: Chiu and Jain's additive increase) and is cut in proportion to its rate, so the
// shares drift together; the law before probed in proportion to each process's own rate, which
// keeps the ratio of two rates (Jain's index 0.77 and 0.82 in two full benchmark runs at load
// 10–41, 0.875–0.981 in eight single runs at load 10–12). This law: 0.64–1.00 over seconds 5–20
// in 41 runs (median 0.91; two under 0.75, and one of 19 full test runs before, 0.71), 99–101 % of
// the limit; over a minute the shares wander (docs/rate-control.md, "Independent processes over a
// minute"). Margins for a busy 2-core machine, where five client processes compete with nginx and
// the other work: 75 % of the limit, Jain's index 0.6 — where the law's runs fall, which one
// process taking the limit (0.2) or two (0.4) fails — 10 % of requests answered 429 (plain retry: 79 %).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jain, sum } from './support/fleet.mjs';
import { available, haveLimiter, type Limiter, startLimiter } from './support/limiters.mjs';

const LIMIT = 50;
const BURST = 5;
const K = 5;
const LOOPS = 8;
const SECONDS = 20;
const SETTLED = 5;
const missing = !haveLimiter('nginx');
if (missing && process.env.CI) throw new Error(`CI: ${available().hint}`);

interface ClientResult {
  ok: number[];
  throttled: number[];
  outcome: { ok: number; final429: number; otherResponse: number; errors: Record<string, number> };
  /** Wall-clock ms (Date.now()) before the first request and after the last response. */
  startedAt: number;
  endedAt: number;
}

const client = fileURLToPath(new URL('./support/client.mjs', import.meta.url));

/** One client process (test/rate/support/client.mjs): its result, or a rejection naming how it ended. */
function runClient(url: string, kind: string): Promise<ClientResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [client, url, String(SECONDS), String(LOOPS), kind], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err = (err + d).slice(-2000);
    });
    // Bounded: a client that has not ended well after its run is stopped by its PID.
    const timer = setTimeout(() => child.kill('SIGKILL'), (SECONDS + 30) * 1000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(JSON.parse(out) as ClientResult);
      else reject(new Error(`client exited with ${code ?? signal}: ${err}`));
    });
  });
}

describe.skipIf(missing)(
  `${K} independent processes, each its own adaptiveRate, against one nginx limit (${LIMIT} r/s, burst ${BURST})`,
  () => {
    let nginx: Limiter;
    let results: ClientResult[];

    beforeAll(async () => {
      nginx = await startLimiter('nginx', { ratePerSecond: LIMIT, burst: BURST });
      results = await Promise.all(Array.from({ length: K }, () => runClient(nginx.url(), 'adaptive')));
    }, 90_000);

    afterAll(async () => {
      await nginx?.stop();
    });

    /** Accepted requests per second of each process, after second SETTLED. */
    const perProcess = () => results.map((r) => sum(r.ok, SETTLED, SECONDS) / (SECONDS - SETTLED));

    it('nginx limits for real: together they never get more than the limit and its burst allow', () => {
      const ok = results.reduce((a, r) => a + sum(r.ok), 0);
      // Over the fleet's whole span — the processes start apart and drain after their SECONDS, by
      // more than a second on a loaded machine (1,059 accepted where 50 × 21 + 5 allowed) — a
      // leaky bucket lets through at most LIMIT per second, its burst and the request in hand.
      const spanSeconds =
        (Math.max(...results.map((r) => r.endedAt)) - Math.min(...results.map((r) => r.startedAt))) / 1000;
      expect(spanSeconds).toBeGreaterThanOrEqual(SECONDS);
      expect(ok, `${ok} accepted in ${spanSeconds} s`).toBeLessThanOrEqual(LIMIT * spanSeconds + BURST + 1);
      expect(results.reduce((a, r) => a + sum(r.throttled), 0)).toBeGreaterThan(0);
    });

    it('take at least 75 % of the limit together, shared (Jain’s index at least 0.6), every process served', () => {
      const each = perProcess();
      const total = each.reduce((a, b) => a + b, 0);
      expect(total, each.join(', ')).toBeGreaterThanOrEqual(0.75 * LIMIT);
      expect(jain(each), each.join(', ')).toBeGreaterThanOrEqual(0.6);
      for (const x of each) expect(x).toBeGreaterThan(0.05 * LIMIT);
    });

    // Five processes probing on their own each find the limit's edge now and then: 4.6 % of
    // requests were answered 429 in the limits benchmark's run and 5.3 % in one CI run on an idle
    // machine (two others stayed under 5 %), against 79 % for plain retry in this test. 10 % keeps
    // that difference and the runs' spread.
    it('get at most 10 % of their requests answered 429 after second 5, and lose none to an error', () => {
      const ok = results.reduce((a, r) => a + sum(r.ok, SETTLED, SECONDS), 0);
      const throttled = results.reduce((a, r) => a + sum(r.throttled, SETTLED, SECONDS), 0);
      expect(throttled / (ok + throttled)).toBeLessThanOrEqual(0.1);
      for (const r of results) expect(r.outcome.errors).toEqual({});
    });
  },
);
