// A real redis-server for tests and the redis benchmarks: a generated config on a free 127.0.0.1 port, its own directory
// and pid file, no persistence, stopped by PID. Fails in CI when redis-server is missing; skips
// locally with a message.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordSkip } from '../../support/skips.mjs';

// EBB_TEST_REDIS_SERVER points elsewhere: test/support/skip-summary tests the skip with it.
export const REDIS_SERVER = process.env.EBB_TEST_REDIS_SERVER ?? '/usr/bin/redis-server';
export const REDIS_CLI = '/usr/bin/redis-cli';

/** Whether the tests can run; in CI a missing redis-server is an error, not a skip. */
export function haveRedis() {
  if (existsSync(REDIS_SERVER)) return true;
  if (process.env.CI) throw new Error(`${REDIS_SERVER} is missing: .ci/run must install redis-server`);
  console.warn(`skipping Redis tests: ${REDIS_SERVER} is not installed (apt-get install redis-server)`);
  recordSkip('redis-server');
  return false;
}

/** A free TCP port on 127.0.0.1: bind port 0, read it, close. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function ping(port) {
  return new Promise((resolve) => {
    const c = createConnection({ host: '127.0.0.1', port });
    const done = (ok) => {
      c.destroy();
      resolve(ok);
    };
    c.setTimeout(200, () => done(false));
    c.once('error', () => done(false));
    c.once('connect', () => c.write('PING\r\n'));
    c.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

/** Whether `port` can be bound on 127.0.0.1 now. */
function bindable(port) {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A free port whose Cluster bus port (port + 10000) is free too; at most 50 tries. */
export async function freeClusterPort() {
  for (let i = 0; i < 50; i++) {
    const port = await freePort();
    if (port + 10_000 <= 65_535 && (await bindable(port + 10_000))) return port;
  }
  throw new Error('no free port with a free cluster bus port (port + 10000) after 50 tries');
}

/** Starts a redis-server on `port` (default: a free one); `extra` are more command-line options. */
export async function startRedis(extra = [], fixedPort) {
  const port = fixedPort ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'ebb-redis-'));
  let child;
  let exited = Promise.resolve();
  const start = async () => {
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--pidfile',
      join(dir, 'redis.pid'),
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'no',
      '--logfile',
      join(dir, 'redis.log'),
      ...extra,
    ];
    const c = spawn(REDIS_SERVER, args, { stdio: 'ignore' });
    child = c;
    exited = new Promise((resolve) => c.once('exit', () => resolve()));
    // Bounded: 100 tries, 50 ms apart, at most about 25 s with the ping timeouts.
    for (let i = 0; i < 100; i++) {
      if (await ping(port)) return;
      if (c.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    c.kill('SIGKILL');
    throw new Error(`redis-server on 127.0.0.1:${port} did not answer PING; see ${dir}/redis.log`);
  };
  await start();
  const pid = () => {
    if (child?.pid === undefined) throw new Error('redis-server is not running');
    return child.pid;
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    pid,
    start,
    signal: (sig) => process.kill(pid(), sig),
    kill: async () => {
      if (child && child.exitCode === null && child.signalCode === null) {
        process.kill(pid(), 'SIGKILL');
        await exited;
      }
    },
    stop: async () => {
      if (child && child.exitCode === null && child.signalCode === null) {
        process.kill(pid(), 'SIGCONT');
        process.kill(pid(), 'SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 3000).unref())]);
        if (child.exitCode === null && child.signalCode === null) process.kill(pid(), 'SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A client of `library` ('node-redis' or 'ioredis') connected to `url`, configured as
 * docs/redis.md advises for ebb/redis (no offline queue, no retries per request: a command while
 * Redis is away fails at once and the structure falls back), with errors swallowed (the
 * structures count them). Returns the client and how to close it.
 */
export async function connectRedis(library, url) {
  if (library === 'ioredis') {
    const { Redis } = await import('ioredis');
    const client = new Redis(url, { maxRetriesPerRequest: 0, enableOfflineQueue: false });
    client.on('error', () => {});
    await new Promise((resolve, reject) => {
      client.once('ready', resolve);
      client.once('error', reject);
    });
    return { client, quit: async () => client.disconnect() };
  }
  if (library !== 'node-redis') throw new TypeError(`connectRedis: unknown library ${library}`);
  const { createClient } = await import('redis');
  const client = createClient({ url, disableOfflineQueue: true });
  client.on('error', () => {});
  await client.connect();
  return { client, quit: async () => client.destroy() };
}
