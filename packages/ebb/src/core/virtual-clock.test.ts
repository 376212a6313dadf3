import { describe, expect, it } from 'vitest';
import { virtualClock } from './virtual-clock.js';

describe('virtualClock', () => {
  it('wakes sleeps in due order, ties in the order made, and moves time only when told', async () => {
    const clock = virtualClock(1_000);
    const woke: string[] = [];
    for (const [name, ms] of [
      ['c', 30],
      ['a', 10],
      ['b', 10],
      ['d', 0],
    ] as const) {
      void clock.sleep(ms).then(() => woke.push(`${name}@${clock.now()}`));
    }
    expect(clock.pending).toBe(4);
    await clock.advance(10);
    expect(woke).toEqual(['d@1000', 'a@1010', 'b@1010']);
    expect(clock.now()).toBe(1_010);
    await clock.advance(100);
    expect(woke.at(-1)).toBe('c@1030');
    expect(clock.now()).toBe(1_110);
  });

  it('lets code react between wake-ups, so chained sleeps run in one runAll', async () => {
    const clock = virtualClock();
    const times: number[] = [];
    const chain = (async () => {
      for (let i = 0; i < 5; i++) {
        await clock.sleep(100);
        times.push(clock.now());
      }
    })();
    await clock.runAll();
    await chain;
    expect(times).toEqual([100, 200, 300, 400, 500]);
  });

  it('rejects at once on abort and forgets the sleep', async () => {
    const clock = virtualClock();
    const controller = new AbortController();
    const p = clock.sleep(1_000, controller.signal);
    controller.abort('why');
    await expect(p).rejects.toBe('why');
    expect(clock.pending).toBe(0);
    await expect(clock.sleep(1, AbortSignal.abort('already'))).rejects.toBe('already');
  });

  it('runAll stops a runaway loop with an error instead of hanging', async () => {
    const clock = virtualClock();
    const forever = async (): Promise<void> => {
      for (;;) await clock.sleep(1);
    };
    void forever();
    await expect(clock.runAll(100)).rejects.toThrow(/still 1 sleeps pending after 100 wake-ups/);
  });

  it('refuses a NaN or negative sleep, a bad start and a bad advance, so no other sleep is disordered', async () => {
    const clock = virtualClock(100);
    const order: string[] = [];
    const ok = clock.sleep(10).then(() => order.push('ok'));
    await expect(clock.sleep(Number.NaN)).rejects.toThrow('clock.sleep(): expected `ms` to be a number >= 0, got NaN.');
    await expect(clock.sleep(-5)).rejects.toThrow(RangeError);
    await expect(clock.advance(Number.NaN)).rejects.toThrow(/`ms` to be a number >= 0/);
    expect(() => virtualClock(Number.NaN)).toThrow(/`startMs` to be a finite number/);
    await clock.runAll();
    await ok;
    expect(order).toEqual(['ok']);
    expect(clock.now()).toBe(110);
  });
});
