import { EventEmitter } from 'node:events';
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

describe('virtualClock, exactly: edges, cleanup and messages', () => {
  it('starts at 0 by default; a zero advance wakes the zero sleeps and keeps the time', async () => {
    const clock = virtualClock();
    expect(clock.now()).toBe(0);
    const woke: number[] = [];
    void clock.sleep(0).then(() => woke.push(clock.now()));
    void clock.sleep(1).then(() => woke.push(clock.now()));
    await clock.advance(0);
    expect(woke).toEqual([0]);
    expect(clock.pending).toBe(1);
    expect(clock.now()).toBe(0);
  });

  it('a sleep due exactly at the end of an advance wakes in it; the time is then the end', async () => {
    const clock = virtualClock(-50);
    const woke: number[] = [];
    void clock.sleep(20).then(() => woke.push(clock.now()));
    void clock.sleep(5).then(() => woke.push(clock.now()));
    await clock.advance(20);
    expect(woke).toEqual([-45, -30]);
    expect(clock.now()).toBe(-30);
  });

  it('an abort removes only its own sleep, first or not, and a finished sleep leaves no listener', async () => {
    const clock = virtualClock();
    const first = new AbortController();
    const second = new AbortController();
    const a = clock.sleep(10, first.signal);
    const b = clock.sleep(20, second.signal);
    const woke: string[] = [];
    void clock.sleep(30).then(() => woke.push('c'));
    first.abort('a');
    await expect(a).rejects.toBe('a');
    expect(clock.pending).toBe(2);
    await clock.advance(20);
    await b;
    expect(EventEmitter.getEventListeners(second.signal, 'abort')).toHaveLength(0);
    second.abort('late');
    expect(clock.pending).toBe(1);
    await clock.runAll();
    expect(woke).toEqual(['c']);
  });

  it('runAll wakes exactly maxWakeups sleeps before it gives up, and none when nothing waits', async () => {
    const clock = virtualClock();
    let wakes = 0;
    const loop = async (): Promise<void> => {
      for (;;) {
        await clock.sleep(1);
        wakes++;
      }
    };
    void loop();
    const error = await clock.runAll(3).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('virtualClock.runAll(): still 1 sleeps pending after 3 wake-ups');
    expect(wakes).toBe(3);
    expect(clock.now()).toBe(3);
    const idle = virtualClock(7);
    await idle.runAll(0);
    expect(idle.now()).toBe(7);
  });

  it('its refusals name the option, the value and the fix', async () => {
    for (const [start, type, shown] of [
      [Number.NaN, RangeError, 'NaN'],
      [Infinity, RangeError, 'Infinity'],
      ['0', TypeError, '"0"'],
    ] as const) {
      expect(() => virtualClock(start as number)).toThrow(
        new type(`virtualClock(): expected \`startMs\` to be a finite number, got ${shown}. For example 0.`),
      );
      expect(() => virtualClock(start as number)).toThrow(type);
    }
    const clock = virtualClock();
    for (const [ms, shown] of [
      [-1, '-1'],
      ['1', '"1"'],
    ] as const) {
      const error = await clock.advance(ms as number).catch((e: unknown) => e);
      expect((error as Error).message).toBe(`advance(): expected \`ms\` to be a number >= 0, got ${shown}.`);
    }
    expect(((await clock.sleep('1' as unknown as number).catch((e: unknown) => e)) as Error).message).toBe(
      'clock.sleep(): expected `ms` to be a number >= 0, got string.',
    );
  });
});
