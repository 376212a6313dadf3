// sharedRate's unit tests' stand-in for Redis and the script's reply, shared by its test files.
import type { RedisScripts } from './client.js';
import type { SharedRate } from './shared-rate-options.js';

export type Call = { keys: readonly string[]; args: readonly string[] };

/** A stand-in answering every call with `reply()`; `mode` makes it hang or refuse instead. */
export function fakeRedis(reply: (call: Call) => unknown) {
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

export const settle = () => new Promise((r) => setImmediate(r));
/**
 * The script's reply: share, fleet rate, epoch, short (0/1), members, generation, rank, the
 * server's clock (ms), the rate last throttled (-1: none), the time-division grid before and after
 * (rate, members: here both the fleet's), when the second holds from, and no repair. Alone in the
 * fleet unless told otherwise (with company, the member paces in its turns: time-division tests below).
 */
export const lease = (
  share: number,
  fleet: number,
  epoch = 0,
  o: { members?: number; generation?: number; rank?: number; serverMs?: number } = {},
) => {
  const members = String(o.members ?? 1);
  const grid = fleet < 0 ? '1e300' : String(fleet);
  return [
    String(share),
    String(fleet),
    String(epoch),
    '0',
    members,
    String(o.generation ?? 1),
    String(o.rank ?? 0),
    String(o.serverMs ?? 0),
    '-1',
    grid,
    members,
    grid,
    members,
    '-1e300',
    '',
    '',
    '',
  ];
};

/** Starts `n` requests through `rate` at once; `granted` fills with `now()` as each is let go, `all` settles when all are. */
export function acquireMany(rate: Pick<SharedRate, 'acquire'>, n: number, now: () => number) {
  const granted: number[] = [];
  const all = Promise.all(
    Array.from({ length: n }, async () => {
      await rate.acquire();
      granted.push(now());
    }),
  );
  return { granted, all };
}
