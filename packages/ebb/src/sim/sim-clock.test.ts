import { describe, expect, it } from 'vitest';
import { SimClock } from './sim-clock.js';

describe('SimClock', () => {
  it('fires events in order of time, ties in order of scheduling, and jumps the time', async () => {
    const clock = new SimClock();
    const log: string[] = [];
    clock.at(30, () => log.push(`c@${clock.now()}`));
    clock.at(10, () => log.push(`a@${clock.now()}`));
    clock.at(10, () => log.push(`b@${clock.now()}`));
    await clock.run();
    expect(log).toEqual(['a@10', 'b@10', 'c@30']);
    expect(clock.pending).toBe(0);
  });

  it('lets promise callbacks react before time moves on', async () => {
    const clock = new SimClock();
    const log: number[] = [];
    const loop = async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(100);
        await Promise.resolve();
        log.push(clock.now());
      }
    };
    void loop();
    clock.at(250, () => log.push(-clock.now()));
    await clock.run();
    expect(log).toEqual([100, 200, -250, 300]);
  });

  it('rejects a sleep when its signal aborts, and stops at untilMs', async () => {
    const clock = new SimClock();
    const controller = new AbortController();
    const slept = clock.sleep(1_000, controller.signal).then(
      () => 'woke',
      (error: Error) => error.message,
    );
    clock.at(10, () => controller.abort(new Error('stop')));
    const late: number[] = [];
    clock.at(5_000, () => late.push(clock.now()));
    await clock.run(2_000);
    expect(await slept).toBe('stop');
    expect(late).toEqual([]);
    expect(clock.now()).toBe(2_000);
    await expect(clock.sleep(1, AbortSignal.abort(new Error('already')))).rejects.toThrow('already');
  });
});
