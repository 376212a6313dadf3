// How redisScripts() calls each client shape. The real node-redis 6 and ioredis 6 clients run
// against a real redis-server in test/redis; this pins the argument order for each shape.
import { describe, expect, it } from 'vitest';
import { isNoScript, redisScripts } from './client.js';

describe('redisScripts', () => {
  it('node-redis shape: evalSha/eval with { keys, arguments }', async () => {
    const calls: unknown[][] = [];
    const client = {
      evalSha: (...a: unknown[]) => Promise.resolve(calls.push(['evalSha', ...a])),
      eval: (...a: unknown[]) => Promise.resolve(calls.push(['eval', ...a])),
    };
    const s = redisScripts(client);
    await s.evalSha('abc', ['k'], ['1', '2']);
    await s.eval('return 1', ['k'], ['3']);
    expect(calls).toEqual([
      ['evalSha', 'abc', { keys: ['k'], arguments: ['1', '2'] }],
      ['eval', 'return 1', { keys: ['k'], arguments: ['3'] }],
    ]);
  });

  it('ioredis shape: evalsha/eval with numKeys, keys, args', async () => {
    const calls: unknown[][] = [];
    const client = {
      evalsha: (...a: unknown[]) => Promise.resolve(calls.push(['evalsha', ...a])),
      eval: (...a: unknown[]) => Promise.resolve(calls.push(['eval', ...a])),
    };
    const s = redisScripts(client);
    await s.evalSha('abc', ['k'], ['1', '2']);
    await s.eval('return 1', ['k'], ['3']);
    expect(calls).toEqual([
      ['evalsha', 'abc', 1, 'k', '1', '2'],
      ['eval', 'return 1', 1, 'k', '3'],
    ]);
  });

  it('a RedisScripts (three declared parameters) is used as it is', () => {
    const own = {
      evalSha: (_s: string, _k: readonly string[], _a: readonly string[]) => Promise.resolve(1),
      eval: () => Promise.resolve(1),
    };
    expect(redisScripts(own)).toBe(own);
  });

  it('anything else is a TypeError naming `client`', () => {
    for (const bad of [undefined, null, 0, 'redis://x', {}, { evalSha: 1, eval: 2 }, { get() {} }]) {
      expect(() => redisScripts(bad)).toThrow(TypeError);
      expect(() => redisScripts(bad)).toThrow(/`client`/);
    }
  });

  it('isNoScript recognises the server error from either client, and nothing else', () => {
    expect(isNoScript(new Error('NOSCRIPT No matching script. Please use EVAL.'))).toBe(true);
    expect(isNoScript({ message: 'NOSCRIPT No matching script' })).toBe(true);
    for (const other of [new Error('ERR unknown command'), 'NOSCRIPT', null, undefined, { message: 42 }]) {
      expect(isNoScript(other)).toBe(false);
    }
  });
});
