import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { install, pack, project, run } from './pack.js';

/*
 * Two copies of ebb in one process, as an application gets them: the packed tarball installed
 * twice under two names (two versions in one dependency tree look like this), and each loaded
 * through both of its builds (ESM by `import`, CommonJS by `require`) — four module instances
 * whose classes are unrelated to each other, so `instanceof` is false across them. What one copy
 * throws, the others must still recognise.
 */

let dir: string;
let app: string;

beforeAll(async () => {
  const packed = await pack(['ebb']);
  dir = packed.dir;
  app = project(join(dir, 'app'));
  const tarball = packed.tarballs.ebb as string;
  const r = await install(app, [`ebb@file:${tarball}`, `ebb-other@file:${tarball}`]);
  expect(r.code, r.stderr).toBe(0);
}, 180_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs `source` as an ES module inside the app; its stdout parsed as JSON. */
async function inApp(source: string): Promise<Record<string, unknown>> {
  const file = join(app, `script-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, source);
  const r = await run(process.execPath, [file], app, 60_000);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

const LOAD = `
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const copies = {
  esm: { root: await import('ebb'), http: await import('ebb/http'), rate: await import('ebb/rate'), resilience: await import('ebb/resilience') },
  cjs: { root: require('ebb'), http: require('ebb/http'), rate: require('ebb/rate'), resilience: require('ebb/resilience') },
  otherEsm: { root: await import('ebb-other'), http: await import('ebb-other/http'), rate: await import('ebb-other/rate'), resilience: await import('ebb-other/resilience') },
  otherCjs: { root: require('ebb-other'), http: require('ebb-other/http'), rate: require('ebb-other/rate'), resilience: require('ebb-other/resilience') },
};
`;

describe('two copies of the packed ebb in one process (two names, ESM and CommonJS builds)', () => {
  it('stop() from the CommonJS copy ends an ESM retry() at once, and the other way round, across names too', async () => {
    const out = await inApp(`${LOAD}
      const results = {};
      for (const [runner, thrower] of [['esm', 'cjs'], ['cjs', 'esm'], ['esm', 'otherCjs'], ['otherEsm', 'cjs']]) {
        const { retry, constant } = copies[runner].root;
        const own = new Error('no such order');
        let calls = 0;
        const t = performance.now();
        const error = await retry(() => { calls++; throw copies[thrower].root.stop(own); },
          { backoff: constant({ delayMs: 2_000, maxAttempts: 5 }) }).catch((e) => e);
        results[runner + ' runs, ' + thrower + ' stops'] = {
          calls,
          ownError: error === own,
          ms: performance.now() - t,
          instanceofAcross: copies[thrower].root.stop(own) instanceof copies[runner].root.FinalError,
        };
      }
      console.log(JSON.stringify(results));
    `);
    for (const [pair, r] of Object.entries(out) as [string, Record<string, unknown>][]) {
      expect(r.instanceofAcross, pair).toBe(false); // the copies really are separate
      expect(r.calls, pair).toBe(1);
      expect(r.ownError, pair).toBe(true);
      // No 2-s backoff wait was spent: the run ended at the first attempt.
      expect(r.ms as number, pair).toBeLessThan(1_000);
    }
  }, 60_000);

  it('every guard recognises each error class made by every other copy, where instanceof does not', async () => {
    const out = await inApp(`${LOAD}
      /** One error of each class, made by copy c the way a program meets it. */
      async function made(c) {
        const { root, http, rate, resilience } = c;
        const gaveUp = await root.retry(() => { throw new Error('down'); },
          { backoff: root.constant({ delayMs: 0, maxAttempts: 1 }) }).catch((e) => e);
        const notDone = await root.poll(() => ({ done: false }),
          { backoff: root.constant({ delayMs: 0, maxAttempts: 1 }) }).catch((e) => e.cause);
        const breaker = resilience.circuitBreaker({ consecutiveFailures: 1 });
        breaker.record('failure', breaker.acquire(), new Error('down'));
        let open; try { breaker.acquire(); } catch (e) { open = e; }
        const limiter = resilience.concurrencyLimit({ algorithm: resilience.aimd({ initialLimit: 1, minLimit: 1 }) });
        limiter.acquire();
        let full; try { limiter.acquire(); } catch (e) { full = e; }
        return {
          RetryError: [gaveUp, 'isRetryError', 'root', 'RetryError'],
          FinalError: [root.stop(new Error('x')), 'isFinal', 'root', 'FinalError'],
          NotDoneError: [notDone, 'isNotDoneError', 'root', 'NotDoneError'],
          BrokenCircuitError: [open, 'isBrokenCircuitError', 'resilience', 'BrokenCircuitError'],
          LimitExceededError: [full, 'isLimitExceededError', 'resilience', 'LimitExceededError'],
          LocalThrottleError: [new rate.LocalThrottleError(0.5), 'isLocalThrottleError', 'rate', 'LocalThrottleError'],
          HttpStatusError: [new http.HttpStatusError(new Response('busy', { status: 503 }), 'GET', 'http://x/', undefined, false), 'isHttpStatusError', 'http', 'HttpStatusError'],
        };
      }
      const rows = [];
      for (const [maker, c] of Object.entries(copies)) {
        for (const [cls, [error, guard, entry, name]] of Object.entries(await made(c))) {
          for (const [checker, d] of Object.entries(copies)) {
            rows.push({
              cls, maker, checker,
              guard: d[entry][guard](error),
              instanceOf: error instanceof d[entry][name],
              // Each guard says no to every other class.
              others: Object.entries(await made(d)).filter(([k, [e]]) => k !== cls && d[entry][guard](e)).length,
            });
          }
        }
      }
      console.log(JSON.stringify({ rows }));
    `);
    const rows = out.rows as {
      cls: string;
      maker: string;
      checker: string;
      guard: boolean;
      instanceOf: boolean;
      others: number;
    }[];
    expect(rows).toHaveLength(7 * 4 * 4);
    for (const r of rows) {
      const where = `${r.cls} made by ${r.maker}, checked by ${r.checker}`;
      expect(r.guard, where).toBe(true);
      expect(r.instanceOf, where).toBe(r.maker === r.checker);
      expect(r.others, where).toBe(0);
    }
  }, 60_000);

  it("a policy of the CommonJS copy runs under the ESM retry(), and describePolicy() of the ESM copy says it is another copy's", async () => {
    const out = await inApp(`${LOAD}
      const policy = copies.cjs.root.constant({ delayMs: 1, maxAttempts: 2 });
      let calls = 0;
      await copies.esm.root.retry(() => { calls++; throw new Error('x'); }, { backoff: policy }).catch(() => {});
      let message = '';
      try { copies.esm.root.describePolicy(policy, 2); } catch (e) { message = e.message; }
      console.log(JSON.stringify({ calls, message }));
    `);
    expect(out.calls).toBe(2);
    expect(out.message).toMatch(
      /not another copy's.*It comes from another copy of ebb \(its CommonJS build beside the ESM one, or another version\): import both from one\.$/,
    );
  }, 60_000);
});
