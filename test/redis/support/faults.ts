// The fault sequence shared by faults.test.ts (the budget) and
// rate-faults.test.ts (the rate): both client libraries on one redis-server, Redis paused
// (SIGSTOP), killed, restarted on the same port, and the checks every shared structure must pass.
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { expect } from 'vitest';
import type { RedisServer } from './redis-server.js';

export type Phase = 'before' | 'paused' | 'down' | 'after';
export const WHO = ['node-redis', 'ioredis'] as const;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** node-redis and ioredis connected to `url`, neither queueing commands while disconnected (as docs/redis.md advises). */
export async function connectBoth(url: string) {
  const nodeClient = createClient({ url, disableOfflineQueue: true });
  nodeClient.on('error', () => {});
  await nodeClient.connect();
  const ioClient = new Redis(url, { maxRetriesPerRequest: 0, enableOfflineQueue: false });
  ioClient.on('error', () => {});
  await new Promise((resolve) => ioClient.once('ready', resolve));
  return {
    nodeClient,
    ioClient,
    close: () => {
      nodeClient.destroy();
      ioClient.disconnect();
    },
  };
}

/**
 * SIGSTOP for `pauseMs` (default 5 s), SIGKILL, `downMs` (2 s) down, a restart on the same port
 * with empty data; then polls `shared()` every 50 ms for at most 5 s. `setPhase` is told each
 * phase as it begins. Resolves with how long after the restart `shared()` held (or 5 s and more).
 */
export async function pauseKillRestart(
  redis: RedisServer,
  setPhase: (phase: Phase) => void,
  shared: () => boolean,
  { pauseMs = 5000, downMs = 2000 } = {},
): Promise<{ resyncMs: number }> {
  setPhase('paused');
  redis.signal('SIGSTOP');
  await sleep(pauseMs);
  setPhase('down');
  await redis.kill(); // SIGKILL ends a stopped process too
  await sleep(downMs);
  await redis.start();
  const restartedAt = performance.now();
  setPhase('after');
  while (!shared() && performance.now() - restartedAt < 5000) await sleep(50);
  return { resyncMs: performance.now() - restartedAt };
}

/**
 * Each of the two structures (node-redis first) fell back and resynced at least once, and its
 * first fallback came from the timeout while Redis was stopped, not from the kill later.
 */
export function expectFellBackWhilePaused(
  stats: readonly ({ fallbacks: number; resyncs: number } | undefined)[],
  events: readonly { who: string; type: string; phase: Phase }[],
): void {
  for (const [i, who] of WHO.entries()) {
    expect(stats[i]?.fallbacks).toBeGreaterThanOrEqual(1);
    expect(stats[i]?.resyncs).toBeGreaterThanOrEqual(1);
    expect(events.find((e) => e.who === who && e.type === 'fallback')?.phase).toBe('paused');
  }
}

/** The q-quantile of `xs` (NaN for none). */
export const quantile = (xs: readonly number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))] ?? Number.NaN;
