import { brookerStrategies, simulateContention } from 'ebb/sim';
import { describe, expect, it } from 'vitest';
import {
  amount,
  contentionWrites,
  longRunWarning,
  plannedSeconds,
  stationSlots,
  WARN_AFTER_SECONDS,
  WORK,
} from './simulate-cost.js';

describe('the cost of a run, estimated before it starts', () => {
  it('plannedSeconds: the work of every run over what a second gets through', () => {
    const perSecond = WORK.overload.perSecond;
    expect(plannedSeconds({ model: 'overload', parts: [perSecond, 2 * perSecond], smaller: '' })).toBe(3);
  });

  it(`warns past ${WARN_AFTER_SECONDS} s, not at it; names the run that is most of the work`, () => {
    const perSecond = WORK.contention.perSecond;
    const at = (seconds: number) => ({
      model: 'contention' as const,
      parts: [seconds * perSecond],
      smaller: 'fewer --clients',
    });
    expect(longRunWarning(at(WARN_AFTER_SECONDS))).toBeUndefined();
    expect(longRunWarning(at(WARN_AFTER_SECONDS + 1))).toBe(
      `ebb: this run will take about 11 s (about ${amount(11 * perSecond)} simulated writes); fewer --clients make it shorter, Ctrl-C stops it`,
    );
    expect(longRunWarning(at(250))).toMatch(/^ebb: this run will take about 4 min \(/);
    const mixed = {
      model: 'contention' as const,
      parts: [80 * perSecond, 10 * perSecond, 10 * perSecond],
      names: ['none at 2000 clients', 'full at 2000 clients', 'equal at 2000 clients'],
      smaller: 'fewer --clients or --runs',
    };
    expect(longRunWarning(mixed)).toMatch(
      /simulated writes, most of it none at 2000 clients\); fewer --clients or --runs/,
    );
    // Half is not "most": no run is named.
    expect(longRunWarning({ ...mixed, parts: [50 * perSecond, 50 * perSecond, 1] })).not.toMatch(/most of it/);
  });

  it('announces no time for an estimate that is not a finite number', () => {
    const plan = (parts: number[]) => ({ model: 'slow-tail' as const, parts, smaller: 'fewer --workers' });
    expect(longRunWarning(plan([Infinity, Infinity, Infinity]))).toBeUndefined();
    expect(longRunWarning(plan([Number.MAX_VALUE, Number.MAX_VALUE]))).toBeUndefined();
    expect(longRunWarning(plan([Number.NaN]))).toBeUndefined();
  });

  it('amounts in the words a reader skims', () => {
    expect(amount(1_234)).toBe('1,200');
    expect(amount(480_123)).toBe('480,000');
    expect(amount(2_861_272)).toBe('2.9 million');
    expect(amount(30_000_000_000)).toBe('30 billion');
  });

  it('a slotted run costs slots × stations, a few stations as much as 50', () => {
    expect(stationSlots(1_000, 1e6)).toBe(1e9);
    expect(stationSlots(10, 1e6)).toBe(5e7);
  });

  // The pilots are crowds of 100 and 200; 600 clients is three times further out.
  it.each(['none', 'exponential', 'full', 'decorrelated'] as const)(
    'contentionWrites extrapolates %s from small crowds to within 0.7–1.4 × of a real run at 600 clients',
    (name) => {
      const policy = brookerStrategies()[name];
      const estimate = contentionWrites(600, policy);
      const [real] = simulateContention({ clients: 600, runs: 3, strategies: { [name]: policy } });
      expect((real?.calls ?? 0) / estimate).toBeGreaterThan(0.7);
      expect((real?.calls ?? 0) / estimate).toBeLessThan(1.4);
    },
  );

  it('contentionWrites grows with the square of the crowd without backoff, and slower with it', () => {
    const s = brookerStrategies();
    expect(contentionWrites(4_000, s.none) / contentionWrites(1_000, s.none)).toBeGreaterThan(12);
    expect(contentionWrites(4_000, s.full) / contentionWrites(1_000, s.full)).toBeLessThan(8);
    // A small crowd is measured, not extrapolated.
    expect(contentionWrites(10, s.none)).toBe(
      simulateContention({ clients: 10, runs: 2, strategies: { s: s.none } })[0]?.calls,
    );
  });
});
