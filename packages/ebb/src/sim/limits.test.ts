import { describe, expect, it } from 'vitest';
import { presets } from '../backoff/presets.js';
import { simulateBreakerOutage } from './breaker-outage.js';
import { simulateBrownout } from './brownout.js';
import { simulateContention } from './contention.js';
import { delayDistribution } from './delays.js';
import { simulateEthernet } from './ethernet.js';
import { SIM_LIMITS } from './limits.js';
import { simulateOverload } from './overload.js';
import { simulateSlowTail } from './slow-tail.js';
import { simulateWifi } from './wifi.js';

/**
 * A simulator is a loop over its size, so `slots: 2 ** 53` would run for years.
 * Each size above its bound is refused at the call — before any work — naming the option.
 */
describe('simulator sizes are bounded', () => {
  const refused: [string, () => unknown, RegExp][] = [
    ['ethernet slots', () => simulateEthernet({ slots: 2 ** 53 - 1 }), /`slots` to be at most 1000000000/],
    ['ethernet stations', () => simulateEthernet({ stations: SIM_LIMITS.stations + 1 }), /`stations` to be at most/],
    [
      'ethernet stations × slots',
      () => simulateEthernet({ stations: 1_000, slots: 200_000_000 }),
      /`slots` to be at most 100000000, got 200000000.*stations × slots/,
    ],
    ['wifi slots', () => simulateWifi({ slots: 1e15 }), /simulateWifi\(\): expected `slots` to be at most/],
    ['wifi stations', () => simulateWifi({ stations: SIM_LIMITS.stations + 1 }), /`stations` to be at most/],
    ['contention clients', () => simulateContention({ clients: 2 ** 40 }), /`clients` to be at most 1000000/],
    [
      'contention runs × clients',
      () => simulateContention({ clients: 1_000, runs: 1e6 }),
      /`runs` to be at most 100000,/,
    ],
    ['overload clients', () => simulateOverload({ clients: 2 ** 40 }), /`clients` to be at most 1000000/],
    ['overload horizon', () => simulateOverload({ horizonMs: 1e308 }), /`horizonMs` to be at most 86400000/],
    [
      'outage workers × duration',
      () => simulateBreakerOutage({ workers: 1_000_000 }),
      /`durationMs` to be at most 2500, got 60000/,
    ],
    ['outage duration', () => simulateBreakerOutage({ durationMs: 1e15 }), /`durationMs` to be at most 86400000/],
    ['outage bins', () => simulateBreakerOutage({ binMs: 1e-6 }), /`binMs` to be at least durationMs \/ 1000000/],
    ['brownout duration', () => simulateBrownout({ durationMs: 1e15 }), /simulateBrownout\(\): expected `durationMs`/],
    ['slow-tail workers × duration', () => simulateSlowTail({ workers: 2 ** 40 }), /`durationMs` to be at most 0/],
    ['delays runs', () => delayDistribution(presets.default, { runs: 2 ** 52 }), /`runs` to be at most 100000000/],
  ];
  it.each(refused)('%s: a RangeError naming the option, at once', async (_name, call, message) => {
    let thrown: unknown;
    try {
      // A run that started would not come back within the test's time limit.
      await call();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RangeError);
    expect((thrown as Error).message).toMatch(message);
  });

  it('sizes at the bound pass the check (the small default runs are unchanged)', () => {
    expect(() => simulateEthernet({ stations: SIM_LIMITS.stations, slots: 1 })).not.toThrow();
    expect(() => simulateWifi({ stations: 2, slots: 1 })).not.toThrow();
    expect(simulateContention({ clients: 2, runs: 1 })).toHaveLength(5);
  });
});
