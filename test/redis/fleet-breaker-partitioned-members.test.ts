// Several members of a fleet cut off from a service that answers everyone else — as many as
// minMembers or more, but half the fleet or fewer: the shared breaker stays closed, each cut-off
// member's own breaker stops it, and the others lose nothing. Members are Node.js processes with
// three closed loops of fetch each, through sharedCircuitBreaker's defaults for minMembers (2) and
// memberFailureRate (0.5), against a real node:http service and a real redis-server.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMembers } from './support/members.mjs';
import { freePort, haveRedis, type RedisServer, startRedis } from './support/redis-server.js';

const enabled = haveRedis();
const SCRIPT = fileURLToPath(new URL('./support/breaker-process.mjs', import.meta.url));
const LOOPS = 3;
const SECONDS = 8;

interface Report {
  member: number;
  calls: [number, string][];
  events: { type: string; t: number; field?: string }[];
  stats?: Record<string, number | string>;
}

const tally = (r: Report) => {
  const out: Record<string, number> = {};
  for (const [, x] of r.calls) out[x] = (out[x] ?? 0) + 1;
  return out;
};

describe.skipIf(!enabled)(
  'k partitioned members of a fleet sharing one circuit breaker (real redis-server, real node:http)',
  () => {
    let redis: RedisServer;
    let server: Server;
    let url: string;
    let arrivals = 0;
    /** While true the service drops every connection (an outage for everyone). */
    let dark = false;
    let start = 0;
    const darkArrivals: number[] = [];
    const okArrivals: number[] = [];
    beforeAll(async () => {
      redis = await startRedis();
      server = createServer((req, res) => {
        arrivals++;
        if (dark) {
          darkArrivals.push(Date.now() - start);
          req.socket.destroy();
          return;
        }
        okArrivals.push(Date.now() - start);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    });
    afterAll(async () => {
      server?.closeAllConnections();
      await new Promise((r) => server?.close(r));
      await redis?.stop();
    });

    for (const [k, n] of [
      [2, 5],
      [3, 6],
    ] as const) {
      it(`${k} of ${n} members partitioned (k >= minMembers, not a majority): the fleet stays closed, their own breakers stop them, the others' calls all succeed`, async () => {
        // Nothing listens there: every call of a partitioned member fails at once (ECONNREFUSED).
        const dead = `http://127.0.0.1:${await freePort()}/`;
        arrivals = 0;
        const reports = (await runMembers(
          SCRIPT,
          Array.from({ length: n }, (_, i) => [
            i < k ? dead : url,
            redis.url,
            `partition-${k}-of-${n}`,
            'shared',
            LOOPS,
            SECONDS,
            i,
          ]),
        )) as Report[];
        const counts = reports.map(tally);
        console.log(`${k} of ${n} partitioned:`, JSON.stringify(counts), 'arrivals', arrivals);
        // No member was ever refused by the fleet's state: it never opened.
        for (const r of reports) expect(r.calls.filter(([, x]) => x === 'fleet')).toEqual([]);
        for (const r of reports) expect(r.calls.filter(([, x]) => x.startsWith('other'))).toEqual([]);
        // Each partitioned member's own breaker opened: most of its calls were refused without a try.
        for (const c of counts.slice(0, k)) {
          expect(c.local ?? 0).toBeGreaterThan(0);
          expect(c.local ?? 0).toBeGreaterThan(c.failed ?? 0);
          expect(c.ok ?? 0).toBe(0);
        }
        // The others: every call answered, a success rate of 1 as without the partition, and each
        // member kept calling throughout (three loops, 50 ms apart, for 8 s: far more than 50 calls).
        for (const r of reports.slice(k)) {
          expect(r.calls.every(([, x]) => x === 'ok')).toBe(true);
          expect(r.calls.length).toBeGreaterThan(50);
          expect(Math.max(...r.calls.map(([t]) => t))).toBeGreaterThan((SECONDS - 1) * 1000);
        }
        // The service saw exactly the healthy members' calls.
        expect(arrivals).toBe(reports.slice(k).reduce((s, r) => s + r.calls.length, 0));
      }, 60_000);
    }

    it('2 of 5 partitioned and a 10-s outage for everyone: the fleet opens, and after recovery its first success comes within one open period — the partitioned members leave the probes to the others', async () => {
      const dead = `http://127.0.0.1:${await freePort()}/`;
      const OUT_FROM = 3000;
      const OUT_TO = 13_000;
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
      let driven = Promise.resolve();
      okArrivals.length = 0;
      darkArrivals.length = 0;
      const reports = (await runMembers(
        SCRIPT,
        Array.from({ length: 5 }, (_, i) => [
          i < 2 ? dead : url,
          redis.url,
          'partition-outage',
          'shared',
          LOOPS,
          18,
          i,
        ]),
        {
          onStart: (at) => {
            start = at;
            driven = (async () => {
              await sleep(at + OUT_FROM - Date.now());
              dark = true;
              await sleep(at + OUT_TO - Date.now());
              dark = false;
            })();
          },
        },
      )) as Report[];
      await driven;
      const firstOk = okArrivals.find((t) => t >= OUT_TO) ?? Number.POSITIVE_INFINITY;
      // While the fleet is open or half-open every member follows it: a partitioned member's failed
      // call between recovery and the first success is a fleet probe it took.
      const partitionedProbes = reports
        .slice(0, 2)
        .flatMap((r) => r.calls.filter(([t, x]) => t >= OUT_TO && t < firstOk && x === 'failed'));
      const fleetRefusals = reports
        .slice(2)
        .map((r) => r.calls.filter(([t, x]) => t >= OUT_FROM && x === 'fleet').length);
      console.log(
        'partition and outage:',
        JSON.stringify({
          firstOkAfterMs: firstOk - OUT_TO,
          partitionedProbes,
          fleetRefusals,
          darkArrivals: darkArrivals.length,
        }),
      );
      for (const n of fleetRefusals) expect(n).toBeGreaterThan(0);
      for (const r of reports) expect(r.calls.filter(([, x]) => x.startsWith('other'))).toEqual([]);
      // Open periods 1, 2, 4, 4 s (the members' openBackoff) and a report period.
      expect(firstOk - OUT_TO).toBeLessThanOrEqual(4000 + 1000);
      expect(partitionedProbes).toEqual([]);
    }, 90_000);
  },
);
