// sharedAdaptiveThrottle decides from the ratio of two windows kept in Redis, read by two calls.
// When one call is answered and its twin is not (a timeout, a refusal, a resync that comes later),
// the two counts are of different moments, and their ratio is no rejection probability: a fleet
// whose every request succeeded read as rejecting a quarter. Specified here in virtual time against
// a scripted stand-in for the window script (the Lua itself runs against a real redis-server in
// test/redis): the windows are sent together, and a decision uses two counts of one moment.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import type { RedisScripts } from './client.js';
import { sharedAdaptiveThrottle } from './shared-adaptive-throttle.js';

type Window = 'throttle-requests' | 'throttle-accepts';
type Mode = 'up' | 'hang' | 'refuse';

/**
 * A stand-in keeping one sum per window key (no expiry: the tests are far shorter than the window)
 * and the applied record per process that makes a change count once, each window answering,
 * hanging or refusing as told. `calls` holds the kind of window of each call, in order.
 */
function windowRedis() {
  const sums = new Map<string, number>();
  const records = new Map<string, { seq: number; cum: number }>();
  const modes = new Map<Window, Mode>();
  const calls: Window[] = [];
  const kindOf = (key: string): Window => (key.endsWith('throttle-accepts') ? 'throttle-accepts' : 'throttle-requests');
  const keyOf = (kind: Window) => `ebb:{n}:${kind}`;
  const run = (keys: readonly string[], args: readonly string[]): Promise<unknown> => {
    const kind = kindOf(keys[0] as string);
    calls.push(kind);
    const mode = modes.get(kind) ?? 'up';
    if (mode === 'hang') return new Promise(() => {});
    if (mode === 'refuse') return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
    // ARGV: mode, cum, unacked, seq, … (scripts.ts, "Exactly once").
    const [, cum, unacked, seq] = args.map(Number) as [number, number, number, number];
    const record = records.get(keys[1] as string);
    const delta = record === undefined ? unacked : record.seq >= seq ? 0 : cum - record.cum;
    if (record === undefined || record.seq < seq) records.set(keys[1] as string, { seq, cum });
    const sum = (sums.get(keys[0] as string) ?? 0) + delta;
    sums.set(keys[0] as string, sum);
    // The last part: the record's seq when the call counted as a resend.
    const resent = record !== undefined && record.seq >= seq ? String(record.seq) : '';
    return Promise.resolve([String(sum), '7', '', '', '', resent]);
  };
  const scripts: RedisScripts = {
    evalSha: (_sha, keys, args) => run(keys, args),
    eval: (_s, keys, args) => run(keys, args),
  };
  return {
    scripts,
    modes,
    calls,
    /** Other processes' traffic: `requests` asked, `accepts` accepted. */
    fleet(requests: number, accepts: number) {
      sums.set(keyOf('throttle-requests'), (sums.get(keyOf('throttle-requests')) ?? 0) + requests);
      sums.set(keyOf('throttle-accepts'), (sums.get(keyOf('throttle-accepts')) ?? 0) + accepts);
    },
    sum: (kind: Window) => sums.get(keyOf(kind)) ?? 0,
  };
}

/** Asks and records `n` successes; a local rejection (there must be none here) propagates. */
function succeed(t: { acquire(): unknown; record(o: 'success'): void }, n: number) {
  for (let i = 0; i < n; i++) {
    t.acquire();
    t.record('success');
  }
}

