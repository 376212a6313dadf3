// sharedRate's process side in virtual time, with a scripted stand-in for Redis (the Lua itself
// runs against a real redis-server in test/redis/rate-script.test.ts): pacing at the lease,
// waiting for the first lease, one throttle report per epoch, the timeout, the local fallback
// seeded with the last share, the reconnect, resync, and replies that must not poison anything.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import type { RedisScripts } from './client.js';
import { sharedRate } from './shared-rate.js';

type Call = { keys: readonly string[]; args: readonly string[] };

/** A stand-in answering every call with `reply()`; `mode` makes it hang or refuse instead. */
function fakeRedis(reply: (call: Call) => unknown) {
  const calls: Call[] = [];
  const state = { mode: 'up' as 'up' | 'hang' | 'refuse' };
  const answer = (keys: readonly string[], args: readonly string[]) => {
    calls.push({ keys, args });
    if (state.mode === 'hang') return new Promise<unknown>(() => {});
    if (state.mode === 'refuse') return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
    return Promise.resolve(reply({ keys, args }));
  };
  const scripts: RedisScripts = {
    evalSha: (_sha, keys, args) => answer(keys, args),
    eval: (_source, keys, args) => answer(keys, args),
  };
  return { scripts, calls, state };
}

const settle = () => new Promise((r) => setImmediate(r));
/** The script's reply: share, fleet rate, epoch, short (0/1), members. */
const lease = (share: number, fleet: number, epoch = 0) => [String(share), String(fleet), String(epoch), '0', '2'];

