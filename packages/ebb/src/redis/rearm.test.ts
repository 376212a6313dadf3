// The one re-armable timer behind the shared budgets' batching and the shared rate's lease
// renewal, and the controls every shared budget gets from one place, read live.
import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import type { RedisScripts } from './client.js';
import { Rearm } from './rearm.js';
import { sharedAwsRetryQuota } from './shared-aws-retry-quota.js';
import { sharedRatioBudget } from './shared-ratio-budget.js';
import { sharedTokenBudget } from './shared-token-budget.js';

describe('Rearm', () => {
  it('fires once after the first arm; a second arm while armed keeps the first deadline', async () => {
    const clock = virtualClock();
    const fired: number[] = [];
    const t = new Rearm(clock, () => fired.push(clock.now()));
    expect(t.armed).toBe(false);
    t.arm(100);
    t.arm(10);
    expect(t.armed).toBe(true);
    await clock.advance(99);
    expect(fired).toEqual([]);
    await clock.advance(1);
    expect(fired).toEqual([100]);
    expect(t.armed).toBe(false);
    // Armed again once it fired.
    t.arm(50);
    await clock.advance(50);
    expect(fired).toEqual([100, 150]);
  });

  it('cancel drops the pending call and allows a new one; stop drops it for good', async () => {
    const clock = virtualClock();
    const fired: number[] = [];
    const t = new Rearm(clock, () => fired.push(clock.now()));
    t.arm(100);
    t.cancel();
    t.arm(30);
    await clock.advance(200);
    expect(fired).toEqual([30]);
    t.arm(10);
    t.stop();
    t.arm(10);
    await clock.advance(100);
    expect(fired).toEqual([30]);
    expect(clock.pending).toBe(0);
  });
});

describe('shared budgets: the controls are live', () => {
  it('mode, stats and key read the state at each access, for each budget', async () => {
    let up = true;
    const scripts: RedisScripts = {
      evalSha: () =>
        up ? Promise.resolve(['5', '1', '', '', '', '']) : Promise.reject(new Error('connect ECONNREFUSED')),
      eval: () => Promise.resolve(['5', '1', '', '', '', '']),
    };
    for (const make of [
      (clock: ReturnType<typeof virtualClock>) => sharedTokenBudget({ client: scripts, name: 't', clock }),
      (clock: ReturnType<typeof virtualClock>) => sharedAwsRetryQuota({ client: scripts, name: 'a', clock }),
      (clock: ReturnType<typeof virtualClock>) => sharedRatioBudget({ client: scripts, name: 'r', clock }),
    ]) {
      up = true;
      const clock = virtualClock();
      const budget = make(clock);
      expect(budget.mode).toBe('syncing');
      expect(budget.key).toMatch(/^ebb:\{[tar]\}:/);
      await budget.ready();
      expect(budget.mode).toBe('shared');
      const commands = budget.stats.commands;
      up = false;
      budget.tryAcquireRetry(new Error('x'));
      budget.recordSuccess({ attempt: 1, lastError: undefined, elapsedMs: 0 } as never);
      await budget.flush();
      await clock.advance(2000);
      await budget.flush();
      expect(budget.mode).toBe('local');
      expect(budget.stats.commands).toBeGreaterThan(commands);
      expect(budget.stats.fallbacks).toBe(1);
      expect(Object.keys(budget)).toEqual(
        expect.arrayContaining(['mode', 'stats', 'key', 'ready', 'flush', 'close', 'inspect', 'reset']),
      );
      await budget.close();
    }
  });
});
