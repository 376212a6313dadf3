import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import { ratioBudget } from '../rate/ratio-budget.js';
import { hedgeBudget } from './hedge-budget.js';

/** Hedges granted when asked `asks` times. */
const grant = (b: { tryAcquireRetry(e?: unknown): boolean }, asks: number): number => {
  let n = 0;
  for (let i = 0; i < asks; i++) if (b.tryAcquireRetry(undefined)) n++;
  return n;
};

describe('hedgeBudget', () => {
  it('busy: hedges ≤ 5 % of the calls, the floor inside the share (ratioBudget adds it on top)', async () => {
    const clock = virtualClock();
    const b = hedgeBudget({ clock });
    const r = ratioBudget({ percentCanRetry: 0.05, minRetriesPerSecond: 1, clock });
    for (let i = 0; i < 520; i++) {
      b.recordRequest();
      r.recordRequest();
    }
    expect(b.balance).toBe(26);
    expect(grant(b, 100)).toBe(26); // 5 % of 520
    expect(grant(r, 100)).toBe(36); // 5 % of 520 + 10 (1 a second over 10 s)
    // One more call, one more twentieth of a hedge: none yet; 20 more calls: exactly one.
    b.recordRequest();
    expect(grant(b, 1)).toBe(0);
    for (let i = 0; i < 19; i++) b.recordRequest();
    expect(grant(b, 5)).toBe(1);
  });

  it('quiet: the floor (1 a second over the window) lets a few calls hedge; it expires with the window', async () => {
    const clock = virtualClock();
    const b = hedgeBudget({ clock });
    for (let i = 0; i < 30; i++) b.recordRequest();
    expect(grant(b, 20)).toBe(10); // max(1.5, 10)
    await clock.advance(5_000);
    expect(grant(b, 20)).toBe(0); // the ten are still in the window
    await clock.advance(5_001);
    expect(grant(b, 20)).toBe(10); // they (and the calls) have left it
    const none = hedgeBudget({ clock, minPerSecond: 0 });
    for (let i = 0; i < 19; i++) none.recordRequest();
    expect(grant(none, 5)).toBe(0);
    none.recordRequest();
    expect(grant(none, 5)).toBe(1);
    const tenth = hedgeBudget({ clock, percent: 0.1, minPerSecond: 0, windowMs: 2_000 });
    for (let i = 0; i < 60; i++) tenth.recordRequest();
    expect(grant(tenth, 10)).toBe(6);
  });

  it('for any calls and asks in any order, hedges in the window never exceed max(5 % of calls, 10)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 3_000 })), { maxLength: 400 }), (steps) => {
        const clock = virtualClock();
        const b = hedgeBudget({ clock });
        let calls = 0;
        let hedges = 0;
        for (const [isCall, n] of steps) {
          if (isCall) {
            for (let i = 0; i < n; i++) b.recordRequest();
            calls += n;
          } else hedges += grant(b, n % 50);
          expect(hedges).toBeLessThanOrEqual(Math.max(0.05 * calls, 10) + 1e-9);
          expect(b.balance).toBe(Math.floor(Math.max(0.05 * calls, 10) + 1e-9) - hedges);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('property: however rarely hedges are asked for, the hedges’ window is the calls’ 10 s', async () => {
    // Calls every `callEveryMs`; every `askEveryMs`, hedges are asked for until one is refused.
    // Bounds over a long run: a hedge counts in the window for 9 to 10 s (a value counts for
    // between the window less a slice and the window) and its place is granted again at the
    // next ask, at most `askEveryMs` later, while at least 5 % of 9 s of calls (less one call)
    // are allowed at once: share ≥ (0.05 × 9 s − callEvery) ÷ (10 s + askEvery), and ≤ 5 % × 10 / 9.
    // When the hedges' adder moved to its next slice only when asked, its slices lasted an ask
    // each (1.5 to 5 s) and its window 13 to 45 s: the share fell under the lower bound.
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 5, max: 40 }),
        fc.integer({ min: 1_500, max: 5_000 }),
        async (callEveryMs, askEveryMs) => {
          const clock = virtualClock();
          const b = hedgeBudget({ clock, minPerSecond: 0 });
          let calls = 0;
          let granted = 0;
          let nextAsk = askEveryMs;
          for (let t = 0; t < 300_000; t += callEveryMs) {
            await clock.advance(t - clock.now());
            if (t >= nextAsk) {
              nextAsk += askEveryMs;
              while (b.tryAcquireRetry(undefined)) if (t >= 20_000) granted++;
            }
            b.recordRequest();
            if (t >= 20_000) calls++;
          }
          const share = granted / calls;
          expect(share).toBeGreaterThan((0.05 * 9_000 - callEveryMs) / (10_000 + askEveryMs));
          expect(share).toBeLessThan((0.05 * 10) / 9);
        },
      ),
      { numRuns: 15 },
    );
  }, 60_000);

  it('rejects hostile options, naming them', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('percent', 'minPerSecond', 'windowMs', 'clock', 'other'),
        fc.oneof(fc.anything(), fc.constantFrom(Number.NaN, Infinity, -Infinity, -0.5, 2 ** 53, 1e308, 1.5, 999)),
        (name, value) => {
          try {
            hedgeBudget({ [name]: value } as never);
          } catch (error) {
            expect(error instanceof TypeError || error instanceof RangeError).toBe(true);
            expect((error as Error).message).toMatch(new RegExp(`\`${name}\``));
          }
        },
      ),
      { numRuns: 500 },
    );
    // The whole message: where, the option, the value, what was expected and the fix.
    expect(() => hedgeBudget({ percent: 1.5 })).toThrow(
      'hedgeBudget(): expected `percent` to be a number from 0 to 1, got 1.5. For example 0.05 for 5 %.',
    );
    expect(() => hedgeBudget({ minPerSecond: 0.5 })).toThrow(
      'hedgeBudget(): expected `minPerSecond` to be a whole number >= 0, got 0.5. For example 1.',
    );
    expect(() => hedgeBudget({ minPerSecond: Infinity })).toThrow(RangeError);
    for (const windowMs of [999, 60_001, Infinity]) {
      expect(() => hedgeBudget({ windowMs })).toThrow(
        new RegExp(
          `^hedgeBudget\\(\\): expected \`windowMs\` to be a whole number (>= 1|from 1000 to 60000), got ${windowMs}\\. For example 10000\\.$`,
        ),
      );
    }
    for (const windowMs of [1_000, 60_000]) expect(hedgeBudget({ windowMs }).balance).toBe(windowMs / 1_000);
  });
});
