import { expect, it, describe as suite } from 'vitest';
import { type Backoff, chain } from './backoff.js';
import { constant } from './constant.js';
import { describe } from './describe.js';
import { exponential } from './exponential.js';
import { slotted } from './slotted.js';
import { always, delays, run } from './test-helpers.js';

suite('Backoff values', () => {
  it('are immutable: combinators return new values and leave the original alone', () => {
    const a = exponential({ initialDelayMs: 10 });
    const b = a.withMaxAttempts(3).withJitter('full').withMaxDelay(15).withMaxElapsed(99);
    expect(a.maxAttempts).toBe(Infinity);
    expect(a.segments[0]?.jitter).toBe('none');
    expect(b.maxAttempts).toBe(3);
    expect(b.maxElapsedMs).toBe(99);
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(a.segments)).toBe(true);
    expect(Object.isFrozen(a.segments[0])).toBe(true);
    expect(() => {
      (a as { maxAttempts: number }).maxAttempts = 5;
    }).toThrow(TypeError);
  });

  it('give every run fresh state, so one value serves concurrent operations', () => {
    const b = exponential({ initialDelayMs: 1 });
    const r1 = b.start();
    const r2 = b.start();
    expect([r1.next(), r1.next(), r1.next()]).toEqual([1, 2, 4]);
    expect(r2.next()).toBe(1);
  });

  it('with… methods each change exactly their own parameter', () => {
    const b = exponential({ initialDelayMs: 100 });
    expect(run(b.withJitter('full'), 2, 0.5)).toEqual([50, 100]);
    expect(run(b.withMaxAttempts(2), 2)).toEqual([100, -1]);
    expect(run(b.withMaxAttempts(Infinity), 3)).toEqual([100, 200, 400]);
    expect(delays(b.withMaxDelay(300), 4)).toEqual([100, 200, 300, 300]);
    expect(delays(b.withMaxInterval(300), 4)).toEqual([100, 200, 300, 300]);
    expect(delays(b.withCeiling(2), 4)).toEqual([100, 200, 200, 200]);
    expect(b.withMaxElapsed(1_000).maxElapsedMs).toBe(1_000);
  });

  it('with…(Infinity) means "none": it lifts a limit set before (issue 10, defect 11)', () => {
    const b = exponential({ initialDelayMs: 100, maxDelayMs: 300, maxIntervalMs: 250, ceiling: 2, maxElapsedMs: 9 });
    const uncapped = b.withMaxDelay(Infinity).withMaxInterval(Infinity);
    expect(delays(uncapped, 4)).toEqual([100, 200, 200, 200]);
    expect(delays(uncapped.withCeiling(Infinity), 5)).toEqual([100, 200, 400, 800, 1_600]);
    // Each lifts only its own limit: the other cap still holds.
    expect(delays(b.withMaxDelay(Infinity), 3)).toEqual([100, 200, 200]);
    expect(delays(b.withCeiling(Infinity).withMaxInterval(Infinity), 4)).toEqual([100, 200, 300, 300]);
    expect(b.withMaxElapsed(Infinity).maxElapsedMs).toBe(Infinity);
    expect(b.withMaxAttempts(4).withMaxAttempts(Infinity).maxAttempts).toBe(Infinity);
    // Jittered draws follow: with no cap left, full jitter reaches the whole uncapped row.
    expect(run(uncapped.withCeiling(Infinity).withJitter('full'), 5, 0.5)).toEqual([50, 100, 200, 400, 800]);
    // And the waits stay finite however far the row: growth saturates at MAX_DELAY_MS.
    const far = uncapped.withCeiling(Infinity).start(always(0.5));
    let d = 0;
    for (let i = 0; i < 2_000; i++) d = far.next();
    expect(d).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('with… methods validate like the constructors', () => {
    const b = exponential();
    expect(() => b.withMaxAttempts(0)).toThrow(/withMaxAttempts\(\): expected `maxAttempts`/);
    expect(() => b.withMaxAttempts(undefined as unknown as number)).toThrow(/got undefined/);
    expect(() => b.withMaxDelay(-1)).toThrow(RangeError);
    expect(() => b.withMaxInterval(Number.NaN)).toThrow(RangeError);
    expect(() => b.withMaxElapsed(undefined as unknown as number)).toThrow(/`maxElapsedMs`/);
    expect(() => b.withCeiling(1.5)).toThrow(/`ceiling`/);
    expect(() => b.withJitter('decorrelated').withCeiling(3)).toThrow(/decorrelated/);
  });
});

suite('chain', () => {
  it("runs first's rows, then second's from its row 1", () => {
    const c = chain(constant({ delayMs: 0, maxAttempts: 3 }), exponential({ initialDelayMs: 100, maxAttempts: 3 }));
    expect(run(c, 6)).toEqual([0, 0, 100, 200, -1, -1]);
    expect(c.maxAttempts).toBe(5);
    expect(describe(c, 10).rows.map((r) => r.delayMs)).toEqual([0, 0, 100, 200]);
  });

  it('chains chains, and restarts decorrelated state in the next segment', () => {
    const inner = chain(constant({ delayMs: 1, maxAttempts: 2 }), constant({ delayMs: 2, maxAttempts: 2 }));
    const outer = chain(inner, exponential({ initialDelayMs: 5, multiplier: 3, jitter: 'decorrelated' }));
    expect(run(outer, 4, 0.5)).toEqual([1, 2, 10, 17.5]);
  });

  it('takes the time budget of second', () => {
    const c = chain(constant({ maxAttempts: 2 }), constant({ maxElapsedMs: 500 }));
    expect(c.maxElapsedMs).toBe(500);
    expect(c.maxAttempts).toBe(Infinity);
  });

  it('refuses a first part that never ends or has its own budget', () => {
    expect(() => chain(constant(), constant())).toThrow(/never runs out of attempts/);
    expect(() => chain(constant({ maxAttempts: 2, maxElapsedMs: 5 }), constant())).toThrow(/time budget/);
    expect(() => chain({} as Backoff, constant())).toThrow(/`first` to be a Backoff value/);
  });

  it('a chained policy has no single ceiling', () => {
    const c = chain(constant({ maxAttempts: 2 }), constant());
    expect(() => c.withCeiling(2)).toThrow(/chained policy/);
    // …but the per-segment combinators apply to every part.
    expect(delays(c.withMaxDelay(50), 2)).toEqual([50, 50]);
  });

  it('a first part of one attempt contributes no rows', () => {
    const c = chain(slotted({ slotMs: 1, maxAttempts: 1 }), constant({ delayMs: 7 }));
    expect(c.segments.length).toBe(1);
    expect(c.start(always(0)).next()).toBe(7);
  });
});
