// Stored state is input: every structure × every field its scripts keep × {wrong type, NaN,
// ±Infinity, negative, 0, huge}, and per key {another type, another layout's fields, a deleted
// half, deleted}, written into a real redis-server under a live structure. In every case: no
// operation waits past its bound, no grant goes above the process's maxRatePerSecond, a value
// outside the process's own bounds is repaired with an event naming its key and field (a deleted
// state is a 'state-lost'), and the state is sound again afterwards (inspect() finds nothing)
// without anyone deleting a key. A value inside the bounds is a state like any other: adopted.
//
// The bounds below are written here, from the documented domains, not read from the scripts.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type SharedEvent,
  type SharedInspection,
  sharedAdaptiveThrottle,
  sharedAwsRetryQuota,
  sharedRate,
  sharedRatioBudget,
  sharedTokenBudget,
} from '../../packages/ebb/src/redis/index.js';
import { haveRedis, type RedisServer, startRedis } from './support/redis-server.js';

const enabled = haveRedis();
const BIG = 1e300;
const DAY = 86_400_000;
const TWO53 = 2 ** 53;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * The budgets' and windows' commandTimeoutMs: a bound on each call that no corruption may pass,
 * long enough that a busy machine's slow round trip is not a fallback (at 100 ms one was, once).
 */
const COMMAND_MS = 1000;

/** The corruptions of one field: a string that is no number, NaN, ±Infinity, negative, 0, huge. */
const VALUES = ['abc', 'nan', 'inf', '-inf', '-1', '0', '1e308'] as const;

type Domain = (x: number, now: number) => boolean;
const whole =
  (lo: number, hi: number): Domain =>
  (x) =>
    Number.isInteger(x) && x >= lo && x <= hi;
const flag: Domain = (x) => x === 0 || x === 1;
const time: Domain = (x, now) => Number.isFinite(x) && x > -BIG && x <= now + DAY;
const past: Domain = (x, now) => x === -BIG || time(x, now);
const amount: Domain = (x) => x >= -1e-6 && x < BIG;

// The shared rate under test: minRatePerSecond 10, maxRatePerSecond 100, the law's defaults
// (coolOffMs 1000, maxCoolOffMs 8000: at most 3 relapses; increase 0.1; largest step 1).
const LO = 10;
const HI = 100;
const rate: Domain = (x) => x >= LO && x <= HI;
const RATE_FIELDS: Record<string, Domain> = {
  v: (x) => x === 5,
  g: whole(1, TWO53),
  r: rate,
  pr: rate,
  e: whole(0, TWO53),
  ch: time,
  lc: flag,
  rl: whole(0, 3),
  th: (x) => x > 0 && x <= BIG,
  st: (x) => x > 0 && x <= 1 + 1e-9,
  sk: flag,
  sw: flag,
  rd: (x, now) => x === BIG || time(x, now),
  ev: past,
  er: flag,
  inf: flag,
  nt: past,
  pa: (x, now) => x === -BIG || (time(x, now + 1e4 / (0.02 * LO)) && x > -BIG),
  cu: past,
  ga: (x) => x >= 0 && x <= BIG,
  tp: flag,
  gn: whole(0, 1e6),
  gt: whole(0, 1e6),
  gx: past,
  jn: whole(0, TWO53),
  ia: amount,
  iu: amount,
  ns: whole(0, 1e9),
  ac: amount,
  sn: amount,
  nk: whole(0, 1e9),
  uk: amount,
  ug: amount,
};

/** A structure's key with a suffix: '-members' and the like, or ':accepts' for the throttle's second window. */
const at = (key: string, suffix: string) =>
  suffix === ':accepts' ? key.replace(/-requests$/, '-accepts') : key + suffix;

interface Case {
  /** What is corrupted, for the title. */
  what: string;
  /** Writes the corruption; returns the key and field a repair must name (undefined: none expected). */
  corrupt(c: Redis, key: string): Promise<{ key: string; field: string; lost?: boolean } | undefined>;
}

