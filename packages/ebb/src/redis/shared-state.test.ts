// The engine's failure behaviour in virtual time, with a scripted stand-in for the two Redis
// commands (the Lua itself runs against a real redis-server in test/redis). What is checked here is
// ebb's own logic: batching, single flight, the timeout, the fallback and its backoff, resync,
// NOSCRIPT reload, and that no reply can poison the level.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import { type RedisScripts, scriptSha } from './client.js';
import type { SharedEvent } from './protocol.js';
import { sharedTokenBudget } from './shared-token-budget.js';

type Reply = (keys: readonly string[], args: readonly string[]) => Promise<unknown>;

/**
 * A stand-in keeping one clamped level per key and one applied record per process (what
 * LEVEL_SCRIPT does, with its checks of the record only), with a switchable failure mode. `calls`
 * holds each call's SHA (or 'eval'), keys and ARGV: [mode, cum, unacked, seq, seed, generation,
 * record expiry, distrusted record seq, min, max, key expiry]. The reply: [level, generation, the
 * fault's key, field, value, the record's seq when the call counted as a resend].
 */
function fakeRedis() {
  const levels = new Map<string, number>();
  const records = new Map<string, { seq: number; cum: number }>();
  const calls: string[][] = [];
  let loaded = false;
  let generation = 7;
  const state = {
    mode: 'up' as 'up' | 'hang' | 'refuse' | 'noscript',
    override: undefined as Reply | undefined,
  };
  const apply = (keys: readonly string[], args: readonly string[]) => {
    if (state.override) return state.override(keys, args);
    const [, cum, unacked, seq, seed, , , , lo, hi] = args.map(Number) as number[] as [
      number,
      number,
      number,
      number,
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    const key = keys[0] as string;
    const recordKey = keys[1] as string;
    let record = records.get(recordKey);
    let fault = ['', '', ''];
    // Not the caller's: more than 10^6 ahead of its call, or the seq it distrusts.
    if (record !== undefined && (record.seq > seq + 1e6 || String(record.seq) === args[7])) {
      fault = [recordKey, 'seq,cum', `${record.seq},${record.cum}`];
      record = undefined;
    }
    const resent = record !== undefined && record.seq >= seq ? String(record.seq) : '';
    const delta = record === undefined ? unacked : resent !== '' ? 0 : cum - record.cum;
    if (resent === '') records.set(recordKey, { seq, cum });
    const v = Math.min(hi, Math.max(lo, (levels.get(key) ?? seed) + delta));
    levels.set(key, v);
    return Promise.resolve([String(v), String(generation), ...fault, resent]);
  };
  const lose = () => {
    levels.clear();
    records.clear();
    generation++;
  };
  const scripts: RedisScripts = {
    evalSha(sha, keys, args) {
      calls.push([sha, ...keys, ...args]);
      if (state.mode === 'hang') return new Promise(() => {});
      if (state.mode === 'refuse') return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
      if (state.mode === 'noscript' || !loaded) {
        state.mode = 'up';
        return Promise.reject(new Error('NOSCRIPT No matching script. Please use EVAL.'));
      }
      return apply(keys, args);
    },
    eval(source, keys, args) {
      calls.push(['eval', ...keys, ...args]);
      expect(source).toMatch(/redis\.call/);
      loaded = true;
      return apply(keys, args);
    },
  };
  return { scripts, levels, records, calls, state, lose };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('scriptSha', () => {
  it('matches the FIPS 180 SHA-1 test vectors', async () => {
    // FIPS 180-2, appendix A.1 ("abc") and the empty message.
    expect(await scriptSha('abc')).toBe('a9993e364706816aba3e25717850c26c9cd0d89d');
    expect(await scriptSha('')).toBe('da39a3ee5e6b4b0d3255bfef95601890afd80709');
  });
});

describe('sharedTokenBudget engine (virtual time, scripted Redis)', () => {
  it('loads the script once, batches successes until syncIntervalMs, sends failures at once', async () => {
    const clock = virtualClock();
    const redis = fakeRedis();
    const b = sharedTokenBudget({ client: redis.scripts, name: 'n', clock, syncIntervalMs: 1000 });
    await b.ready();
    expect(redis.levels.get('ebb:{n}:token-budget')).toBe(10_000);
    // The first call: EVALSHA (unknown to the server), then EVAL, which caches the script.
    expect(redis.calls).toHaveLength(2);
    expect(redis.calls[0]?.[0]).toMatch(/^[0-9a-f]{40}$/);
    expect(redis.calls[1]?.[0]).toBe('eval');
    redis.calls.length = 1;
    for (let i = 0; i < 50; i++) b.recordSuccess({ attempt: 1, lastError: undefined });
    await settle();
    expect(redis.calls).toHaveLength(1); // 50 successes: nothing sent yet
    b.recordFailure();
    await settle();
    expect(redis.calls).toHaveLength(2); // the failure goes at once, with the successes before it
    // ARGV after the SHA and two keys: mode, cum, unacked, seq — the batch's sum is all not yet answered.
    expect(redis.calls[1]?.slice(3, 7)).toEqual(['', String(50 * 100 - 1000), String(50 * 100 - 1000), '2']);
    for (let i = 0; i < 50; i++) b.recordSuccess({ attempt: 1, lastError: undefined });
    await clock.advance(999);
    expect(redis.calls).toHaveLength(2);
    await clock.advance(1);
    await settle();
    expect(redis.calls).toHaveLength(3);
    await b.close();
  });

  it('after an idle spell longer than syncIntervalMs, the first change reads the fleet back at once; the next ones are batched again', async () => {
    const clock = virtualClock();
    const redis = fakeRedis();
    const b = sharedTokenBudget({ client: redis.scripts, name: 'n', clock, syncIntervalMs: 1000 });
    await b.ready();
    const sent = redis.calls.length;
    // Another process spends the bucket meanwhile (the level in Redis drops to 2 tokens).
    redis.levels.set('ebb:{n}:token-budget', 2000);
    await clock.advance(1001);
    b.recordSuccess({ attempt: 1, lastError: undefined });
    await settle();
    expect(redis.calls).toHaveLength(sent + 1);
    // The answer brings the fleet's level: 2 tokens + this success's 0.1 — below half of 10, no retry.
    expect(b.tokens).toBeCloseTo(2.1, 9);
    expect(b.tryAcquireRetry()).toBe(false);
    // Busy again: the next successes wait for the interval.
    for (let i = 0; i < 5; i++) b.recordSuccess({ attempt: 1, lastError: undefined });
    await settle();
    expect(redis.calls).toHaveLength(sent + 1);
    await clock.advance(1000);
    await settle();
    expect(redis.calls).toHaveLength(sent + 2);
    // Not idle within the interval: a success 999 ms after the last answer is batched.
    await clock.advance(999);
    b.recordSuccess({ attempt: 1, lastError: undefined });
    await settle();
    expect(redis.calls).toHaveLength(sent + 2);
    await b.close();
  });

  it('a hanging Redis: falls back after commandTimeoutMs, never more than one call in flight, backs off, resyncs', async () => {
    const clock = virtualClock();
    const redis = fakeRedis();
    const events: string[] = [];
    const b = sharedTokenBudget({
      client: redis.scripts,
      name: 'n',
      clock,
      commandTimeoutMs: 100,
      onEvent: (e) => events.push(`${e.type}@${e.atMs}`),
    });
    await b.ready();
    redis.state.mode = 'hang';
    const before = redis.calls.length;
    for (let i = 0; i < 5; i++) b.recordFailure(); // one call goes, four wait behind it
    await settle();
    expect(redis.calls.length - before).toBe(1);
    expect(b.mode).toBe('shared');
    expect(b.tokens).toBe(5); // local changes count at once
    await clock.advance(100);
    await settle();
    expect(b.mode).toBe('local');
    expect(events).toEqual(['fallback@100']);
    // Failures while local: no call until the backoff's wait is over (≤ 100 ms for the first).
    const during = redis.calls.length;
    b.recordFailure();
    await settle();
    expect(redis.calls.length).toBeLessThanOrEqual(during + 1);
    redis.state.mode = 'up';
    await clock.advance(20_000);
    await settle();
    expect(b.mode).toBe('shared');
    expect(events.at(-1)?.startsWith('resync')).toBe(true);
    // Every local failure reached Redis once: 10 − 6 = 4 (the timed-out call never ran here, so the
    // next call's running sum carries its failures too).
    expect(redis.levels.get('ebb:{n}:token-budget')).toBe(4000);
    expect(b.stats).toMatchObject({ fallbacks: 1, resyncs: 1 });
    await b.close();
  });

  it('flush() also waits for the changes made while a call was in flight', async () => {
    const clock = virtualClock();
    const redis = fakeRedis();
    const b = sharedTokenBudget({ client: redis.scripts, name: 'n', clock });
    await b.ready();
    for (let i = 0; i < 3; i++) b.recordFailure(); // one call goes, two failures wait behind it
    await b.flush();
    expect(redis.levels.get('ebb:{n}:token-budget')).toBe(7000);
    await b.close();
  });

  it('close() and flush() while backing off after a failure send the changes once more (bounded by commandTimeoutMs), so a short-lived process hands back what it recorded', async () => {
    for (const end of ['close', 'flush'] as const) {
      const clock = virtualClock();
      const redis = fakeRedis();
      const b = sharedTokenBudget({ client: redis.scripts, name: 'n', clock });
      await b.ready();
      redis.state.mode = 'refuse';
      b.recordFailure(); // urgent: sent at once, refused; the next try waits for the reconnect backoff
      await settle();
      expect(b.mode).toBe('local');
      redis.state.mode = 'up'; // Redis is back, within the backoff
      for (let i = 0; i < 3; i++) b.recordFailure();
      const sent = redis.calls.length;
      await (end === 'close' ? b.close() : b.flush());
      expect(redis.calls.length, end).toBeGreaterThan(sent);
      // All four failures reach the fleet's level: 10 − 4 tokens.
      expect(redis.levels.get('ebb:{n}:token-budget'), end).toBe(6000);
      expect(b.mode, end).toBe('shared');
      if (end === 'flush') await b.close();
    }
  });

  it('a refusing Redis before the first answer: ready() resolves, the local bucket starts full', async () => {
    const clock = virtualClock();
    const redis = fakeRedis();
    redis.state.mode = 'refuse';
    const b = sharedTokenBudget({ client: redis.scripts, name: 'n', clock });
    expect(b.mode).toBe('syncing');
    expect(b.tryAcquireRetry()).toBe(false);
    await b.ready();
    expect(b.mode).toBe('local');
    expect(b.tryAcquireRetry()).toBe(true);
    await b.close();
  });

  it('NOSCRIPT (a restarted Redis): reloads the script and the same call succeeds', async () => {
    const clock = virtualClock();
    const redis = fakeRedis();
    const b = sharedTokenBudget({ client: redis.scripts, name: 'n', clock });
    await b.ready();
    redis.state.mode = 'noscript';
    b.recordFailure();
    await settle();
    expect(b.mode).toBe('shared');
    expect(b.stats.errors).toBe(0);
    expect(redis.levels.get('ebb:{n}:token-budget')).toBe(9000);
    await b.close();
  });

  it("no reply can poison the level: anything but [a level within the bounds, a generation, a repair, '' or a resend's record seq] is a failed call, naming what was wrong", async () => {
    const replies = fc.oneof(
      fc.anything(),
      fc.tuple(
        fc.oneof(fc.constantFrom('5000', '0', '10000', '-1', '10001', 'nan', 'inf', '1e300', ''), fc.anything()),
        fc.oneof(fc.constantFrom('7', '0', '-3', '1.5', 'nan', '9007199254740993'), fc.anything()),
        fc.constant(''),
        fc.constant(''),
        fc.constant(''),
        // '2': the call's own seq (a resend of this very call), a record this process wrote.
        // '1000003': more than 10^6 above the call's own number.
        fc.oneof(fc.constantFrom('', '2', 'x', '-1', '1.5', '1e300', 'nan', '1000003'), fc.anything()),
      ),
    );
    await fc.assert(
      fc.asyncProperty(replies, async (reply) => {
        const clock = virtualClock();
        const redis = fakeRedis();
        const errors: unknown[] = [];
        const b = sharedTokenBudget({
          client: redis.scripts,
          name: 'n',
          clock,
          onEvent: (e) => e.type === 'fallback' && errors.push(e.error),
        });
        await b.ready();
        redis.state.override = () => Promise.resolve(reply);
        b.recordFailure();
        await settle();
        const [level, generation, , , , resent] = Array.isArray(reply) ? reply : [];
        const n = typeof level === 'string' || typeof level === 'number' ? Number(level) : Number.NaN;
        const g = typeof generation === 'string' ? Number(generation) : Number.NaN;
        const good =
          Array.isArray(reply) &&
          reply.length === 6 &&
          n >= 0 &&
          n <= 10_000 &&
          Number.isSafeInteger(g) &&
          g >= 1 &&
          (resent === '' || resent === '2');
        if (good) {
          expect(b.mode).toBe('shared');
          expect(b.tokens).toBe(n / 1000);
        } else {
          expect(b.mode).toBe('local');
          expect(b.tokens).toBe(9);
          // The error names the value that was wrong.
          const message = String((errors[0] as Error).message);
          if (Array.isArray(reply) && reply.length === 6) expect(message).toMatch(/level = |generation = |resent = /);
        }
        expect(Number.isFinite(b.tokens)).toBe(true);
        await b.close();
      }),
      { numRuns: 300 },
    );
  });

  it('a call that timed out but ran, and its resend: applied once; a reply of another generation is a state lost', async () => {
    const clock = virtualClock();
    const redis = fakeRedis();
    const events: string[] = [];
    const b = sharedTokenBudget({
      client: redis.scripts,
      name: 'n',
      clock,
      commandTimeoutMs: 100,
      onEvent: (e) => events.push(`${e.type}${e.field ? `:${e.field}` : ''}`),
    });
    await b.ready();
    // Redis runs the call but its answer is held until after the timeout (a stopped server).
    let release: () => void = () => {};
    redis.state.override = (keys, args) => {
      redis.state.override = undefined;
      const ran = redis.scripts.eval('redis.call', keys, args);
      return new Promise((resolve) => {
        release = () => resolve(ran);
      });
    };
    b.recordFailure(); // sent at once
    b.recordFailure(); // waits behind it
    await settle();
    await clock.advance(100);
    expect(b.mode).toBe('local');
    expect(redis.levels.get('ebb:{n}:token-budget')).toBe(9000); // the first call ran
    release();
    b.recordFailure();
    await clock.advance(3000);
    await b.flush();
    expect(b.mode).toBe('shared');
    // Three failures, each once, though the first was sent twice.
    expect(redis.levels.get('ebb:{n}:token-budget')).toBe(7000);
    expect(b.tokens).toBe(7);
    // The state is lost: the next call seeds it from the last answer, and says so.
    redis.lose();
    b.recordFailure();
    await b.flush();
    expect(redis.levels.get('ebb:{n}:token-budget')).toBe(6000);
    expect(events).toEqual(['fallback', 'resync', 'state-lost:generation']);
    expect(b.stats).toMatchObject({ stateLosses: 1, repairs: 0 });
    await b.close();
  });

  it("a record above every number the process sent is not its own: the change still counts, the next call names the record as distrusted and it is rewritten, with a 'repair' event naming it", async () => {
    const clock = virtualClock();
    const redis = fakeRedis();
    const events: SharedEvent[] = [];
    const b = sharedTokenBudget({ client: redis.scripts, name: 'n', clock, onEvent: (e) => events.push(e) });
    await b.ready();
    const [record] = [...redis.records.keys()] as [string];
    // Within 10^6 of the process's next number: the script alone reads it as a newer record of its own.
    redis.records.set(record, { seq: 999_999, cum: 0 });
    b.recordFailure();
    await b.flush();
    expect(redis.levels.get('ebb:{n}:token-budget')).toBe(9000);
    expect(b.tokens).toBe(9);
    expect(events).toEqual([
      { type: 'repair', error: undefined, atMs: 0, key: record, field: 'seq,cum', value: '999999,0' },
    ]);
    expect(redis.records.get(record)).toEqual({ seq: 1_000_000, cum: -1000 });
    for (let i = 0; i < 3; i++) {
      b.recordFailure();
      await b.flush();
    }
    expect(redis.levels.get('ebb:{n}:token-budget')).toBe(6000);
    // ARGV seq and distrusted seq of each call: the first sync (EVALSHA refused, then EVAL), the
    // call that found the record, the one that named it (numbered above it), then three more.
    expect(redis.calls.map((c) => [c[6], c[10]])).toEqual([
      ['1', ''],
      ['1', ''],
      ['2', ''],
      ['1000000', '999999'],
      ['1000001', ''],
      ['1000002', ''],
      ['1000003', ''],
    ]);
    expect(b.stats).toMatchObject({ repairs: 1, errors: 0, fallbacks: 0 });
    await b.close();
  });

  it('a distrusted record and calls that time out and run late: every change counts once', async () => {
    const variants = [
      'the call naming the record ran, its answer lost',
      'the call naming the record ran after the next one',
      'a call sent before the record was overwritten ran after the repair',
    ] as const;
    for (const variant of variants) {
      const clock = virtualClock();
      const redis = fakeRedis();
      const b = sharedTokenBudget({ client: redis.scripts, name: 'n', clock, commandTimeoutMs: 100 });
      await b.ready();
      const [record] = [...redis.records.keys()] as [string];
      const run = (keys: readonly string[], args: readonly string[]) => redis.scripts.eval('redis.call', keys, args);
      let release: () => void = () => {};
      if (variant === 'a call sent before the record was overwritten ran after the repair') {
        // Held unrun until released; the record is overwritten meanwhile.
        redis.state.override = (keys, args) => {
          redis.state.override = undefined;
          return new Promise((resolve) => {
            release = () => resolve(run(keys, args));
          });
        };
        b.recordFailure();
        await clock.advance(100);
        redis.records.set(record, { seq: 999_999, cum: 0 });
      } else {
        redis.records.set(record, { seq: 999_999, cum: 0 });
        // The call that finds the record answers; the one that names it as distrusted is held.
        const hold = (keys: readonly string[], args: readonly string[]): Promise<unknown> => {
          redis.state.override = undefined;
          if (args[7] === '') {
            const answered = run(keys, args);
            redis.state.override = hold;
            return answered;
          }
          if (variant === 'the call naming the record ran, its answer lost') {
            const ran = run(keys, args);
            return new Promise((resolve) => {
              release = () => resolve(ran);
            });
          }
          return new Promise((resolve) => {
            release = () => resolve(run(keys, args));
          });
        };
        redis.state.override = hold;
        b.recordFailure();
        await settle();
        await clock.advance(100);
      }
      expect(b.mode, variant).toBe('local');
      b.recordFailure();
      await clock.advance(3000);
      await b.flush();
      release();
      await settle();
      expect(b.mode, variant).toBe('shared');
      // Two failures, each once: 10 − 2 tokens.
      expect(redis.levels.get('ebb:{n}:token-budget'), variant).toBe(8000);
      b.recordFailure();
      await b.flush();
      expect(redis.levels.get('ebb:{n}:token-budget'), variant).toBe(7000);
      expect(b.tokens, variant).toBe(7);
      await b.close();
    }
  });

  it('a distrusted record a few numbers ahead: the process numbers its calls above it, so a call of its own whose answer was lost is never taken for it', async () => {
    const clock = virtualClock();
    const redis = fakeRedis();
    const b = sharedTokenBudget({ client: redis.scripts, name: 'n', clock, commandTimeoutMs: 100 });
    await b.ready();
    const [record] = [...redis.records.keys()] as [string];
    const run = (keys: readonly string[], args: readonly string[]) => redis.scripts.eval('redis.call', keys, args);
    redis.records.set(record, { seq: 5, cum: 0 });
    // The call that finds the record answers; the next three name it as distrusted, run, and their
    // answers are lost; then Redis answers again.
    let lost = 0;
    const swallow = (keys: readonly string[], args: readonly string[]): Promise<unknown> => {
      redis.state.override = undefined;
      const ran = run(keys, args);
      if (args[7] === '') {
        redis.state.override = swallow;
        return ran;
      }
      if (++lost < 3) redis.state.override = swallow;
      return new Promise(() => {});
    };
    redis.state.override = swallow;
    for (let i = 0; i < 4; i++) {
      b.recordFailure();
      await clock.advance(3000);
    }
    await b.flush();
    expect(lost).toBe(3);
    expect(b.mode).toBe('shared');
    // Four failures, each once.
    expect(redis.levels.get('ebb:{n}:token-budget')).toBe(6000);
    expect(b.tokens).toBe(6);
    await b.close();
  });

  it('bad options throw, naming the option, the value and the fix', () => {
    const client = fakeRedis().scripts;
    expect(() => sharedTokenBudget({ client, name: 'a{b}' })).toThrow(/`name`.*non-empty string without \{ or \}/);
    expect(() => sharedTokenBudget({ client, name: '' })).toThrow(TypeError);
    expect(() => sharedTokenBudget({ client: null, name: 'x' })).toThrow(/`client`.*node-redis or ioredis/);
    expect(() => sharedTokenBudget({ client: {}, name: 'x' })).toThrow(TypeError);
    for (const commandTimeoutMs of [Number.NaN, -1, 0, Number.POSITIVE_INFINITY, 0.5]) {
      expect(() => sharedTokenBudget({ client, name: 'x', commandTimeoutMs })).toThrow(RangeError);
    }
    expect(() => sharedTokenBudget({ client, name: 'x', commandTimeoutMs: '100' as never })).toThrow(
      /`commandTimeoutMs`.*got '100'|`commandTimeoutMs`/,
    );
    expect(() => sharedTokenBudget({ client, name: 'x', maxTokens: -3 })).toThrow(
      /sharedTokenBudget\(\): expected `maxTokens`/,
    );
    expect(() => sharedTokenBudget({ client, name: 'x', tokenRatio: 0.0001 })).toThrow(/`tokenRatio`/);
    expect(() => sharedTokenBudget({ client, name: 'x', maxtokens: 3 } as never)).toThrow(/unknown option `maxtokens`/);
  });
});
