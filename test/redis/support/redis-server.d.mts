export const REDIS_SERVER: string;
export const REDIS_CLI: string;
/** Whether the tests can run; in CI a missing redis-server is an error, not a skip. */
export function haveRedis(): boolean;
/** A free TCP port on 127.0.0.1: bind port 0, read it, close. */
export function freePort(): Promise<number>;
/** A free port whose Cluster bus port (port + 10000) is free too; at most 50 tries. */
export function freeClusterPort(): Promise<number>;
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  /** The server's PID (from the process we spawned). */
  pid(): number;
  /** Starts (again) on the same port: after `kill()`, a restart with empty data. */
  start(): Promise<void>;
  /** Sends a signal to the server by PID. */
  signal(sig: NodeJS.Signals): void;
  /** SIGKILL by PID and waits for the exit. */
  kill(): Promise<void>;
  /** Stops the server by PID and removes its directory. */
  stop(): Promise<void>;
}
/** Starts a redis-server on `port` (default: a free one); `extra` are more command-line options. */
export function startRedis(extra?: readonly string[], fixedPort?: number): Promise<RedisServer>;
/** A node-redis or ioredis client connected to `url` as docs/redis.md advises, and how to close it. */
export function connectRedis(
  library: 'node-redis' | 'ioredis',
  url: string,
): Promise<{ client: unknown; quit: () => Promise<void> }>;
