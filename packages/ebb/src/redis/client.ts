import { show } from '../core/validate.js';

/**
 * The two Redis commands `ebb/redis` needs, as one small structural interface: run a loaded Lua
 * script by its SHA1 (`EVALSHA`) and load one (`SCRIPT LOAD`). ebb has no Redis dependency; the
 * caller's client provides these. {@link redisScripts} adapts node-redis and ioredis clients to it
 * (pass the client itself to any `ebb/redis` constructor: it is detected structurally), and any
 * other client can be adapted in a few lines.
 *
 * - `evalSha` resolves with the script's reply; it rejects with an error whose message starts with
 *   `NOSCRIPT` when the server does not know the SHA1 (after a restart or `SCRIPT FLUSH`).
 * - `scriptLoad` resolves with the SHA1 the server computed.
 *
 * @example
 * const scripts: RedisScripts = {
 *   evalSha: (sha, keys, args) => myClient.send('EVALSHA', sha, keys.length, ...keys, ...args),
 *   scriptLoad: (source) => myClient.send('SCRIPT', 'LOAD', source),
 * };
 */
export interface RedisScripts {
  evalSha(sha: string, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  scriptLoad(source: string): Promise<string>;
}

/** The part of a node-redis (v4 to v6) client used here: `evalSha(sha, { keys, arguments })`, `scriptLoad(source)`. */
interface NodeRedisLike {
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  scriptLoad(source: string): Promise<string>;
}

/** The part of an ioredis client used here: `evalsha(sha, numKeys, ...keysAndArgs)`, `script('LOAD', source)`. */
interface IoRedisLike {
  evalsha(sha: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  script(subcommand: 'LOAD', source: string): Promise<unknown>;
}

const isFn = (o: object, name: string): boolean => typeof (o as Record<string, unknown>)[name] === 'function';

/**
 * Adapts the caller's client to {@link RedisScripts}, by shape:
 * - an object that already has `evalSha(sha, keys, args)` with three parameters and `scriptLoad`
 *   is taken as a `RedisScripts`;
 * - a node-redis client (`evalSha(sha, { keys, arguments })` and `scriptLoad`) — versions 4 to 6;
 * - an ioredis client (`evalsha(sha, numKeys, ...)` and `script('LOAD', ...)`).
 *
 * Nothing is imported from either package. Throws a `TypeError` for anything else.
 */
export function redisScripts(client: unknown, where = 'redisScripts()'): RedisScripts {
  if (typeof client !== 'object' || client === null) {
    throw new TypeError(
      `${where}: expected \`client\` to be a node-redis or ioredis client (or { evalSha, scriptLoad }), got ${show(client)}.`,
    );
  }
  if (isFn(client, 'evalSha') && isFn(client, 'scriptLoad')) {
    const c = client as NodeRedisLike | RedisScripts;
    // node-redis's evalSha takes (sha, options); a RedisScripts one takes (sha, keys, args). Both
    // are called the RedisScripts way only when the function declares three parameters.
    if ((c.evalSha as (...a: unknown[]) => unknown).length >= 3) return c as RedisScripts;
    const n = c as NodeRedisLike;
    return {
      evalSha: (sha, keys, args) => n.evalSha(sha, { keys: [...keys], arguments: [...args] }),
      scriptLoad: (source) => n.scriptLoad(source),
    };
  }
  if (isFn(client, 'evalsha') && isFn(client, 'script')) {
    const c = client as IoRedisLike;
    return {
      evalSha: (sha, keys, args) => c.evalsha(sha, keys.length, ...keys, ...args),
      scriptLoad: async (source) => String(await c.script('LOAD', source)),
    };
  }
  throw new TypeError(
    `${where}: expected \`client\` to be a node-redis client (evalSha, scriptLoad), an ioredis client (evalsha, script) or { evalSha(sha, keys, args), scriptLoad(source) }, got ${show(client)}.`,
  );
}

/** True for the server's "unknown script" error (`NOSCRIPT No matching script...`), from either client. */
export function isNoScript(error: unknown): boolean {
  const message = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  return typeof message === 'string' && message.startsWith('NOSCRIPT');
}
