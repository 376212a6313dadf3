// A shared mechanism's clock as its background timers read it: whatever the user's clock does,
// the readings are finite and never go back, and a sleep still ends.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Clock, newTimeline, rebase, systemClock, unrefSystemClock } from '../core/clock.js';
import { virtualClock } from '../core/virtual-clock.js';
import { repairedClock, sharedClockOption } from './repaired-clock.js';

type Reading = { readonly kind: 'value'; readonly value: unknown } | { readonly kind: 'throws' };

const reading: fc.Arbitrary<Reading> = fc.oneof(
  fc.record({ kind: fc.constant('value' as const), value: fc.double({ min: -1e6, max: 1e6, noNaN: true }) }),
  fc.record({
    kind: fc.constant('value' as const),
    value: fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, '5', undefined, null, 5n),
  }),
  fc.constant({ kind: 'throws' as const }),
);

const never = (): Promise<void> => new Promise(() => {});

describe('sharedClockOption and repairedClock: a shared structure reads a user clock through them', () => {
  it('repairs every reading: the last good time for one that throws or is not a finite number (0 before any), a clock set back going on from where it was', () => {
    fc.assert(
      fc.property(fc.array(reading, { maxLength: 30 }), (readings) => {
        let i = 0;
        const user: Clock = {
          now: () => {
            const r = readings[i++] as Reading;
            if (r.kind === 'throws') throw new Error('clock broke');
            return r.value as number;
          },
          sleep: never,
        };
        const clock = sharedClockOption('t', user);
        // The model: the good readings through rebase(), the last one standing in for a bad one.
        const model = newTimeline();
        for (const r of readings) {
          const v = r.kind === 'value' ? r.value : undefined;
          const expected =
            typeof v === 'number' && Number.isFinite(v)
              ? rebase(model, v)
              : model.last === Number.NEGATIVE_INFINITY
                ? 0
                : model.last;
          expect(clock.now()).toBe(expected);
        }
      }),
    );
  });

  it('reads a clock set back as going on from where it was (exact sequence)', () => {
    const readings = [1_000, 1_010, Number.NaN, 20, 30, 'x', 40];
    let i = 0;
    const clock = sharedClockOption('t', { now: () => readings[i++] as number, sleep: never });
    expect(readings.map(() => clock.now())).toEqual([1_000, 1_010, 1_010, 1_010, 1_020, 1_020, 1_030]);
  });

  it('passes a good clock through: readings and sleeps as its own', async () => {
    const v = virtualClock(1_000);
    const clock = repairedClock(v);
    expect(clock.now()).toBe(1_000);
    const slept = clock.sleep(50);
    await v.advance(50);
    await slept;
    expect(clock.now()).toBe(1_050);
  });

  it('returns the system clocks as they are', () => {
    expect(repairedClock(systemClock)).toBe(systemClock);
    expect(repairedClock(unrefSystemClock)).toBe(unrefSystemClock);
  });

  for (const [fault, sleep] of [
    [
      'throws',
      () => {
        throw new Error('sleep broke');
      },
    ],
    ['returns no promise', () => undefined],
    ['rejects', () => Promise.reject(new Error('sleep broke'))],
  ] as const) {
    it(`waits on a host timer when sleep() ${fault}`, async () => {
      const clock = repairedClock({ now: () => 0, sleep: sleep as unknown as Clock['sleep'] });
      const t0 = performance.now();
      await expect(clock.sleep(20)).resolves.toBeUndefined();
      // A host timer may fire a little early; it never fires at once.
      expect(performance.now() - t0).toBeGreaterThanOrEqual(15);
    });
  }

  it('rejects with the abort reason when the sleep is cut by its signal, as the clock said', async () => {
    const v = virtualClock();
    const clock = repairedClock(v);
    const controller = new AbortController();
    const slept = clock.sleep(1_000, controller.signal);
    controller.abort(new Error('stopped'));
    await expect(slept).rejects.toThrow('stopped');
    expect(v.pending).toBe(0);
  });
});
