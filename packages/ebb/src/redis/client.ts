import { describe } from '../core/boundary.js';
import { show } from '../core/validate.js';

/**
 * The two Redis commands `ebb/redis` needs, as one small structural interface: run a Lua script by
 * its SHA1 (`EVALSHA`), or by its source (`EVAL`, which also caches it on that server). ebb has no
 * Redis dependency; the caller's client provides these. {@link redisScripts} adapts node-redis and
 * ioredis clients — single-node or Cluster — to it (pass the client itself to any `ebb/redis`
 * constructor: it is detected by shape), and any other client can be adapted in a few lines.
 *
 * Both commands name their keys, so a Cluster client sends them to the node that owns the key;
 * that is why ebb never uses `SCRIPT LOAD`, which a Cluster client sends to an arbitrary node.
 *
 * - `evalSha` resolves with the script's reply, or rejects with an error whose message starts
 *   with `NOSCRIPT` when that server does not know the SHA1 (after a restart or `SCRIPT FLUSH`).
 * - `eval` runs the source and resolves with its reply.
 *
 * @example
 * const scripts: RedisScripts = {
 *   evalSha: (sha, keys, args) => myClient.send('EVALSHA', sha, keys.length, ...keys, ...args),
 *   eval: (source, keys, args) => myClient.send('EVAL', source, keys.length, ...keys, ...args),
 * };
 */
export interface RedisScripts {
  evalSha(sha: string, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  eval(source: string, keys: readonly string[], args: readonly string[]): Promise<unknown>;
}

/** The part of a node-redis (v4 to v6) client or cluster used here: `evalSha` / `eval` with `{ keys, arguments }`. */
interface NodeRedisLike {
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(source: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** The part of an ioredis client or cluster used here: `evalsha` / `eval` with `(numKeys, ...keysAndArgs)`. */
interface IoRedisLike {
  evalsha(sha: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  eval(source: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
}

const isFn = (o: object, name: string): boolean => typeof (o as Record<string, unknown>)[name] === 'function';

/**
 * Adapts the caller's client to {@link RedisScripts}, by shape:
 * - an object with `evalSha(sha, keys, args)` declaring three parameters, and `eval`, is taken
 *   as a `RedisScripts`;
 * - a node-redis client or cluster (`evalSha(sha, { keys, arguments })`, `eval`) — versions 4 to 6;
 * - an ioredis client or cluster (`evalsha(sha, numKeys, ...)`, `eval`).
 *
 * Nothing is imported from either package. Throws a `TypeError` for anything else.
 */
export function redisScripts(client: unknown, where = 'redisScripts()'): RedisScripts {
  if (typeof client !== 'object' || client === null) {
    throw new TypeError(
      `${where}: expected \`client\` to be a node-redis or ioredis client (or { evalSha, eval }), got ${show(client)}.`,
    );
  }
  if (isFn(client, 'evalSha') && isFn(client, 'eval')) {
    const c = client as NodeRedisLike | RedisScripts;
    // node-redis's evalSha takes (sha, options); a RedisScripts one takes (sha, keys, args). A
    // function declaring three parameters is called the RedisScripts way.
    if ((c.evalSha as (...a: unknown[]) => unknown).length >= 3) return c as RedisScripts;
    const n = c as NodeRedisLike;
    return {
      evalSha: (sha, keys, args) => n.evalSha(sha, { keys: [...keys], arguments: [...args] }),
      eval: (source, keys, args) => n.eval(source, { keys: [...keys], arguments: [...args] }),
    };
  }
  if (isFn(client, 'evalsha') && isFn(client, 'eval')) {
    const c = client as IoRedisLike;
    return {
      evalSha: (sha, keys, args) => c.evalsha(sha, keys.length, ...keys, ...args),
      eval: (source, keys, args) => c.eval(source, keys.length, ...keys, ...args),
    };
  }
  // A promise (an un-awaited `createClient().connect()`) is named, and its rejection handled.
  const got = describe(client);
  throw new TypeError(
    `${where}: expected \`client\` to be a node-redis client (evalSha, eval), an ioredis client (evalsha, eval) or { evalSha(sha, keys, args), eval(source, keys, args) }, got ${got}.${got === 'a promise' ? ' Await it (the client, not the promise of its connection).' : ''}`,
  );
}

/**
 * The SHA1 of a script's source, as `EVALSHA` wants it (lowercase hex), with the host's WebCrypto
 * (Node.js >= 20, browsers, Deno, Bun): no dependency, no `SCRIPT LOAD` round trip.
 */
export async function scriptSha(source: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-1', new TextEncoder().encode(source));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** True for the server's "unknown script" error (`NOSCRIPT No matching script...`), from either client. */
export function isNoScript(error: unknown): boolean {
  const message = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  return typeof message === 'string' && message.startsWith('NOSCRIPT');
}