describe('sharedRate (virtual time, scripted Redis)', () => {
  it('holds requests until the first lease, then paces them exactly at the share', async () => {
    const clock = virtualClock();
    const redis = fakeRedis(() => lease(10, 20));
    const rate = sharedRate({ client: redis.scripts, name: 'n', clock });
    expect(rate.mode).toBe('syncing');
    const granted: number[] = [];
    const all = Array.from({ length: 4 }, async () => {
      await rate.acquire();
      granted.push(clock.now());
    });
    await rate.ready();
    await clock.advance(1000);
    await Promise.all(all);
    // One every 100 ms at 10 r/s, the first as soon as the lease answered.
    expect(granted).toEqual([0, 100, 200, 300]);
    expect([rate.ratePerSecond, rate.fleetRatePerSecond, rate.members]).toEqual([10, 20, 2]);
    // The keys share the hash tag; the first call carries no throttle (-1) and the 500 ms lease.
    expect(redis.calls[0]?.keys).toEqual(['ebb:{n}:rate', 'ebb:{n}:rate-members', 'ebb:{n}:rate-leases']);
    expect(redis.calls[0]?.args.slice(4, 6)).toEqual(['500', '-1']);
    await rate.close();
    // close() gives the lease back: a last call with lease 0.
    expect(redis.calls.at(-1)?.args[4]).toBe('0');
  });

  it('alone in the fleet, makes up for a late wake-up by at most margin × the spacing below 40 r/s, as adaptiveRate does; with company, up to one spacing', async () => {
    const grants = async (lateMs: readonly number[], margin?: number, members = 1) => {
      const base = virtualClock();
      let n = 0;
      // Every other wake-up of the pacer comes lateMs late (a busy event loop).
      const clock = {
        now: () => base.now(),
        sleep: (ms: number, signal?: AbortSignal) => base.sleep(ms + (lateMs[n++ % lateMs.length] as number), signal),
      };
      const rate = sharedRate({
        client: fakeRedis(() => ['10', '20', '0', '0', String(members)]).scripts,
        name: 'n',
        clock,
        margin,
        leaseMs: 60_000,
      });
      await rate.ready();
      const at: number[] = [];
      const all = Array.from({ length: 6 }, async () => {
        await rate.acquire();
        at.push(base.now());
      });
      await base.advance(2000);
      await Promise.all(all);
      await rate.close();
      return at.slice(1).map((t, i) => t - (at[i] as number));
    };
    // 10 r/s: 100 ms apart; a wake-up 20 ms late keeps its slot only up to 5 ms (0.05 × 100).
    const gaps = await grants([20, 0]);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(95 - 1e-9);
    expect(Math.max(...gaps)).toBeGreaterThan(100);
    // margin 0.2: up to 20 ms is made up for, and the gap after a late wake-up is 80 ms.
    expect(Math.min(...(await grants([20, 0], 0.2)))).toBeCloseTo(80, 9);
    // With other members, the limiter sees their requests between ours: a wake-up up to one
    // spacing late keeps its slot (a busy event loop must not cost the fleet rate).
    expect(Math.min(...(await grants([20, 0], 0.05, 5)))).toBeCloseTo(80, 9);
    const late = await grants([60, 0], 0.05, 5);
    expect(Math.min(...late)).toBeCloseTo(40, 9);
    // Each late request keeps its 100-ms slot (gaps 160, 40, 160, 40, 160): five spacings and the
    // last wake-up's own lateness, none of the rate lost (25 ms made up for: 160, 100, ... = 680).
    expect(late.reduce((a, b) => a + b, 0)).toBeCloseTo(5 * 100 + 60, 9);
    // A wake-up later than one spacing loses the rest: 150 ms late keeps 100 of it.
    expect(Math.min(...(await grants([150, 0], 0.05, 5)))).toBeCloseTo(100, 9);
  });

  it('reports one throttle per epoch, at once, with the ticket’s epoch; older tickets are not sent', async () => {
    const clock = virtualClock();
    let epoch = 3;
    const redis = fakeRedis(() => lease(50, 50, epoch));
    const rate = sharedRate({ client: redis.scripts, name: 'n', clock });
    await rate.ready();
    // At 50 r/s a request may wait up to 20 ms: virtual time moves it along.
    const take = async () => {
      const ticket = rate.acquire();
      await clock.advance(20);
      return ticket;
    };
    const t1 = await take();
    const t2 = await take();
    const before = redis.calls.length;
    rate.record('throttled', t1);
    rate.record('throttled', t2); // the same epoch: already reported
    await settle();
    expect(redis.calls.length - before).toBe(1);
    expect(redis.calls.at(-1)?.args[5]).toBe('3');
    epoch = 4;
    rate.record('success', await take()); // a renewal brings epoch 4
    await clock.advance(500);
    await settle();
    expect(rate.epoch).toBe(4);
    const n = redis.calls.length;
    rate.record('throttled', t1); // sent in epoch 3: old news, nothing sent
    rate.record('failure', await take()); // not a throttle: nothing sent
    await settle();
    expect(redis.calls.length).toBe(n);
    await rate.close();
  });

  it('a hanging Redis: falls back after timeoutMs to a local adaptiveRate seeded with the share, backs off, resyncs', async () => {
    const clock = virtualClock();
    const redis = fakeRedis(() => lease(8, 40));
    const events: string[] = [];
    const rate = sharedRate({
      client: redis.scripts,
      name: 'n',
      clock,
      timeoutMs: 100,
      onEvent: (e) => events.push(`${e.type}@${e.atMs}`),
    });
    await rate.ready();
    rate.record('success', await rate.acquire());
    redis.state.mode = 'hang';
    await clock.advance(500); // the renewal goes out and hangs
    expect(rate.mode).toBe('shared');
    await clock.advance(100);
    await settle();
    expect(rate.mode).toBe('local');
    expect(events).toEqual(['fallback@600']);
    expect(rate.ratePerSecond).toBe(8); // the local controller starts at the last share
    // Requests go on, paced by the local controller: 8 r/s, 125 ms apart.
    const granted: number[] = [];
    const loop = (async () => {
      for (let i = 0; i < 3; i++) {
        const ticket = await rate.acquire();
        granted.push(clock.now());
        rate.record('success', ticket);
      }
    })();
    await clock.advance(1000);
    await loop;
    expect(granted[1] as number).toBeCloseTo((granted[0] as number) + 125, 6);
    expect(granted[2] as number).toBeCloseTo((granted[0] as number) + 250, 6);
    // Redis answers again: the next try (ebb's backoff, at most 2 s apart) resyncs.
    redis.state.mode = 'up';
    rate.record('success', await rate.acquire());
    await clock.advance(5000);
    await settle();
    expect(rate.mode).toBe('shared');
    expect(events).toHaveLength(2);
    expect(events[1]).toMatch(/^resync@/);
    expect(rate.stats).toMatchObject({ fallbacks: 1, resyncs: 1 });
    await rate.close();
  });

  it('a refused first call: a brand-new process falls back at once and serves requests locally', async () => {
    const clock = virtualClock();
    const redis = fakeRedis(() => lease(8, 40));
    redis.state.mode = 'refuse';
    const rate = sharedRate({ client: redis.scripts, name: 'n', clock, initialRatePerSecond: 20 });
    await rate.ready();
    expect(rate.mode).toBe('local');
    await rate.acquire();
    expect(rate.stats.errors).toBe(1);
    await rate.close();
  });

  it('no reply poisons it: anything but the five numbers is a failed call, the share stays', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.anything(),
          fc.constantFrom(
            ['NaN', '1', '0', '0', '1'],
            ['-5', '1', '0', '0', '1'],
            ['1', 'Infinity', '0', '0', '1'],
            ['1', '1', '0.5', '0', '1'],
            ['1', '1', '0', '2', '1'],
            ['1', '1', '0', '0'],
            [null, '1', '0', '0', '1'],
            '10',
            10,
          ),
        ),
        async (bad) => {
          const clock = virtualClock();
          let reply: unknown = lease(10, 50);
          const redis = fakeRedis(() => reply);
          const rate = sharedRate({ client: redis.scripts, name: 'n', clock });
          await rate.ready();
          reply = bad;
          rate.record('throttled', await rate.acquire());
          await settle();
          await settle();
          expect(rate.mode).toBe('local');
          expect(rate.ratePerSecond).toBe(10);
          expect(rate.fleetRatePerSecond).toBe(50);
          await rate.close();
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a listener that throws changes nothing', async () => {
    const clock = virtualClock();
    const redis = fakeRedis(() => lease(8, 40));
    redis.state.mode = 'refuse';
    const rate = sharedRate({
      client: redis.scripts,
      name: 'n',
      clock,
      onEvent: () => {
        throw new Error('listener');
      },
    });
    await rate.ready();
    expect(rate.mode).toBe('local');
    await rate.close();
  });

  it('any hostile value of any option throws a TypeError/RangeError naming it, or builds a controller that works', async () => {
    const refusing: RedisScripts = {
      evalSha: () => Promise.reject(new Error('ECONNREFUSED')),
      eval: () => Promise.reject(new Error('ECONNREFUSED')),
    };
    const keys = [
      'initialRatePerSecond',
      'decreaseFactor',
      'coolOffMs',
      'maxCoolOffMs',
      'margin',
      'increase',
      'minRatePerSecond',
      'maxRatePerSecond',
      'maxServerWaitMs',
      'name',
      'prefix',
      'timeoutMs',
      'leaseMs',
      'onEvent',
    ];
    const hostile = fc.oneof(
      fc.constantFrom(
        Number.NaN,
        Number.POSITIVE_INFINITY,
        Number.NEGATIVE_INFINITY,
        -0,
        2 ** 53,
        1e308,
        -1,
        0,
        0.5,
        null,
        '',
        '10',
        '{x}',
      ),
      fc.anything(),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...keys), hostile, async (key, value) => {
        const clock = virtualClock();
        let rate: ReturnType<typeof sharedRate>;
        try {
          rate = sharedRate({ client: refusing, name: 'n', clock, [key]: value } as never);
        } catch (error) {
          expect(error instanceof TypeError || error instanceof RangeError).toBe(true);
          expect((error as Error).message).toContain('sharedRate()');
          expect((error as Error).message).toContain(key);
          return;
        }
        // Accepted: it must work — on its local fallback, as Redis refuses.
        await rate.ready();
        expect(rate.mode).toBe('local');
        const ticket = rate.acquire();
        await clock.advance(60_000);
        rate.record('success', await ticket);
        await rate.close();
      }),
      { numRuns: 300 },
    );
  });

  it('rejects bad options at construction, naming the option, with the local twin’s rules', () => {
    const client = fakeRedis(() => lease(1, 1)).scripts;
    const clock = virtualClock();
    const make = (o: Record<string, unknown>) => () => sharedRate({ client, name: 'n', clock, ...o } as never);
    for (const leaseMs of [Number.NaN, -1, 0, 5, Number.POSITIVE_INFINITY, '500', null]) {
      expect(make({ leaseMs })).toThrow(/sharedRate\(\): expected `leaseMs`/);
    }
    for (const timeoutMs of [Number.NaN, 0, 0.5, Number.POSITIVE_INFINITY, '100']) {
      expect(make({ timeoutMs })).toThrow(/sharedRate\(\): expected `timeoutMs`/);
    }
    expect(make({ decreaseFactor: 1 })).toThrow(RangeError);
    expect(make({ decreaseFactor: 1 })).toThrow(/^sharedRate\(\): expected `decreaseFactor`/);
    expect(make({ margin: 0.5 })).toThrow(/sharedRate\(\): expected `margin`/);
    expect(make({ initialRatePerSecond: -1 })).toThrow(/sharedRate\(\): expected `initialRatePerSecond`/);
    expect(make({ name: 'a{b}' })).toThrow(/expected `name`/);
    expect(make({ name: '' })).toThrow(TypeError);
    expect(make({ prefix: '{x}' })).toThrow(/expected `prefix`/);
    expect(make({ onEvent: 1 })).toThrow(/expected `onEvent`/);
    expect(make({ priorities: ['a'] })).toThrow(/unknown option `priorities`/);
    expect(() => sharedRate({ client: 1, name: 'n' })).toThrow(TypeError);
    expect(() => sharedRate(null as never)).toThrow(TypeError);
  });
});
