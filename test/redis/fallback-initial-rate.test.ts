// A new process started while Redis is down paces at its own initialRatePerSecond: its first lease
// fails, and the local controller it falls back to starts from the caller's options (it never heard
// a share), with a 'fallback' event saying so. Two Node.js processes, one per client library, each
// pointed at a port where no Redis listens.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runMembers } from './support/members.mjs';
import { freePort, haveRedis } from './support/redis-server.js';

const enabled = haveRedis();
const MEMBER = fileURLToPath(new URL('./support/initial-rate-process.mjs', import.meta.url));
const INITIAL = 20;
const SECONDS = 2;

interface Report {
  grants: number;
  mode: string;
  ratePerSecond: number;
  stats: { fallbacks: number; errors: number };
  events: { type: string; seedFrom?: string; seed?: number }[];
}

describe.skipIf(!enabled)('a process started while Redis is down', () => {
  it(`paces at its initialRatePerSecond (${INITIAL} r/s), with node-redis and with ioredis, and says where it started`, async () => {
    // A free port, nothing listening: every connection is refused.
    const url = `redis://127.0.0.1:${await freePort()}`;
    const reports = await Promise.all(
      (['node-redis', 'ioredis'] as const).map(async (library) => {
        const [report] = await runMembers<Report>(MEMBER, [[url, library, INITIAL, SECONDS]]);
        return report as Report;
      }),
    );
    console.info(JSON.stringify(reports));
    for (const r of reports) {
      expect(r.mode).toBe('local');
      expect(r.ratePerSecond).toBe(INITIAL);
      expect(r.events[0]).toEqual({ type: 'fallback', seedFrom: 'initial', seed: INITIAL });
      // 2 s at 20 r/s: about 40 grants (measured 44: adaptiveRate makes up for late timers).
      // Unlimited, as before the fix, it is tens of thousands.
      expect(r.grants).toBeGreaterThanOrEqual(0.75 * INITIAL * SECONDS);
      expect(r.grants).toBeLessThanOrEqual(1.25 * INITIAL * SECONDS);
    }
  }, 30_000);
});
