// The fleet as a Redis ACL user with exactly the permissions docs/redis.md lists: the commands
// the scripts call (Redis checks each command a script runs against the caller's ACL) plus EVALSHA
// and EVAL, on the keys under the default prefix. The list is checked against the scripts' text;
// then, on a redis-server started with that user: three OS processes share a rate against nginx
// and three audit the budgets' exactly-once counts, each logged in as the user; the repair paths
// (keys of another type or layout) run as the user too; and a user without one of the commands
// is refused (the check is real).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SharedEvent, sharedRate, sharedTokenBudget } from '../../packages/ebb/src/redis/index.js';
import { LEVEL_SCRIPT, RATE_SCRIPT, WINDOW_SCRIPT } from '../../packages/ebb/src/redis/scripts.js';
import { available, type Limiter, startLimiter } from '../rate/support/limiters.mjs';
import { runMembers } from './support/members.mjs';
import { runRateFleet } from './support/rate-fleet.mjs';
import { haveRedis, type RedisServer, startRedis } from './support/redis-server.js';

const enabled = haveRedis() && available().found.includes('nginx');
const DOC = readFileSync(fileURLToPath(new URL('../../docs/redis.md', import.meta.url)), 'utf8');
const BUDGETS = fileURLToPath(new URL('./support/budget-process.mjs', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The documented ACL rule: the line `ACL SETUSER ebb …` of docs/redis.md, as its rule words. */
function documentedRules(): string[] {
  const line = DOC.split('\n').find((l) => l.startsWith('ACL SETUSER ebb '));
  if (!line) throw new Error('docs/redis.md has no line starting with `ACL SETUSER ebb `');
  return line.trim().split(/\s+/).slice(3);
}

describe.skipIf(!enabled)('the fleet as an ACL user with exactly the documented permissions', () => {
  let server: RedisServer;
  let nginx: Limiter;
  let admin: Redis;
  const rules = documentedRules().map((r) => (r === '>password' ? '>secret' : r));
  beforeAll(async () => {
    // The documented user, and one without ZRANK (the shared rate's lease needs it).
    const lacking = rules.filter((r) => r !== '+zrank').map((r) => (r === '>secret' ? '>other' : r));
    server = await startRedis(['--user', 'ebb', ...rules, '--user', 'lacking', ...lacking]);
    nginx = await startLimiter('nginx', { ratePerSecond: 50, burst: 5 });
    admin = new Redis(server.url, { maxRetriesPerRequest: 0 });
  });
  afterAll(async () => {
    admin?.disconnect();
    await nginx?.stop();
    await server?.stop();
  });

  it('lists exactly the commands the scripts call, plus EVALSHA and EVAL, on the default prefix only', () => {
    const called = new Set<string>();
    for (const script of [LEVEL_SCRIPT, WINDOW_SCRIPT, RATE_SCRIPT]) {
      for (const m of script.matchAll(/redis\.call\('([A-Z]+)'/g)) called.add((m[1] as string).toLowerCase());
    }
    const allowed = rules.filter((r) => r.startsWith('+')).map((r) => r.slice(1));
    expect(new Set(allowed)).toEqual(new Set(['evalsha', 'eval', ...called]));
    expect(rules).toEqual(expect.arrayContaining(['on', '~ebb:*', 'resetchannels', '-@all']));
    expect(rules.filter((r) => r.startsWith('~') || r.startsWith('%') || r.startsWith('&'))).toEqual(['~ebb:*']);
  });

  it('three processes share one rate against nginx and three audit the budgets, all logged in as the user: no error, no fallback, every change applied once', async () => {
    const url = `redis://ebb:secret@127.0.0.1:${server.port}`;
    const [rates, budgets] = await Promise.all([
      runRateFleet({
        url: nginx.url('/full'),
        redisUrl: url,
        name: 'acl-rate',
        kind: 'shared',
        members: [0, 1, 2].map(() => ({ atS: 0, seconds: 6 })),
        clients: 4,
        initialRatePerSecond: 50,
      }),
      runMembers<{ counts: Record<string, number>; stats: Record<string, { errors: number; fallbacks: number }> }>(
        BUDGETS,
        (['node-redis', 'ioredis', 'node-redis'] as const).map((library) => [url, 'acl-budgets', library, 2]),
      ),
    ]);
    for (const r of rates) {
      expect(r.stats).toMatchObject({ errors: 0, fallbacks: 0 });
      expect(r.outcome.errors).toEqual({});
      expect(r.ok.reduce((a, b) => a + b, 0)).toBeGreaterThan(20);
    }
    for (const r of budgets)
      for (const s of Object.values(r.stats)) expect(s).toMatchObject({ errors: 0, fallbacks: 0 });
    const failures = budgets.reduce((a, r) => a + (r.counts.failures as number), 0);
    expect(Number(await admin.hget('ebb:{acl-budgets}:token-budget', 'l'))).toBe(1_000_000 - 1000 * failures);
    // The state was written by the user (the leases left with their processes).
    expect(Number(await admin.hget('ebb:{acl-rate}:rate', 'g'))).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('the repairs run as the user too: keys of another type or layout are rewritten, with no NOPERM', async () => {
    const c = new Redis(`redis://ebb:secret@127.0.0.1:${server.port}`, {
      maxRetriesPerRequest: 0,
      enableReadyCheck: false,
    });
    try {
      const events: SharedEvent[] = [];
      const onEvent = (e: SharedEvent) => events.push(e);
      const rate = sharedRate({ client: c, name: 'acl-repair', initialRatePerSecond: 20, leaseMs: 50, onEvent });
      await rate.ready();
      rate.record('success', await rate.acquire());
      await admin.multi().del('ebb:{acl-repair}:rate-members').set('ebb:{acl-repair}:rate-members', 'x').exec();
      await sleep(150);
      rate.record('success', await rate.acquire());
      await admin.hset('ebb:{acl-repair}:rate', 'l', '5');
      await sleep(150);
      const budget = sharedTokenBudget({ client: c, name: 'acl-repair', onEvent });
      await budget.ready();
      await admin.multi().del(budget.key).set(budget.key, '4000').exec();
      budget.recordFailure();
      await budget.flush();
      expect(events.filter((e) => e.type === 'fallback')).toEqual([]);
      expect(events.filter((e) => e.type === 'repair').map((e) => e.field)).toEqual(['(type)', 'l', '(layout)']);
      expect(budget.tokens).toBe(3);
      await Promise.all([rate.close(), budget.close()]);
    } finally {
      c.disconnect();
    }
  });

  it('a user without one of the listed commands (ZRANK) is refused inside the script: the rate falls back', async () => {
    const c = new Redis(`redis://lacking:other@127.0.0.1:${server.port}`, {
      maxRetriesPerRequest: 0,
      enableReadyCheck: false,
    });
    try {
      const events: SharedEvent[] = [];
      const rate = sharedRate({
        client: c,
        name: 'acl-lacking',
        initialRatePerSecond: 20,
        onEvent: (e) => events.push(e),
      });
      await rate.ready();
      expect(rate.mode).toBe('local');
      // Redis 7.0: "ERR The user executing the script can't run this command or subcommand".
      expect(String((events[0]?.error as Error | undefined)?.message)).toMatch(/user executing the script|NOPERM/);
      await rate.close();
    } finally {
      c.disconnect();
    }
  });
});
