// adaptiveRate's `random`: drawn once, it seeds the spread of the controller's waits for a rise
// (rate/law.ts, [spread]), so that independent processes sharing a limit do not probe together.
import { describe, expect, it } from 'vitest';
import type { VirtualClock } from '../core/virtual-clock.js';
import type { AdaptiveRateController } from './controller.js';
import { make } from './test-helpers.js';

/** 20 loops, each asking for a turn and reporting a success 50 ms after each grant. */
function busy(rate: AdaptiveRateController, clock: VirtualClock): () => void {
  const controllers: AbortController[] = [];
  let stopped = false;
  const loop = async () => {
    const controller = new AbortController();
    controllers.push(controller);
    while (!stopped) {
      try {
        rate.record('success', await rate.acquire(controller.signal));
      } catch {
        return;
      }
      await clock.sleep(50);
    }
  };
  for (let i = 0; i < 20; i++) loop();
  return () => {
    stopped = true;
    for (const c of controllers) c.abort();
  };
}

/** When the rate first rises above 10 r/s, to the ms (at most 5 s). */
async function firstRise(random: () => number): Promise<number> {
  const { clock, rate } = make({ initialRatePerSecond: 10, random });
  const stop = busy(rate, clock);
  while (rate.ratePerSecond <= 10 && clock.now() < 5000) await clock.advance(1);
  const at = clock.now();
  stop();
  await clock.runAll();
  return at;
}

describe('adaptiveRate: `random` spreads the waits for a rise', () => {
  it('a draw of 0 rises after exactly the cool-off; 0.5 half a cool-off later; 0.999 almost a whole one later', async () => {
    expect(await firstRise(() => 0)).toBe(1000);
    // seed ⌊0.5 × (2³¹ − 1)⌋, drawn once more by nothing yet: 1000 × seed / (2³¹ − 1) = 499.99999977 ms.
    expect(await firstRise(() => 0.5)).toBe(1500);
    expect(await firstRise(() => 0.999)).toBe(1999);
  });

  it('is drawn once, at construction', () => {
    let calls = 0;
    make({
      random: () => {
        calls++;
        return 0.25;
      },
    });
    expect(calls).toBe(1);
  });

  it('a random that leaves [0, 1) is refused naming it; a non-function, as adaptiveThrottle refuses it', () => {
    for (const bad of [1, -0.1, Number.NaN, '0.5']) {
      expect(() => make({ random: () => bad as number })).toThrow(
        new RangeError(
          `adaptiveRate(): \`random\` returned ${typeof bad === 'string' ? `"${bad}"` : String(bad)}; it must return a number in [0, 1).`,
        ),
      );
    }
    expect(() => make({ random: 0.5 as never })).toThrow(
      new TypeError(
        'adaptiveRate(): expected `random` to be a function returning a number in [0, 1), got 0.5. Leave it out for Math.random, or pass seeded(1) from ebb for a repeatable run.',
      ),
    );
  });
});