/** Every field × every value, plus the whole-key cases, for a hash-kept state. */
function hashCases(fields: Record<string, Domain>, suffix: string, foreign: string): Case[] {
  const cases: Case[] = [];
  for (const [field, domain] of Object.entries(fields)) {
    for (const value of VALUES) {
      cases.push({
        what: `${suffix} ${field} = ${value}`.trim(),
        async corrupt(c, key) {
          const k = at(key, suffix);
          const t = Number((await c.time())[0]) * 1000;
          await c.hset(k, field, value);
          // Lua's tonumber reads 'nan' and 'inf' too; 'abc' is no number.
          const x =
            value === 'abc' ? Number.NaN : Number(value === 'nan' ? Number.NaN : value.replace('inf', 'Infinity'));
          return domain(x, t) ? undefined : { key: k, field };
        },
      });
    }
  }
  cases.push(
    {
      what: `${suffix} of another type (a list)`,
      async corrupt(c, key) {
        // One transaction: a renewal between the two commands would see a deleted key instead.
        await c.multi().del(at(key, suffix)).rpush(at(key, suffix), 'x').exec();
        return { key: at(key, suffix), field: '(type)' };
      },
    },
    {
      what: `${suffix} with another layout's field (${foreign})`,
      async corrupt(c, key) {
        await c.hset(at(key, suffix), foreign, '5');
        return { key: at(key, suffix), field: foreign };
      },
    },
    {
      what: `${suffix} with half its fields deleted`,
      async corrupt(c, key) {
        const names = Object.keys(fields);
        const gone = names.filter((_, i) => i % 2 === 1);
        await c.hdel(at(key, suffix), ...gone);
        return { key: at(key, suffix), field: gone[0] as string };
      },
    },
  );
  return cases;
}

