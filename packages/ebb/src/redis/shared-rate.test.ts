// sharedRate's process side in virtual time, with a scripted stand-in for Redis (the Lua itself
// runs against a real redis-server in test/redis/rate-script.test.ts): pacing at the lease,
// waiting for the first lease, one throttle report per epoch, the timeout, the local fallback
// seeded with the last share, the reconnect, resync, and replies that must not poison anything.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import { pipeline } from '../retry/pipeline.js';
import type { RedisScripts } from './client.js';
import type { SharedEvent } from './protocol.js';
import { sharedRate } from './shared-rate.js';
import { acquireMany, type Call, fakeRedis, lease, settle } from './shared-rate-test-helpers.js';

describe('sharedRate (virtual time, scripted Redis)', () => {
  it('holds requests until the first lease, then paces them exactly at the share', async () => {
    const clock = virtualClock();
    // The script answers a member that leaves (lease 0) with no share: -1.
    const redis = fakeRedis((call) => (call.args[4] === '0' ? lease(-1, 20) : lease(10, 20)));
    const events: SharedEvent[] = [];
    const rate = sharedRate({
      client: redis.scripts,
      name: 'n',
      clock,
      maxRatePerSecond: 100,
      onEvent: (e) => events.push(e),
    });
    expect(rate.mode).toBe('syncing');
    const { granted, all } = acquireMany(rate, 4, () => clock.now());
    await rate.ready();
    await clock.advance(1000);
    await all;
    // One every 100 ms at 10 r/s, the first as soon as the lease answered.
    expect(granted).toEqual([0, 100, 200, 300]);
    expect([rate.ratePerSecond, rate.fleetRatePerSecond, rate.members]).toEqual([10, 20, 1]);
    // The keys share the hash tag; the first call carries no throttle (-1) and the 500 ms lease.
    expect(redis.calls[0]?.keys).toEqual([
      'ebb:{n}:rate',
      'ebb:{n}:rate-members',
      'ebb:{n}:rate-leases',
      'ebb:{n}:rate-order',
    ]);
    expect(redis.calls[0]?.args.slice(4, 6)).toEqual(['500', '-1']);
    await rate.close();
    // close() gives the lease back: a last call with lease 0, whose answer is no failure.
    expect(redis.calls.at(-1)?.args[4]).toBe('0');
    expect(events).toEqual([]);
    expect(rate.stats.errors).toBe(0);
  });

  it('alone in the fleet, makes up for a late wake-up by at most margin × the spacing below 40 r/s, as adaptiveRate does', async () => {
    const grants = async (lateMs: readonly number[], margin?: number) => {
      const base = virtualClock();
      let n = 0;
      // Every other wake-up of the pacer comes lateMs late (a busy event loop).
      const clock = {
        now: () => base.now(),
        sleep: (ms: number, signal?: AbortSignal) => base.sleep(ms + (lateMs[n++ % lateMs.length] as number), signal),
      };
      const rate = sharedRate({
        client: fakeRedis(() => lease(10, 20)).scripts,
        name: 'n',
        clock,
        margin,
        leaseMs: 60_000,
      });
      await rate.ready();
      const { granted: at, all } = acquireMany(rate, 6, () => base.now());
      await base.advance(2000);
      await all;
      await rate.close();
      return at.slice(1).map((t, i) => t - (at[i] as number));
    };
    // 10 r/s: 100 ms apart; a wake-up 20 ms late keeps its slot only up to 5 ms (0.05 × 100).
    const gaps = await grants([20, 0]);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(95 - 1e-9);
    expect(Math.max(...gaps)).toBeGreaterThan(100);
    // margin 0.2: up to 20 ms is made up for, and the gap after a late wake-up is 80 ms.
    expect(Math.min(...(await grants([20, 0], 0.2)))).toBeCloseTo(80, 9);
  });

  it('with company, sends in its own turns of the fleet’s rate on the server’s clock; a turn missed by more than half the fleet’s spacing is skipped', async () => {
    // Rank 1 of 3 at a fleet rate of 30 r/s, a share of 10: turns at 1000/30 + j × 100 ms on the
    // server's clock, which runs 1,000 ms ahead of this process's; 33.3 / 2 = 16.7 ms late at most.
    const slotsOf = async (lateMs: readonly number[]) => {
      const base = virtualClock();
      let n = 0;
      const clock = {
        now: () => base.now(),
        sleep: (ms: number, signal?: AbortSignal) => base.sleep(ms + (lateMs[n++ % lateMs.length] as number), signal),
      };
      const redis = fakeRedis(() => lease(10, 30, 0, { members: 3, rank: 1, serverMs: base.now() + 1000 }));
      const rate = sharedRate({ client: redis.scripts, name: 'n', clock, leaseMs: 60_000 });
      await rate.ready();
      const { granted: at, all } = acquireMany(rate, 5, () => base.now());
      await base.advance(2000);
      await all;
      await rate.close();
      return at;
    };
    const slot = (j: number) => 1000 / 30 + 100 * j;
    // On time (or 1 or 10 ms late, within the 16.7 ms): every grant in its turn, one period apart.
    expect((await slotsOf([0])).map((t) => Number(t.toFixed(6)))).toEqual(
      [0, 1, 2, 3, 4].map((j) => Number(slot(j).toFixed(6))),
    );
    for (const lateMs of [1, 10]) {
      for (const [j, t] of (await slotsOf([lateMs])).entries()) expect(t).toBeCloseTo(slot(j) + lateMs, 6);
    }
    // Every other wake-up 20 ms late: that slot is skipped, the request goes in the next one.
    const skipping = await slotsOf([0, 20]);
    for (const t of skipping)
      expect(Math.abs(((t - slot(0)) % 100) - 0) < 1e-6 || Math.abs(((t - slot(0)) % 100) - 100) < 1e-6).toBe(true);
    expect(skipping.at(-1) as number).toBeGreaterThan(slot(4) + 1);
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

  it('a hanging Redis: falls back after commandTimeoutMs to a local adaptiveRate seeded with the share, backs off, resyncs', async () => {
    const clock = virtualClock();
    const redis = fakeRedis(() => lease(8, 40));
    const events: string[] = [];
    const rate = sharedRate({
      client: redis.scripts,
      name: 'n',
      clock,
      commandTimeoutMs: 100,
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

  it('back from a fallback, reports what it sent and the service accepted on its local controller, not the gap on its share', async () => {
    // What a member reports goes into the fleet's sum: a member that reported only its share's
    // traffic would report, after 3 s on its local controller, a fraction of what the service
    // accepted, and the fleet's next throttle would read as the service delivering far less.
    const clock = virtualClock();
    const sentAt: number[] = []; // when each call reached Redis
    const redis = fakeRedis(() => {
      sentAt.push(clock.now());
      return lease(10, 10);
    });
    const rate = sharedRate({ client: redis.scripts, name: 'n', clock, commandTimeoutMs: 100 });
    await rate.ready();
    const successes: number[] = [];
    let running = true;
    const loop = (async () => {
      while (running) {
        const ticket = await rate.acquire();
        successes.push(clock.now());
        rate.record('success', ticket);
      }
    })();
    await clock.advance(3000);
    redis.state.mode = 'hang';
    await clock.advance(700);
    expect(rate.mode).toBe('local');
    await clock.advance(3000);
    const from = redis.calls.length;
    redis.state.mode = 'up';
    while (redis.calls.length === from) await clock.advance(1);
    const resync = redis.calls[from] as Call;
    const resyncAt = sentAt.at(-1) as number; // the resync's (a hanging Redis answers none), not the end of the 1-ms step
    running = false;
    await clock.advance(200);
    await loop;
    expect(rate.mode).toBe('shared');
    // Its report: the successes of the span it names, all of them the local controller's.
    const [used, accepted, counted, spanMs] = [2, 3, 17, 18].map((i) => Number(resync.args[i]));
    const inSpan = successes.filter((t) => t > resyncAt - (spanMs as number) && t <= resyncAt).length;
    expect(counted).toBe(inSpan);
    expect(accepted).toBeCloseTo((inSpan * 1000) / (spanMs as number), 9);
    expect(accepted).toBeGreaterThanOrEqual(10); // the local controller kept 10 r/s or more
    expect(used).toBeGreaterThanOrEqual(10);
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

  it('no reply poisons it: a reply with any value out of its bounds is a failed call that names the value, and the share stays', async () => {
    const good = lease(10, 50);
    // One value replaced at a time (maxRatePerSecond 100): each is refused, naming it.
    const bad: [number, string, string][] = [
      [9, '0', 'grid rate before'],
      [12, '-1', 'grid members'],
      [13, 'nan', 'grid from'],
      [0, 'NaN', 'share'],
      [0, '-5', 'share'],
      [0, '101', 'share'],
      [0, '-1', 'share'],
      [1, 'inf', 'fleet rate'],
      [1, '0', 'fleet rate'],
      [1, '0.5', 'fleet rate'],
      [1, '1e6', 'fleet rate'],
      [2, '0.5', 'epoch'],
      [3, '2', 'short'],
      [4, '-1', 'members'],
      [5, '0', 'generation'],
      [5, 'nan', 'generation'],
      [6, '-2', 'rank'],
      [7, 'inf', 'server clock'],
      [8, '0', 'rate last throttled'],
    ];
    const cases = fc.oneof(
      fc.constantFrom(
        ...bad.map(([i, value, name]) => ({ reply: good.map((x, k) => (k === i ? value : x)) as unknown, name })),
      ),
      fc.anything().map((reply) => ({ reply, name: '' })),
      fc.constantFrom(good.slice(0, 5), '10', 10, null).map((reply) => ({ reply: reply as unknown, name: '' })),
    );
    await fc.assert(
      fc.asyncProperty(cases, async ({ reply, name }) => {
        const clock = virtualClock();
        let answer: unknown = good;
        const errors: unknown[] = [];
        const redis = fakeRedis(() => answer);
        const rate = sharedRate({
          client: redis.scripts,
          name: 'n',
          clock,
          maxRatePerSecond: 100,
          onEvent: (e) => e.type === 'fallback' && errors.push(e.error),
        });
        await rate.ready();
        answer = reply;
        rate.record('throttled', await rate.acquire());
        await settle();
        await settle();
        expect(rate.mode).toBe('local');
        expect(rate.ratePerSecond).toBe(10);
        expect(rate.fleetRatePerSecond).toBe(50);
        expect(errors).toHaveLength(1);
        if (name) expect(String((errors[0] as Error).message)).toContain(`Redis answered ${name} = `);
        await rate.close();
      }),
      { numRuns: 200 },
    );
  });

  it('a new process whose first call fails paces at its initialRatePerSecond, within its bounds, and says so', async () => {
    for (const [options, expected] of [
      [{ initialRatePerSecond: 20 }, 20],
      [{ initialRatePerSecond: 20, maxRatePerSecond: 50 }, 20],
      [{ maxRatePerSecond: 50 }, 50],
      [{}, Number.POSITIVE_INFINITY],
    ] as const) {
      const clock = virtualClock();
      const redis = fakeRedis(() => lease(8, 40));
      redis.state.mode = 'refuse';
      const events: SharedEvent[] = [];
      const rate = sharedRate({ client: redis.scripts, name: 'n', clock, ...options, onEvent: (e) => events.push(e) });
      await rate.ready();
      expect(rate.mode).toBe('local');
      expect(rate.ratePerSecond).toBe(expected);
      expect(events).toEqual([expect.objectContaining({ type: 'fallback', seedFrom: 'initial', seed: expected })]);
      if (Number.isFinite(expected)) {
        // Paced at it: 5 requests take 4 intervals.
        const { granted: at, all } = acquireMany(rate, 5, () => clock.now());
        await clock.advance(1000);
        await all;
        expect((at[4] as number) - (at[0] as number)).toBeCloseTo(4000 / expected, 6);
      }
      await rate.close();
    }
  });

  it('a reply of another generation (the state was lost) or an epoch that went back (a failover) restarts the epoch bookkeeping: the next throttle goes at once', async () => {
    const clock = virtualClock();
    let reply = lease(50, 50, 3, { generation: 11 });
    const redis = fakeRedis(() => reply);
    const events: SharedEvent[] = [];
    const rate = sharedRate({ client: redis.scripts, name: 'n', clock, onEvent: (e) => events.push(e) });
    await rate.ready();
    const take = async () => {
      const ticket = rate.acquire();
      await clock.advance(20);
      return ticket;
    };
    const old = await take();
    rate.record('throttled', await take()); // epoch 3 reported
    expect(rate.stats.throttlesSent).toBe(1);
    await settle();
    // The state is lost: a new generation at epoch 0.
    reply = lease(50, 50, 0, { generation: 12 });
    await clock.advance(500);
    await settle();
    expect(rate.generation).toBe(12);
    expect(events.map((e) => [e.type, e.field])).toEqual([['state-lost', 'generation']]);
    // A request sent before the loss, throttled now: counted in the new state's first epoch, sent with its generation.
    rate.record('throttled', old);
    expect(rate.stats.throttlesSent).toBe(2);
    await settle();
    expect(redis.calls.at(-1)?.args.slice(5, 6)).toEqual(['0']);
    expect(redis.calls.at(-1)?.args[21]).toBe('12');
    // The fleet moves to epoch 4 in this generation, then a failover brings back epoch 2.
    reply = lease(50, 50, 4, { generation: 12 });
    await clock.advance(500);
    await settle();
    const late = await take(); // sent in epoch 4
    reply = lease(50, 50, 2, { generation: 12 });
    await clock.advance(500);
    await settle();
    expect(events.map((e) => [e.type, e.field])).toEqual([
      ['state-lost', 'generation'],
      ['state-lost', 'epoch'],
    ]);
    rate.record('throttled', late); // its epoch 4 is now the fleet's 2
    expect(rate.stats.throttlesSent).toBe(3);
    await settle();
    expect(redis.calls.at(-1)?.args[5]).toBe('2');
    expect(rate.stats).toMatchObject({ stateLosses: 2, repairs: 0, staleThrottles: 0 });
    // An older ticket of this generation is stale: counted, not sent.
    reply = lease(50, 50, 3, { generation: 12 });
    await clock.advance(500);
    await settle();
    rate.record('throttled', late);
    expect(rate.stats).toMatchObject({ throttlesSent: 4, staleThrottles: 0 });
    const older = await take();
    reply = lease(50, 50, 5, { generation: 12 });
    await clock.advance(500);
    await settle();
    rate.record('throttled', older);
    expect(rate.stats).toMatchObject({ throttlesSent: 4, staleThrottles: 1 });
    await rate.close();
  });

  it('a state gone at three answers in a row (Redis evicting it) falls back to the local controller; one that stays brings it back', async () => {
    const clock = virtualClock();
    let generation = 1;
    let evicting = false;
    // Evicting, every answer comes from a state made anew: another generation each time.
    const redis = fakeRedis(() => lease(8, 40, 0, { generation: evicting ? ++generation : generation }));
    const events: SharedEvent[] = [];
    const rate = sharedRate({ client: redis.scripts, name: 'n', clock, onEvent: (e) => events.push(e) });
    const renewal = async () => {
      rate.record('success', await rate.acquire());
      await clock.advance(500);
      await settle();
    };
    await rate.ready();
    // One or two losses in a row (a restart, a flush) are relearned in place.
    for (const gone of [true, true, false, true, false]) {
      evicting = gone;
      await renewal();
    }
    expect(rate.mode).toBe('shared');
    expect(rate.stats).toMatchObject({ stateLosses: 3, fallbacks: 0 });
    evicting = true;
    await renewal();
    await renewal();
    expect(rate.mode).toBe('shared');
    await renewal();
    expect(rate.mode).toBe('local');
    const fallback = events.find((e) => e.type === 'fallback');
    expect(String(fallback?.error)).toMatch(/state was gone at 3 answers in a row .*maxmemory-policy noeviction/);
    expect(fallback).toMatchObject({ seedFrom: 'fleet', seed: 8 }); // the last share heard
    expect(rate.stats).toMatchObject({ stateLosses: 6, fallbacks: 1, errors: 0, resyncs: 0 });
    // Still evicting: the tries on ebb's backoff (≤ 2 s apart) find it gone again and it stays local.
    const calls = redis.calls.length;
    for (let i = 0; i < 20; i++) {
      await renewal();
      expect(rate.mode).toBe('local');
    }
    expect(redis.calls.length).toBeGreaterThanOrEqual(calls + 5);
    // The eviction ends: the first answer of the same generation as the last brings it back.
    evicting = false;
    for (let i = 0; i < 5; i++) await renewal();
    expect(rate.mode).toBe('shared');
    expect(rate.stats).toMatchObject({ fallbacks: 1, resyncs: 1, errors: 0 });
    await rate.close();
  });

  it('a repair named in a reply is an event with the key, field and value, counted; not a loss', async () => {
    const clock = virtualClock();
    let reply: string[] = lease(10, 20, 0, { generation: 5 });
    const events: SharedEvent[] = [];
    const rate = sharedRate({
      client: fakeRedis(() => reply).scripts,
      name: 'n',
      clock,
      onEvent: (e) => events.push(e),
    });
    await rate.ready();
    reply = [...lease(10, 20, 0, { generation: 6 }).slice(0, 14), 'ebb:{n}:rate', 'r', '0'];
    await clock.advance(500);
    await settle();
    expect(events).toEqual([expect.objectContaining({ type: 'repair', key: 'ebb:{n}:rate', field: 'r', value: '0' })]);
    expect(rate.stats).toMatchObject({ repairs: 1, stateLosses: 0 });
    await rate.close();
  });

  it('inspect() and reset() take no lease: each is one call in its own mode', async () => {
    const clock = virtualClock();
    const redis = fakeRedis((call) =>
      call.args[24] === 'inspect'
        ? [
            ['r', '40', 'g', '3', 'e', '2', 'gn', '0'],
            ['m1', '20,1,19,20,20,30'],
            ['m1', '1500'],
            ['m1', '1'],
            [],
            '1000',
          ]
        : ['4'],
    );
    const rate = sharedRate({ client: redis.scripts, name: 'n', clock, initialRatePerSecond: 60 });
    const seen = await rate.inspect();
    expect(seen).toMatchObject({
      key: 'ebb:{n}:rate',
      exists: true,
      generation: 3,
      ratePerSecond: 40,
      epoch: 2,
      ghosts: 0,
    });
    expect(seen.members).toEqual([
      {
        id: 'm1',
        sharePerSecond: 20,
        waiting: true,
        acceptedPerSecond: 19,
        sentPerSecond: 20,
        leaseExpiresInMs: 500,
        rank: 0,
      },
    ]);
    await rate.reset();
    expect(rate.generation).toBe(4);
    expect(redis.calls.map((c) => c.args[24])).toEqual(['inspect', 'reset']);
    // The reset's seed is the configured initial rate.
    expect(redis.calls[1]?.args[6]).toBe('60');
    await rate.close();
    expect(redis.calls).toHaveLength(2);
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
      'commandTimeoutMs',
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
    for (const commandTimeoutMs of [Number.NaN, 0, 0.5, Number.POSITIVE_INFINITY, '100']) {
      expect(make({ commandTimeoutMs })).toThrow(/sharedRate\(\): expected `commandTimeoutMs`/);
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

describe('sharedRate as a pipeline mechanism', () => {
  it('goes in a pipeline as it is (no guard() around it): the call passes its turn, a throttle is reported to the fleet', async () => {
    const clock = virtualClock();
    const redis = fakeRedis(() => lease(10, 20));
    const rate = sharedRate({ client: redis.scripts, name: 'n', clock });
    await rate.ready();
    const api = pipeline([rate]);
    const throttle = Object.assign(new Error('429'), { throttled: true });
    const ok = api.execute(() => 'value');
    const throttled = api.execute(() => Promise.reject(throttle)).catch((e: unknown) => e);
    await clock.advance(300); // two turns at 10 r/s
    expect(await ok).toBe('value');
    expect(await throttled).toBe(throttle);
    await settle();
    expect(rate.stats.throttlesSent).toBe(1);
    await rate.close();
  });
});