describe('sharedAdaptiveThrottle decides from two counts of one moment (virtual time, scripted Redis)', () => {
  it('the accepts window times out while the requests window is answered: the fleet’s successes are not read as rejections', async () => {
    const clock = virtualClock();
    const redis = windowRedis();
    redis.fleet(100, 100);
    // random 0: any probability above 0 rejects, so one wrong decision shows.
    const t = sharedAdaptiveThrottle({ client: redis.scripts, name: 'n', clock, random: () => 0 });
    await t.ready();
    expect([t.mode, t.requests, t.accepts]).toEqual(['shared', 100, 100]);
    redis.modes.set('throttle-accepts', 'hang');
    redis.fleet(300, 300);
    succeed(t, 10);
    await clock.advance(1000); // the sync: requests answered (410), accepts hangs
    await clock.advance(100); // … and times out
    expect(t.mode).toBe('local');
    // The two windows as the process holds them: requests the fleet's 410, accepts 100 + its own 10.
    // Their ratio would be a probability of (410 − 2 × 110) / 411 = 0.46; the pair of one moment is
    // the last one answered together (110, 110) plus this process's own since.
    expect([t.requests, t.accepts]).toEqual([110, 110]);
    expect(t.rejectionProbability).toBe(0);
    succeed(t, 20);
    expect([t.requests, t.accepts]).toEqual([130, 130]);
    // Redis answers both again: the accepts window's next try sends its twin with it.
    redis.modes.set('throttle-accepts', 'up');
    for (let i = 0; i < 30 && t.mode !== 'shared'; i++) await clock.advance(100);
    expect(t.mode).toBe('shared');
    expect([t.requests, t.accepts]).toEqual([430, 430]);
    expect([redis.sum('throttle-requests'), redis.sum('throttle-accepts')]).toEqual([430, 430]);
    await t.close();
  });

  it('a process whose accepts window is never answered decides from its own counts, and from the fleet’s once both are answered together', async () => {
    const clock = virtualClock();
    const redis = windowRedis();
    // The backend refused three in four of the fleet's requests.
    redis.fleet(400, 100);
    redis.modes.set('throttle-accepts', 'refuse');
    const t = sharedAdaptiveThrottle({ client: redis.scripts, name: 'n', clock, random: () => 0.999 });
    await t.ready();
    expect(t.mode).toBe('local');
    // The requests window holds the fleet's 400 and the accepts window nothing: a probability of
    // 400 / 401 from two moments. Its own counts say nothing yet.
    expect([t.requests, t.accepts, t.rejectionProbability]).toEqual([0, 0, 0]);
    succeed(t, 5);
    redis.modes.set('throttle-accepts', 'up');
    for (let i = 0; i < 30 && t.mode !== 'shared'; i++) await clock.advance(100);
    expect(t.mode).toBe('shared');
    expect([t.requests, t.accepts]).toEqual([405, 105]);
    expect(t.rejectionProbability).toBeCloseTo((405 - 2 * 105) / 406, 12);
    await t.close();
  });

  it('the two windows are sent together: one call each per syncIntervalMs under steady traffic, each pair in one turn', async () => {
    const clock = virtualClock();
    const redis = windowRedis();
    const t = sharedAdaptiveThrottle({ client: redis.scripts, name: 'n', clock, syncIntervalMs: 1000 });
    await t.ready();
    expect(redis.calls).toEqual(['throttle-requests', 'throttle-accepts']);
    for (let ms = 0; ms < 10_000; ms += 50) {
      succeed(t, 1);
      await clock.advance(50);
    }
    // 10 s of traffic: ten syncs of both windows, in pairs.
    expect(redis.calls).toHaveLength(2 + 2 * 10);
    for (let i = 0; i < redis.calls.length; i += 2) {
      expect(redis.calls.slice(i, i + 2).sort()).toEqual(['throttle-accepts', 'throttle-requests']);
    }
    expect(t.stats.commands).toBe(redis.calls.length);
    await t.flush();
    expect([t.requests, t.accepts]).toEqual([200, 200]);
    await t.close();
  });

  it('property: a fleet whose every request was accepted is never throttled locally, whichever calls Redis answers, and the counts end equal to Redis’s', async () => {
    const step = fc.oneof(
      fc.record({ fleet: fc.integer({ min: 0, max: 500 }) }),
      fc.record({
        window: fc.constantFrom<Window>('throttle-requests', 'throttle-accepts'),
        mode: fc.constantFrom<Mode>('up', 'hang', 'refuse'),
      }),
      fc.record({ advanceMs: fc.integer({ min: 0, max: 2500 }) }),
      fc.record({ calls: fc.integer({ min: 0, max: 30 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), fc.integer({ min: 0, max: 1000 }), async (steps, start) => {
        const clock = virtualClock();
        const redis = windowRedis();
        redis.fleet(start, start);
        const t = sharedAdaptiveThrottle({ client: redis.scripts, name: 'n', clock, random: () => 0 });
        await t.ready();
        for (const s of steps) {
          if ('fleet' in s) redis.fleet(s.fleet, s.fleet);
          else if ('mode' in s) redis.modes.set(s.window, s.mode);
          else if ('advanceMs' in s) await clock.advance(s.advanceMs);
          else succeed(t, s.calls);
          expect(t.rejectionProbability).toBe(0);
        }
        redis.modes.clear();
        // Past a hung call's timeout and the longest reconnect wait (2 s).
        await clock.advance(2500);
        for (let i = 0; i < 40 && t.mode !== 'shared'; i++) await clock.advance(250);
        await t.flush();
        expect(t.mode).toBe('shared');
        expect([t.requests, t.accepts]).toEqual([redis.sum('throttle-requests'), redis.sum('throttle-accepts')]);
        await t.close();
      }),
      { numRuns: 150 },
    );
  });
});