describe.skipIf(!enabled)('stored state is checked and repaired (real redis-server)', () => {
  let server: RedisServer;
  let c: Redis;
  let n = 0;
  const unique = () => `corrupt-${n++}`;
  beforeAll(async () => {
    server = await startRedis();
    c = new Redis(server.url, { maxRetriesPerRequest: 0, enableOfflineQueue: false });
    await new Promise((resolve) => c.once('ready', resolve));
  });
  afterAll(async () => {
    c?.disconnect();
    await server?.stop();
  });

  /** The events a case must show, and nothing that would mean the process could not go on. */
  function expectRepaired(events: SharedEvent[], expected: { key: string; field: string; lost?: boolean } | undefined) {
    const named = events.filter((e) => e.type === 'repair' || e.type === 'state-lost');
    if (expected === undefined) {
      // A value within its bounds is adopted; a sum that disagrees with the leases may still be
      // rebuilt from them, naming it.
      for (const e of named) expect([e.type, e.field]).toEqual(['repair', expect.any(String)]);
    } else if (expected.lost) {
      expect(named.map((e) => [e.type, e.key])).toEqual([['state-lost', expected.key]]);
    } else {
      expect(named[0]).toMatchObject({ type: 'repair', key: expected.key, field: expected.field });
    }
    expect(events.filter((e) => e.type === 'fallback')).toEqual([]);
  }

  // ---- The shared rate: its state hash, its lease record, its lease expiry, the four keys. ----
  const rateCases: Case[] = [
    ...hashCases(RATE_FIELDS, '', 'l'),
    ...['abc', 'nan,0,0,0,0,0', '-1,0,-1,5,5,-1', 'inf,0,-1,5,5,-1', '1,2,-1,5,5,-1', '1,0,-1,5,5'].map((value) => ({
      what: `-members: the member's own record = ${value}`,
      async corrupt(cl: Redis, key: string) {
        const [id] = (await cl.hkeys(`${key}-members`)) as [string];
        await cl.hset(`${key}-members`, id, value);
        return { key: `${key}-members`, field: id };
      },
    })),
    ...['inf', '1e308'].map((value) => ({
      what: `-leases: the member's expiry = ${value}`,
      async corrupt(cl: Redis, key: string) {
        const [id] = (await cl.zrange(`${key}-leases`, '0', '0')) as [string];
        await cl.call('ZADD', `${key}-leases`, value === 'inf' ? '+inf' : value, id);
        return { key: `${key}-leases`, field: id };
      },
    })),
    ...['-leases', '-members', '-order'].flatMap((suffix) => [
      {
        what: `${suffix} of another type (a string)`,
        async corrupt(cl: Redis, key: string) {
          await cl.multi().del(at(key, suffix)).set(at(key, suffix), 'x').exec();
          return { key: at(key, suffix), field: '(type)' };
        },
      },
      {
        what: `${suffix} deleted (the other half kept)`,
        async corrupt(cl: Redis, key: string) {
          await cl.del(at(key, suffix));
          return suffix === '-order'
            ? { key: `${key}-order`, field: '(members)' }
            : { key: `${key}-members`, field: '(records)' };
        },
      },
    ]),
    {
      what: 'the state deleted (its leases kept)',
      async corrupt(cl: Redis, key: string) {
        await cl.del(key);
        return { key, field: 'generation', lost: true };
      },
    },
  ];

  it(`sharedRate: ${rateCases.length} corruptions — no wait past its bound, no grant above maxRatePerSecond, each bad value repaired with an event naming it, sound again`, async () => {
    const failures: string[] = [];
    const one = async (k: Case) => {
      const events: SharedEvent[] = [];
      const r = sharedRate({
        client: c,
        name: unique(),
        initialRatePerSecond: 50,
        minRatePerSecond: LO,
        maxRatePerSecond: HI,
        leaseMs: 50,
        // Sixteen run at once on a busy machine: a lease may take longer than the default 100 ms.
        commandTimeoutMs: 500,
        onEvent: (e) => events.push(e),
      });
      await r.ready();
      for (let i = 0; i < 3; i++) r.record('success', await r.acquire());
      await sleep(60); // a renewal: the state holds this member's lease
      let expected: Awaited<ReturnType<Case['corrupt']>>;
      try {
        expected = await k.corrupt(c, r.key);
      } catch (error) {
        failures.push(`${k.what}: could not corrupt: ${(error as Error).message}`);
        await r.close();
        return;
      }
      const began = performance.now();
      let grants = 0;
      let longest = 0;
      while (performance.now() - began < 250) {
        const t0 = performance.now();
        const ticket = await r.acquire();
        longest = Math.max(longest, performance.now() - t0);
        grants++;
        r.record('success', ticket);
      }
      const elapsed = performance.now() - began;
      try {
        const seen = await r.inspect();
        // Paced at 10–100 r/s: no wait beyond one spacing at the minimum rate and the load's slack.
        expect(longest).toBeLessThan(1000 / LO + 150);
        expect(grants).toBeLessThanOrEqual((HI * elapsed) / 1000 + 3);
        expect(r.ratePerSecond).toBeLessThanOrEqual(HI);
        expectRepaired(events, expected);
        expect(r.mode).toBe('shared');
        expect(seen.problems).toEqual([]);
        expect(seen.generation).toBeGreaterThanOrEqual(1);
      } catch (error) {
        failures.push(`${k.what}: ${(error as Error).message.split('\n')[0]} — events ${JSON.stringify(events)}`);
      }
      await r.close();
    };
    // Sixteen at a time, each its own name.
    for (let i = 0; i < rateCases.length; i += 16) await Promise.all(rateCases.slice(i, i + 16).map(one));
    expect(failures).toEqual([]);
  }, 120_000);

  // ---- The levels (token budget, AWS quota) and the windows (ratio budget, SRE throttle). ----
  const budgets = {
    'token budget': {
      make: (o: object) => sharedTokenBudget({ ...o, maxTokens: 10 } as never),
      fields: { v: (x: number) => x === 2, g: whole(1, TWO53), l: (x: number) => x >= 0 && x <= 10_000 },
      foreign: 'r',
      act: (b: ReturnType<typeof sharedTokenBudget>) => b.recordFailure(),
    },
    'AWS retry quota': {
      make: (o: object) => sharedAwsRetryQuota({ ...o, capacity: 100 } as never),
      fields: { v: (x: number) => x === 2, g: whole(1, TWO53), l: (x: number) => x >= 0 && x <= 100 },
      foreign: 'r',
      act: (b: ReturnType<typeof sharedAwsRetryQuota>) => b.tryAcquireRetry(new Error('503')),
    },
  } as const;
  const windows = {
    'ratio budget': {
      make: (o: object) => sharedRatioBudget(o as never),
      floor: -TWO53,
      act: (b: ReturnType<typeof sharedRatioBudget>) => {
        b.recordRequest();
        b.tryAcquireRetry(undefined);
      },
      suffix: '',
    },
    'SRE throttle (requests)': {
      make: (o: object) => sharedAdaptiveThrottle(o as never),
      floor: 0,
      act: (t: ReturnType<typeof sharedAdaptiveThrottle>) => {
        try {
          t.acquire();
        } catch {}
        t.record('success');
      },
      suffix: '',
    },
    'SRE throttle (accepts)': {
      make: (o: object) => sharedAdaptiveThrottle(o as never),
      floor: 0,
      act: (t: ReturnType<typeof sharedAdaptiveThrottle>) => {
        try {
          t.acquire();
        } catch {}
        t.record('success');
      },
      suffix: ':accepts',
    },
  } as const;

  /**
   * A budget's applied record: the process's last call applied (`seq,cum`). `999999,0` and
   * `1000,-5` are within 10^6 of the process's calls (as a late call may find its process's later
   * record) but above every number it sent.
   */
  const recordCases: Case[] = [
    ...['abc', 'nan,0', '1', '-1,0', '1e308,0', '9007199254740992,0', '999999,0', '1000,-5'].map((value) => ({
      what: `the applied record = ${value}`,
      async corrupt(cl: Redis, key: string) {
        const [record] = (await cl.keys(`${key}:applied:*`)) as [string];
        await cl.set(record, value, 'EX', 600);
        return { key: record, field: 'seq,cum' };
      },
    })),
    {
      what: 'the applied record of another type (a list)',
      async corrupt(cl: Redis, key: string) {
        const [record] = (await cl.keys(`${key}:applied:*`)) as [string];
        await cl.multi().del(record).rpush(record, 'x').exec();
        return { key: record, field: '(type)' };
      },
    },
  ];

  it("a process's record overwritten with a number it never sent (999999,0): inspect() lists it, every change is still applied, the next call repairs it with a 'repair' naming it", async () => {
    type Structure = {
      make(o: object): { ready(): Promise<void>; flush(): Promise<void>; close(): Promise<void>; key: string };
      act(b: unknown): void;
      /** The stored values after five acts, from inspect(). */
      values(b: unknown): Promise<unknown>;
      /** The suffixes of the keys that carry an applied record. */
      keys: string[];
    };
    const structures: Record<string, Structure> = {
      'token budget': {
        make: (o) => sharedTokenBudget({ ...o, maxTokens: 10 } as never),
        act: (b) => (b as ReturnType<typeof sharedTokenBudget>).recordFailure(),
        values: async (b) => (await (b as ReturnType<typeof sharedTokenBudget>).inspect()).value,
        keys: [''],
      },
      'AWS retry quota': {
        make: (o) => sharedAwsRetryQuota({ ...o, capacity: 100 } as never),
        act: (b) => (b as ReturnType<typeof sharedAwsRetryQuota>).tryAcquireRetry(new Error('503')),
        values: async (b) => (await (b as ReturnType<typeof sharedAwsRetryQuota>).inspect()).value,
        keys: [''],
      },
      'ratio budget': {
        make: (o) => sharedRatioBudget({ ...o, percentCanRetry: 0.5, minRetriesPerSecond: 0, ttlMs: 60_000 } as never),
        act: (b) => (b as ReturnType<typeof sharedRatioBudget>).recordRequest(),
        // The window's sum as stored (the balance is whole retries): its slices' fields.
        values: async (b) =>
          Object.entries((await (b as ReturnType<typeof sharedRatioBudget>).inspect()).fields)
            .filter(([k]) => /^\d+$/.test(k))
            .reduce((a, [, v]) => a + Number(v), 0),
        keys: [''],
      },
      'SRE throttle': {
        make: (o) => sharedAdaptiveThrottle({ ...o, windowMs: 60_000 } as never),
        act: (b) => {
          const t = b as ReturnType<typeof sharedAdaptiveThrottle>;
          t.acquire();
          t.record('success');
        },
        values: async (b) => {
          const seen = await (b as ReturnType<typeof sharedAdaptiveThrottle>).inspect();
          return [seen.requests.value, seen.accepts.value];
        },
        keys: ['', ':accepts'],
      },
    };
    // After five acts: 10 − 5 tokens; 100 − 5 × 14 (a transient error's cost); five deposits of
    // 1,000 (half a retry each at 50 %); five requests, five accepted.
    const expected: Record<string, unknown> = {
      'token budget': 5,
      'AWS retry quota': 30,
      'ratio budget': 5000,
      'SRE throttle': [5, 5],
    };
    const failures: string[] = [];
    for (const [name, spec] of Object.entries(structures)) {
      const events: SharedEvent[] = [];
      const b = spec.make({
        client: c,
        name: unique(),
        commandTimeoutMs: 100,
        onEvent: (e: SharedEvent) => events.push(e),
      });
      await b.ready();
      spec.act(b);
      await b.flush();
      const records: string[] = [];
      for (const suffix of spec.keys) {
        const [record] = (await c.keys(`${at(b.key, suffix)}:applied:*`)) as [string];
        await c.set(record, '999999,0', 'EX', 600);
        records.push(record);
      }
      const problems = (s: unknown) =>
        ('requests' in (s as object)
          ? [(s as { requests: SharedInspection }).requests, (s as { accepts: SharedInspection }).accepts]
          : [s as SharedInspection]
        ).flatMap((x) => x.problems);
      const inspect = () => (b as unknown as { inspect(): Promise<unknown> }).inspect();
      try {
        // Listed before any call: a record above the highest number this process sent.
        expect(problems(await inspect()), name).toEqual(
          records.map((key) => ({ key, field: 'seq,cum', value: '999999,0' })),
        );
        for (let i = 0; i < 4; i++) {
          spec.act(b);
          await b.flush();
        }
        expect(await spec.values(b), name).toEqual(expected[name]);
        // One repair per record (the throttle's two windows answer in either order).
        expect(events.map((e) => [e.type, e.key, e.field, e.value]).sort(), name).toEqual(
          records.map((key) => ['repair', key, 'seq,cum', '999999,0']).sort(),
        );
        expect(problems(await inspect()), name).toEqual([]);
        for (const record of records)
          expect(Number((await c.get(record))?.split(',')[0]), name).toBeGreaterThan(999_999);
      } catch (error) {
        failures.push(`${name}: ${(error as Error).message.split('\n')[0]} — events ${JSON.stringify(events)}`);
      }
      await b.close();
    }
    expect(failures).toEqual([]);
  }, 60_000);

  for (const [name, spec] of Object.entries(budgets)) {
    const cases: Case[] = [
      ...hashCases(spec.fields, '', spec.foreign),
      ...recordCases,
      {
        what: 'the state as a string of the previous layout',
        async corrupt(cl: Redis, key: string) {
          const level = await cl.hget(key, 'l');
          await cl
            .multi()
            .del(key)
            .set(key, level as string)
            .exec();
          return { key, field: '(layout)' };
        },
      },
      {
        what: 'the state deleted',
        async corrupt(cl: Redis, key: string) {
          await cl.del(key);
          return { key, field: 'generation', lost: true };
        },
      },
    ];
    it(`${name}: ${cases.length} corruptions — every call bounded, each bad value repaired with an event naming it, sound again`, async () => {
      const failures: string[] = [];
      for (const k of cases) {
        const events: SharedEvent[] = [];
        const b = spec.make({
          client: c,
          name: unique(),
          commandTimeoutMs: COMMAND_MS,
          onEvent: (e: SharedEvent) => events.push(e),
        });
        await b.ready();
        (spec.act as (x: typeof b) => void)(b);
        await b.flush();
        const expected = await k.corrupt(c, b.key);
        const t0 = performance.now();
        (spec.act as (x: typeof b) => void)(b);
        await b.flush();
        (spec.act as (x: typeof b) => void)(b);
        await b.flush();
        const took = performance.now() - t0;
        const seen = await b.inspect();
        try {
          expect(took).toBeLessThan(2 * COMMAND_MS + 300);
          expectRepaired(events, expected);
          expect(b.mode).toBe('shared');
          expect(seen.problems).toEqual([]);
          expect(seen.value).toBeDefined();
        } catch (error) {
          failures.push(`${k.what}: ${(error as Error).message.split('\n')[0]} — events ${JSON.stringify(events)}`);
        }
        await b.close();
      }
      expect(failures).toEqual([]);
    }, 60_000);
  }

  for (const [name, spec] of Object.entries(windows)) {
    /** The current slice: the one numeric field the structure wrote. */
    const slice = async (cl: Redis, key: string) =>
      Object.keys(await cl.hgetall(key))
        .filter((f) => /^\d+$/.test(f))
        .sort()
        .at(-1) as string;
    const cases: Case[] = [
      ...hashCases({ v: (x: number) => x === 2, g: whole(1, TWO53) }, spec.suffix, 'l'),
      ...VALUES.map((value) => ({
        what: `${spec.suffix} the current slice = ${value}`,
        async corrupt(cl: Redis, key: string) {
          const k = at(key, spec.suffix);
          const s = await slice(cl, k);
          await cl.hset(k, s, value);
          const x =
            value === 'abc' ? Number.NaN : Number(value === 'nan' ? Number.NaN : value.replace('inf', 'Infinity'));
          return x >= spec.floor && x <= TWO53 ? undefined : { key: k, field: s };
        },
      })),
      {
        what: `${spec.suffix} a slice a day ahead of the server's clock`,
        async corrupt(cl: Redis, key: string) {
          const k = at(key, spec.suffix);
          const s = String(Number(await slice(cl, k)) + 1_000_000);
          await cl.hset(k, s, '5');
          return { key: k, field: s };
        },
      },
      ...(spec.suffix === '' ? recordCases : []),
      {
        what: `${spec.suffix} the window deleted`,
        async corrupt(cl: Redis, key: string) {
          await cl.del(at(key, spec.suffix));
          return { key: at(key, spec.suffix), field: 'generation', lost: true };
        },
      },
    ];
    it(`${name}: ${cases.length} corruptions — every call bounded, each bad value repaired with an event naming it, sound again`, async () => {
      const failures: string[] = [];
      for (const k of cases) {
        const events: SharedEvent[] = [];
        const b = spec.make({
          client: c,
          name: unique(),
          commandTimeoutMs: COMMAND_MS,
          onEvent: (e: SharedEvent) => events.push(e),
        });
        await b.ready();
        (spec.act as (x: typeof b) => void)(b);
        await b.flush();
        const expected = await k.corrupt(c, b.key);
        const t0 = performance.now();
        (spec.act as (x: typeof b) => void)(b);
        await b.flush();
        (spec.act as (x: typeof b) => void)(b);
        await b.flush();
        const took = performance.now() - t0;
        const seen = await b.inspect();
        try {
          expect(took).toBeLessThan(2 * COMMAND_MS + 300);
          expectRepaired(events, expected);
          expect(b.mode).toBe('shared');
          const all = 'requests' in seen ? [seen.requests, seen.accepts] : [seen];
          for (const s of all) expect(s.problems).toEqual([]);
        } catch (error) {
          failures.push(`${k.what}: ${(error as Error).message.split('\n')[0]} — events ${JSON.stringify(events)}`);
        }
        await b.close();
      }
      expect(failures).toEqual([]);
    }, 60_000);
  }
});
