import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../core/clock.js';
import { type VirtualClock, virtualClock } from '../core/virtual-clock.js';
import { guard } from '../retry/guard.js';
import { pipeline } from '../retry/pipeline.js';
import { retrying } from '../retry/retrying.js';
import { type AdaptiveRateOptions, adaptiveRate as spreadRate } from './adaptive-rate.js';

// These tests specify the law's timing to the millisecond: a `random` that returns 0 draws no
// spread of the rises (law.ts, [spread]); rate/adaptive-rate-spread.test.ts specifies the spread.
const adaptiveRate = <T = unknown>(o?: AdaptiveRateOptions<T>) => spreadRate<T>({ random: () => 0, ...o });

import type { AdaptiveRateController } from './controller.js';
import { lateGrants, limiter, make, runFleet, total, turns } from './test-helpers.js';

const isPromise = (x: unknown): x is Promise<unknown> => x instanceof Promise;

/**
 * Keeps the controller busy (a queue of waiting requests) and reports a success every
 * `everyMs`, so that it may rise when a cool-off is over; returns a function that stops it.
 */
function busy(rate: AdaptiveRateController, clock: VirtualClock, everyMs = 50): () => void {
  let stopped = false;
  const controllers: AbortController[] = [];
  const loop = async () => {
    const controller = new AbortController();
    controllers.push(controller);
    while (!stopped) {
      try {
        const ticket = await rate.acquire(controller.signal);
        rate.record('success', ticket);
      } catch {
        return;
      }
      await clock.sleep(everyMs);
    }
  };
  for (let i = 0; i < 20; i++) loop();
  return () => {
    stopped = true;
    for (const c of controllers) c.abort();
  };
}

/** Advances 10 ms at a time until the rate rises (at most a minute). */
async function untilRise(rate: AdaptiveRateController, clock: VirtualClock): Promise<void> {
  const before = rate.ratePerSecond;
  const end = clock.now() + 60_000;
  while (rate.ratePerSecond <= before && clock.now() < end) await clock.advance(10);
}

/** The rate after each of `steps` cool-offs of `ms`, with the controller kept busy. */
async function rises(rate: AdaptiveRateController, clock: VirtualClock, steps: number, ms: number): Promise<number[]> {
  const stop = busy(rate, clock);
  const seen: number[] = [];
  for (let i = 0; i < steps; i++) {
    await clock.advance(ms);
    seen.push(Number(rate.ratePerSecond.toFixed(4)));
  }
  stop();
  await clock.runAll();
  return seen;
}

describe('adaptiveRate: pacing', () => {
  it('spaces requests 1000 / rate ms apart, the first at once, and runs no timer when idle', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 10 });
    expect(await turns(rate, clock, 4)).toEqual([0, 100, 200, 300]);
    expect(clock.pending).toBe(0);
    await clock.advance(1000);
    expect(isPromise(rate.acquire())).toBe(false);
    expect(rate.waiting).toBe(0);
  });

  it('is unlimited by default until the first throttle', () => {
    const { rate } = make();
    expect(rate.ratePerSecond).toBe(Infinity);
    for (let i = 0; i < 1000; i++) expect(isPromise(rate.acquire())).toBe(false);
  });

  it('starts from decreaseFactor × the rate granted over the last second at the first throttle', async () => {
    const { clock, rate } = make();
    for (let i = 0; i < 20; i++) {
      rate.acquire();
      await clock.advance(50);
    }
    rate.record('throttled'); // 20 grants in the last second
    expect(rate.ratePerSecond).toBe(10);
  });

  it('makes up for timers that fire late, keeping the rate', async () => {
    const base = virtualClock();
    // Every sleep ends 7 ms late, like a busy event loop.
    const late: Clock = { now: () => base.now(), sleep: (ms, signal) => base.sleep(ms + 7, signal) };
    const rate = adaptiveRate({ clock: late, initialRatePerSecond: 100 });
    let granted = 0;
    for (let i = 0; i < 300; i++) Promise.resolve(rate.acquire()).then(() => granted++);
    await base.advance(2000);
    // 100/s for 2 s, give or take the last late wake-up; re-anchoring on each late timer would give 2000 / 17 ≈ 118.
    expect(granted).toBeGreaterThanOrEqual(199);
    expect(granted).toBeLessThanOrEqual(202);
  });
});

describe('adaptiveRate: pacing with late timers', () => {
  it('below 40/s, never lets two requests go closer than (1 − margin) × 1000 / rate, however late the timers (a limiter without burst refuses closer ones)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.double({ min: 1, max: 39.9, noNaN: true }),
        fc.double({ min: 0, max: 0.49, noNaN: true }),
        fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 1, maxLength: 20 }),
        async (perSecond, margin, lateness) => {
          const times = await lateGrants({ initialRatePerSecond: perSecond, margin }, lateness, 30);
          const interval = 1000 / perSecond;
          const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
          expect(Math.min(...gaps)).toBeGreaterThanOrEqual((1 - margin) * interval - 1e-6);
          // And the late time is made up for, as far as that allows: no gap longer than the
          // lateness of one timer over the interval.
          expect(Math.max(...gaps)).toBeLessThanOrEqual(interval + Math.max(...lateness) + 1e-6);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('at 10/s with every timer 7 ms late, makes up 5 ms of each (margin 0.05): gaps of 102 ms, not 107, nor 93', async () => {
    const times = await lateGrants({ initialRatePerSecond: 10 }, [7], 6);
    expect(times.slice(1).map((t, i) => t - (times[i] as number))).toEqual([107, 102, 102, 102, 102]);
  });
});

describe('adaptiveRate: the loop', () => {
  it('multiplies the rate by decreaseFactor on a throttle (default 0.5)', () => {
    const a = make({ initialRatePerSecond: 100 });
    a.rate.record('throttled', a.rate.acquire());
    expect(a.rate.ratePerSecond).toBe(50);
    const b = make({ initialRatePerSecond: 100, decreaseFactor: 0.8, increase: 0.1 });
    b.rate.record('throttled', b.rate.acquire());
    expect(b.rate.ratePerSecond).toBe(80);
  });

  it('cuts once per round: a throttle of a request sent before the last cut is ignored', () => {
    const { rate } = make({ initialRatePerSecond: 100 });
    const early = rate.acquire();
    const alsoEarly = rate.acquire();
    rate.record('throttled', early);
    rate.record('throttled', alsoEarly);
    expect(rate.ratePerSecond).toBe(50);
    // No ticket: taken as current. But within a cool-off of the last cut, with no delivered
    // rate measured yet, it belongs to the same congestion event: noted, no second cut.
    rate.record('throttled');
    expect(rate.ratePerSecond).toBe(50);
  });

  it('a throttle after a cool-off, with no delivered rate measured, cuts by decreaseFactor again', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 100 });
    rate.record('throttled');
    await clock.advance(999);
    rate.record('throttled'); // noted: part of the same event
    expect(rate.ratePerSecond).toBe(50);
    await clock.advance(1);
    rate.record('throttled'); // a cool-off after the cut: a new event
    expect(rate.ratePerSecond).toBe(25);
  });

  it('ignores plain failures', () => {
    const { rate } = make({ initialRatePerSecond: 100 });
    for (let i = 0; i < 10; i++) rate.record('failure', rate.acquire());
    expect(rate.ratePerSecond).toBe(100);
  });

  it('rises by `increase` after coolOffMs (default 1000) of successes, no throttle, and waiting requests', async () => {
    const a = make({ initialRatePerSecond: 10 });
    const stop = busy(a.rate, a.clock);
    await a.clock.advance(999);
    expect(a.rate.ratePerSecond).toBe(10);
    await a.clock.advance(1);
    expect(a.rate.ratePerSecond).toBe(11);
    stop();
    await a.clock.runAll();

    const b = make({ initialRatePerSecond: 10, coolOffMs: 300, increase: 0.25 });
    const stopB = busy(b.rate, b.clock);
    await b.clock.advance(299);
    expect(b.rate.ratePerSecond).toBe(10);
    await b.clock.advance(1);
    expect(b.rate.ratePerSecond).toBe(12.5);
    stopB();
    await b.clock.runAll();
  });

  it('does not rise without a success, nor while the limit keeps nobody waiting', async () => {
    const a = make({ initialRatePerSecond: 10 });
    // Waiting requests, but no success reported.
    for (let i = 0; i < 40; i++) a.rate.acquire();
    await a.clock.advance(3000);
    expect(a.rate.ratePerSecond).toBe(10);
    await a.clock.runAll();

    const b = make({ initialRatePerSecond: 10 });
    // One request a second at 10/s: successes, but the limit never binds.
    for (let t = 0; t < 5; t++) {
      b.rate.record('success', b.rate.acquire());
      await b.clock.advance(1000);
    }
    expect(b.rate.ratePerSecond).toBe(10);
  });

  it('doubles the step after each rise that holds, up to 1 / decreaseFactor − 1; crosses the last throttled rate by the base step, and past it doubles up to the largest step whose undo cuts less than a quarter', async () => {
    const free = make({ initialRatePerSecond: 10 });
    // Never throttled: +10 %, +20 %, +40 %, +80 %, then +100 % (the cap for decreaseFactor 0.5).
    expect(await rises(free.rate, free.clock, 6, 1000)).toEqual([11, 13.2, 18.48, 33.264, 66.528, 133.056]);

    const capped = make({ initialRatePerSecond: 10 });
    capped.rate.record('throttled'); // 10 → 5; 10 is now the rate last throttled
    // Near it a step is a fraction of min(rate, 5 r/s): +0.5, +1, +2 (10 %, 20 %, 40 % of 5);
    // +4 would pass 10, so the base step, +0.5 → 9; doubled, +1 → 10 (at 10, not past it); +2
    // would pass 10 again: +0.5 → 10.5. A whole base step past 10 (the rate of a first cut; past
    // a failed probe's rate, any amount is enough), held there (CUBIC's convex region): doubled
    // again, +20 % of the rate, then +26.67 %: (1 − 0.05) / 0.75 − 1, the largest step whose undo
    // (to 0.95 × the rate before it, at the lowest) cuts less than a quarter (rather than
    // 2 × increase, +20 %).
    expect(await rises(capped.rate, capped.clock, 9, 1000)).toEqual([5.5, 6.5, 8.5, 9, 10, 10.5, 12.6, 15.96, 20.216]);
    // With margin 0 the bound is +33.3 %; with increase 0.3, twice the base step (+60 %) is
    // larger and stays the bound, capped by 1 / decreaseFactor − 1 (+100 %).
    const wide = make({ initialRatePerSecond: 10, margin: 0 });
    wide.rate.record('throttled');
    expect((await rises(wide.rate, wide.clock, 8, 1000)).slice(6)).toEqual([12.6, 16.8]);
    const big = make({ initialRatePerSecond: 10, increase: 0.3 });
    // 10 → 5: +1.5 → 6.5; +3 → 9.5; +1.5 → 11; 10 is the rate of a first cut, not of a failed
    // probe, so the convex region starts a whole base step past it: +1.5 → 12.5; then +60 %.
    big.rate.record('throttled');
    expect(await rises(big.rate, big.clock, 5, 1000)).toEqual([6.5, 9.5, 11, 12.5, 20]);
  });

  it('near the rate last throttled, probes by the same absolute step at any rate above 5 r/s (Chiu–Jain additive increase), so that independent controllers converge to equal shares', async () => {
    /**
     * Busy at `r` for half a second less than a cool-off (no rise yet), then throttled twice: the cut lands at
     * 0.95 × the delivered rate, just under `r`, the rate last throttled. The rates after each
     * cool-off.
     */
    const after = async (r: number, steps: number, increase = 0.1, coolOffMs = 2000) => {
      const { clock, rate } = make({ initialRatePerSecond: r, coolOffMs, increase });
      const stop = busy(rate, clock);
      await clock.advance(coolOffMs - 500);
      // At a rate that held, a throttle is noted; a second one soon after cuts by the margin.
      rate.record('throttled');
      rate.record('throttled');
      const cut = rate.ratePerSecond;
      stop();
      await clock.runAll();
      return [cut, ...(await rises(rate, clock, steps, coolOffMs))].map((x) => Number(x.toFixed(2)));
    };
    // At 60 and at 20 r/s: the note gives back three base steps (1.5 r/s, [collision.yield]) and the
    // cut lands at 0.95 × 58.5 and 0.95 × 18.5; then +0.5 and +1 at 60 r/s — not +10 % of each, which
    // keeps the ratio of two rates (the law before gave 62.7 and 20.9 at the first probe).
    // +2 would pass the rate last throttled (58.5): the base step, +0.5, again. At 20 r/s, +0.5;
    // then +1 would pass 18.5, the rate that drew the throttles: it waits until they are paid for
    // (50 requests at 18.5 and at 17.575 r/s, 5.5 s after them), then the base step. (To two
    // places as the doubles round: 55.575 → 55.57, 56.075 → 56.08, 17.575 → 17.57, 18.075 → 18.07.)
    expect(await after(60, 4)).toEqual([55.57, 56.08, 57.08, 57.58, 58.08]);
    expect(await after(20, 3)).toEqual([17.57, 18.07, 18.07, 18.57]);
    // Below 5 r/s, a fraction of the rate: 4 → 2.8 (the note's three steps, 3 × 0.1 × 4) → 2.66 →
    // 2.93 (2.926; a cool-off of 4 s, for the 10 successes that measure a delivered rate). 2.93 is above
    // the 2.8 r/s that was throttled while it held: the probe waits until the two throttles are
    // paid for, 50 requests each at 2.8 and at 2.66 r/s (36.7 s after them, rule 7's charge).
    expect(await after(4, 10, 0.1, 4000)).toEqual([2.66, 2.66, 2.66, 2.66, 2.66, 2.66, 2.66, 2.66, 2.66, 2.66, 2.93]);
    // The step scales with `increase`: 0.2 × 5 r/s = +1 (3 × 1 given back at the note, then taken).
    expect(await after(60, 1, 0.2)).toEqual([54.15, 55.15]);
  });

  it('a throttle goes to (1 − margin) × the delivered rate, never cutting more than decreaseFactor', async () => {
    /** 40 successes spread over the last second at 100/s allowed, then one throttle. */
    const after = async (options: AdaptiveRateOptions, successes: number) => {
      const { clock, rate } = make({ initialRatePerSecond: 100, ...options });
      await clock.advance(5000);
      for (let i = 0; i < successes; i++) {
        rate.record('success', rate.acquire());
        await clock.advance(1000 / successes);
      }
      rate.record('throttled', rate.acquire());
      return rate.ratePerSecond;
    };
    expect(await after({}, 80)).toBeCloseTo(0.95 * 80, 9);
    expect(await after({ margin: 0.1 }, 60)).toBeCloseTo(0.9 * 60, 9);
    expect(await after({ margin: 0 }, 60)).toBeCloseTo(60, 9);
    // The service delivered 20/s, but one event never cuts below decreaseFactor × the rate.
    expect(await after({}, 20)).toBe(50);
    expect(await after({ decreaseFactor: 0.1, increase: 0.5 }, 20)).toBeCloseTo(19, 9);
  });

  it('measures the delivered rate from one second and 10 successes: a throttle 1.5 s in lands at (1 − margin) × it, not at half the rate', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 21, maxRatePerSecond: 21 });
    // 20 loops keep the 21/s limit binding; the service accepts every third request: 7/s.
    let n = 0;
    let stopped = false;
    const loop = async () => {
      while (!stopped) {
        const ticket = await rate.acquire();
        rate.record(n++ % 3 === 0 ? 'success' : 'failure', ticket);
        await clock.sleep(50);
      }
    };
    for (let i = 0; i < 20; i++) loop();
    await clock.advance(1500);
    rate.record('throttled');
    // About 7 successes a second (counted in 100-ms slots): known (with 20 needed, 1.5 s of 7/s
    // would not be, and the cut would be blind, to 10.5).
    expect(rate.ratePerSecond).toBeGreaterThan(0.95 * 6.5);
    expect(rate.ratePerSecond).toBeLessThan(0.95 * 7.5);
    stopped = true;
    await clock.runAll();
  });

  it('a throttle right after a rise (a relapse) lands no higher than before it and doubles the cool-off; no rise follows until its 429 is paid for (2 % of the requests), then the backoff is released', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 10 });
    const stop = busy(rate, clock);
    await clock.advance(1000);
    expect(rate.ratePerSecond).toBe(11);
    // A relapse: 0.95 × the 11 successes of the last second would be 10.45, but never above
    // the 10/s before the rise.
    rate.record('throttled');
    expect(rate.ratePerSecond).toBe(10);
    expect(rate.currentCoolOffMs).toBe(2000);
    // The backoff alone would probe at 3 s; the 429 is paid for by 50 requests at 10 r/s: 5 s.
    await clock.advance(4999);
    expect(rate.ratePerSecond).toBe(10);
    await clock.advance(1);
    // A probe near the rate last throttled (11): the base step, 10 % of 5 r/s.
    expect(rate.ratePerSecond).toBe(10.5);
    // Paid for: the backoff no longer holds, a base cool-off a probe. The step would double
    // (+1), but that crosses 11, the rate last throttled, so the base step again.
    expect(rate.currentCoolOffMs).toBe(1000);
    await clock.advance(999);
    expect(rate.ratePerSecond).toBe(10.5);
    await clock.advance(1);
    expect(rate.ratePerSecond).toBe(11);
    await clock.advance(1000);
    expect(rate.ratePerSecond).toBe(11.5);
    await clock.advance(1000);
    // A base step past it, and held there: the convex region, the step doubles (+20 % of the
    // rate), a base cool-off apart.
    expect(rate.ratePerSecond).toBeCloseTo(11.5 * 1.2, 9);
    expect(rate.currentCoolOffMs).toBe(1000);
    stop();
    await clock.runAll();
  });

  it('a probe that holds at the rate that relapsed gives one relapse back; below it, none', async () => {
    /** Each step waits for the next rise, then throttles or not: [rate, cool-off] after each. */
    const run = async (throttles: boolean[]) => {
      const { clock, rate } = make({ initialRatePerSecond: 10 });
      const stop = busy(rate, clock);
      const seen: [number, number][] = [];
      for (const throttle of throttles) {
        await untilRise(rate, clock);
        if (throttle) rate.record('throttled');
        seen.push([Number(rate.ratePerSecond.toFixed(4)), rate.currentCoolOffMs]);
      }
      stop();
      await clock.runAll();
      return seen;
    };
    // Relapses at 11 and at 10.5 (two: 4 s; the second lands at 0.95 × 10.5, not 9.5: after the
    // first, the next request waited two spacings, so grants fall on whole 100 ms and the second
    // before 3 s holds 11); 10.475 holds, below 10.5: still two (the 429 paid for, the backoff is
    // released: 1 s); the probe to 10.975 relapses again — under 10.475, at 0.95 × the delivered
    // rate — three, 8 s (a hold below it giving one back: 4 s).
    const relapsedAgain = await run([true, true, false, true]);
    expect(relapsedAgain.slice(0, 3)).toEqual([
      [10, 2000],
      [9.975, 4000],
      [10.475, 1000],
    ]);
    expect(relapsedAgain[3]?.[1]).toBe(8000);
    expect(relapsedAgain[3]?.[0]).toBeLessThan(10.475);
    expect(relapsedAgain[3]?.[0]).toBeGreaterThanOrEqual(9.975);
    // The same two relapses; 10.475 holds (still two), 10.975 holds, past the rate that
    // relapsed (one; and the convex region: a base step past it, 11.475, is no longer needed), so
    // +20 % → 13.17 holds (none, 1 s), +26.67 % → 16.682 holds (still none, never fewer); the
    // next probe (+26.67 %) relapses at once: one, 2 s, back to 0.95 × 16.682.
    expect(await run([true, true, false, false, false, false, true])).toEqual([
      [10, 2000],
      [9.975, 4000],
      [10.475, 1000],
      [10.975, 1000],
      [13.17, 1000],
      [16.682, 1000],
      [15.8479, 2000],
    ]);
  });

  /** A busy controller at 10 r/s, cut to 5 (10 the rate last throttled), after `rises` rises. */
  async function climbAfterCut(rises: number) {
    const { clock, rate } = make({ initialRatePerSecond: 10 });
    const stop = busy(rate, clock);
    rate.record('throttled');
    for (let i = 0; i < rises; i++) await untilRise(rate, clock);
    return { clock, rate, stop };
  }

  it('a convex probe that fails lands at (1 − margin) × what the service delivered when that is above the rate before it (a convex step can start far under the limit it finds)', async () => {
    // 5.5, 6.5, 8.5, 9, 10, 10.5 (past 10), then convex: +20 % → 12.6.
    const { clock, rate, stop } = await climbAfterCut(7);
    expect(rate.ratePerSecond).toBeCloseTo(12.6, 9);
    // 12.6 r/s served for 0.9 s, then a throttle: a relapse. The service delivered about 12 r/s
    // over the last second, so the rate lands at 0.95 × that — above 10.5, the rate before the
    // probe, where the rule for a probe near the rate last throttled (and the law before this
    // round) puts it.
    await clock.advance(900);
    rate.record('throttled');
    const landed = rate.ratePerSecond;
    expect(landed).toBeGreaterThan(10.5 * 1.05);
    expect(landed).toBeLessThanOrEqual(0.95 * 12.6);
    stop();
    await clock.runAll();
  });

  it('after a convex probe fails, the rate last throttled is what held or was delivered, not the failed rate: the next climb is not held to additive steps up to it', async () => {
    // 5.5, 6.5, 8.5, 9, 10, 10.5, then convex: 12.6, 15.96; a throttle right after the rise to
    // 15.96 (the service delivered about 12.6 r/s): a relapse, back under 12.6.
    const { clock, rate, stop } = await climbAfterCut(8);
    expect(rate.ratePerSecond).toBeCloseTo(15.96, 9);
    rate.record('throttled');
    const landed = rate.ratePerSecond;
    expect(landed).toBeLessThan(12.6);
    expect(landed).toBeCloseTo(11.97, 9); // 0.95 × 12.6
    const seen: number[] = [];
    for (let i = 0; i < 4; i++) {
      await untilRise(rate, clock);
      seen.push(Number(rate.ratePerSecond.toFixed(4)));
    }
    // The rate last throttled is 12.6 (what held; about what was delivered), and a whole base
    // step past it is needed: +0.5 → 12.47, +0.5 (a doubled +1 would pass 12.6) → 12.97, +0.5 →
    // 13.47, then convex, +20 %. With 15.96 as the rate last throttled (the rule before this
    // round), the climb took additive steps up to it: 12.47, 13.47, 15.47, 15.97.
    expect(seen).toEqual([12.47, 12.97, 13.47, 16.164]);
    stop();
    await clock.runAll();
  });

  it('after a relapse, throttles for two base cool-offs belong to the same event: a delivered rate that a lagging limiter holds down is not read as a change of conditions', async () => {
    /** A relapse at 1 s, then no success for `quietMs`, then a throttle: the rate after it. */
    const after = async (quietMs: number) => {
      const { clock, rate } = make({ initialRatePerSecond: 20 });
      const stop = busy(rate, clock);
      await clock.advance(1000);
      expect(rate.ratePerSecond).toBe(22);
      rate.record('throttled'); // a relapse: back under 20 (0.95 × the 21 delivered)
      const relapsed = rate.ratePerSecond;
      expect(relapsed).toBeCloseTo(19.95, 9);
      stop();
      await clock.runAll();
      await clock.advance(quietMs);
      rate.record('throttled');
      return rate.ratePerSecond / relapsed;
    };
    // 1.5 s later, with nothing delivered since (a sliding window that counts the refused
    // requests too keeps refusing): still the relapse's event, the rate kept (one base
    // cool-off, as before, cut it in half).
    expect(await after(1500)).toBe(1);
    // 2.5 s later, the same low delivered rate is a change of conditions: a deep cut.
    const late = await after(2500);
    expect(late).toBeLessThan(0.6);
    expect(late).toBeGreaterThan(0.3);
  });

  it('a delivered rate short by two requests over its span is not a change of conditions: at 5 r/s, two unanswered requests in three seconds do not cut the rate (the rule before cut 21 %: small processes sharing a limit drifted down)', async () => {
    /** 5 r/s for 3 s, the requests `missing` never answered, the rest successes; then a throttle. */
    const after = async (missing: number[]) => {
      const { clock, rate } = make({ initialRatePerSecond: 5, coolOffMs: 10_000 });
      for (let i = 0; i < 15; i++) {
        const ticket = await rate.acquire();
        if (!missing.includes(i)) rate.record('success', ticket);
        await clock.advance(200);
      }
      rate.record('throttled', await rate.acquire());
      return rate.ratePerSecond;
    };
    // Two missing: 13 delivered in 3 s (4.3 r/s, 13 % short) — within two requests of the rate:
    // noted, not cut: only the three base steps of [collision.yield] given back, 3 × 0.1 × 5 r/s.
    expect(await after([9, 12])).toBe(3.5);
    // Five missing: the service delivers less; a cut, no deeper than decreaseFactor.
    const cut = await after([5, 7, 9, 11, 13]);
    expect(cut).toBeLessThan(3.5);
    expect(cut).toBeGreaterThanOrEqual(2.5);
  });

  it('a throttle at a rate that held, with the delivered rate near it, is noted and gives back three base steps; a second within a cool-off cuts by the margin, not by half', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 50, maxRatePerSecond: 50 });
    const stop = busy(rate, clock, 10); // 20 loops: the 50/s limit binds, ~50/s delivered
    await clock.advance(2000);
    rate.record('throttled'); // the same level as before: noted, 3 × 0.1 × 5 r/s given back
    expect(rate.ratePerSecond).toBe(48.5);
    await clock.advance(500);
    // Within the cool-off of that event, the service still delivering about 50/s: a cut to
    // 0.95 × the lower of the 48.5 r/s given back to and the delivered rate, nowhere near a halving.
    rate.record('throttled');
    expect(rate.ratePerSecond).toBeLessThanOrEqual(0.95 * 48.5);
    expect(rate.ratePerSecond).toBeGreaterThan(0.95 * 46.5);
    stop();
    await clock.runAll();
  });

  it('backs the cool-off off exponentially after relapses, up to maxCoolOffMs (default 8000)', async () => {
    const relapses = async (options: AdaptiveRateOptions) => {
      const { clock, rate } = make({ initialRatePerSecond: 10, ...options });
      const stop = busy(rate, clock);
      const seen: number[] = [];
      for (let i = 0; i < 6; i++) {
        const before = rate.ratePerSecond;
        // The probe after each relapse waits for its 429 to be paid for (5 s at 10 r/s).
        await untilRise(rate, clock);
        expect(rate.ratePerSecond).toBeGreaterThan(before);
        rate.record('throttled');
        seen.push(rate.currentCoolOffMs);
      }
      stop();
      await clock.runAll();
      return seen;
    };
    expect(await relapses({})).toEqual([2000, 4000, 8000, 8000, 8000, 8000]);
    expect(await relapses({ maxCoolOffMs: 5000 })).toEqual([2000, 4000, 5000, 5000, 5000, 5000]);
    expect(await relapses({ maxCoolOffMs: 32_000 })).toEqual([2000, 4000, 8000, 16000, 32000, 32000]);
  });

  it('after relapses, the probe comes once the last 429 is paid for, whatever the backoff, and holds one base cool-off (the backoff is released)', async () => {
    /** After `n` relapses: the backoff shown, when the next probe came, and how long it held. */
    const after = async (n: number) => {
      const { clock, rate } = make({ initialRatePerSecond: 10 });
      const stop = busy(rate, clock);
      for (let i = 0; i < n; i++) {
        await untilRise(rate, clock);
        rate.record('throttled'); // right after a rise: a relapse
      }
      const before = rate.ratePerSecond;
      const relapsedAt = clock.now();
      const backoff = rate.currentCoolOffMs;
      await untilRise(rate, clock);
      const probe = rate.ratePerSecond;
      const came = clock.now() - relapsedAt;
      expect(probe).toBeGreaterThan(before);
      // (The first test above checks, to the millisecond, that such a hold is what it says.)
      const hold = rate.currentCoolOffMs;
      stop();
      await clock.runAll();
      // 50 requests at the rate it fell back to pay for one 429.
      expect(came).toBeGreaterThanOrEqual(1000 / (0.02 * before));
      expect(came).toBeLessThan(1000 / (0.02 * before) + 20);
      return [backoff, hold];
    };
    // The backoff would have waited 2, 4, 8 s and judged the probe over 2, 2, 4 s.
    expect(await after(1)).toEqual([2000, 1000]);
    expect(await after(2)).toEqual([4000, 1000]);
    expect(await after(3)).toEqual([8000, 1000]);
  });

  it('after a failed probe, no rise above the level it fell back to until its 429 is paid for at 2 % of the requests: 50 requests, 5 s at 10 r/s, 2 s at 25; never sooner than a cool-off', async () => {
    /** A relapse 1 s in: the rate it fell back to, and how long after it the next rise came. */
    const next = async (initialRatePerSecond: number) => {
      const { clock, rate } = make({ initialRatePerSecond });
      const stop = busy(rate, clock, 10);
      await clock.advance(1000);
      rate.record('throttled'); // right after the first rise: a relapse
      const relapsed = rate.ratePerSecond;
      while (rate.ratePerSecond === relapsed && clock.now() < 60_000) await clock.advance(10);
      stop();
      await clock.runAll();
      return { relapsed, after: clock.now() - 1000 };
    };
    for (const r of [10, 25, 100]) {
      const { relapsed, after } = await next(r);
      // 50 requests at the rate it fell back to (a second for 100 r/s: then the cool-off binds);
      // the backoff alone made it 2 s for each.
      const paid = Math.max(1000, 1000 / (0.02 * relapsed));
      expect(after).toBeGreaterThanOrEqual(paid);
      expect(after).toBeLessThan(paid + 20);
    }
  });

  it('a failed probe is charged every throttle of a new round within two cool-offs of it, not those of older rounds nor later ones', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 10 });
    const old = await rate.acquire(); // a ticket of the first round
    const stop = busy(rate, clock);
    await clock.advance(1000);
    rate.record('throttled'); // the relapse: 11 → under 10 r/s, one 429 charged (5 s at 10 r/s)
    const relapsed = rate.ratePerSecond;
    expect(relapsed).toBeLessThanOrEqual(10);
    await clock.advance(300);
    rate.record('throttled'); // a new round, within its event: noted, and charged
    await clock.advance(300);
    rate.record('throttled', old); // a round before the relapse: nothing
    rate.record('throttled'); // charged: three in all, 15 s
    await clock.advance(1500);
    // 2.1 s after it: the failed probe's event is over, not charged to it — but a throttle at a
    // rate that held since, charged as one (a fourth 429), which gives back three base steps (1.5 r/s).
    rate.record('throttled');
    const yielded = relapsed - 1.5;
    expect(rate.ratePerSecond).toBe(yielded);
    // Three 429s paid for by 150 requests at the rate it fell back to, the fourth by 50 at the
    // rate it gave back to (four at the first: 200; two: 100).
    const paid = 1000 + 3000 / (0.02 * relapsed) + 1000 / (0.02 * yielded);
    await clock.advance(Math.ceil(paid / 10) * 10 - 10 - clock.now());
    expect(rate.ratePerSecond).toBe(yielded);
    await clock.advance(10);
    expect(rate.ratePerSecond).toBeGreaterThan(yielded);
    stop();
    await clock.runAll();
  });

  it('a throttle judges the rise that fell due before it came, whether or not a request went between: its charge does not put the rise off', async () => {
    // A relapse at 1 s (40 → 44 → 38.95 r/s) is paid for 50 requests later (1.28 s at 38.95 r/s),
    // within its two-cool-off event; a rise waits for that alone. A request goes at 2.23 s, before
    // the rise falls due; its throttle comes at 2.4 s, after. The rise shown then is the rate the
    // throttle judges: a relapse, whether a request between applied the rise or the throttle does.
    const run = async (between: boolean) => {
      const { clock, rate } = make({ initialRatePerSecond: 40 });
      const stop = busy(rate, clock);
      await clock.advance(1000);
      rate.record('throttled'); // the probe to 44 r/s relapses
      const relapsed = rate.ratePerSecond;
      await clock.advance(1200);
      stop();
      const pending = rate.acquire();
      await clock.runAll();
      const ticket = await pending;
      const grantedAt = clock.now();
      if (between) {
        await clock.advance(2300 - clock.now());
        void rate.acquire(); // applies the rise that fell due, as the pacer does
      }
      await clock.advance(2400 - clock.now());
      const shown = rate.ratePerSecond;
      rate.record('throttled', ticket);
      return { relapsed, grantedAt, shown, after: rate.ratePerSecond, coolOff: rate.currentCoolOffMs };
    };
    const alone = await run(false);
    expect(alone.relapsed).toBeCloseTo(38.95, 9);
    expect(alone.grantedAt).toBeLessThan(1000 + 1000 / (0.02 * alone.relapsed));
    // The rise shown before the throttle: 38.95 + 0.1 × (44 − 38.95), the additive step below the probe that failed.
    expect(alone.shown).toBeCloseTo(39.455, 9);
    // Relapsed: back to 0.95 × the rate before the rise (the service delivered less), cool-off backed off twice.
    expect(alone.after).toBeCloseTo(0.95 * alone.relapsed, 9);
    expect(alone.coolOff).toBe(4000);
    expect(await run(true)).toEqual(alone);
  });

  it('a throttle at a rate that held (no rise since the last change) is charged one 429 too: no rise above it before 50 requests at the rate, 5 s at 10 r/s', async () => {
    // A cool-off of 3 s: at 2 s the rate has not risen yet, and the delivered rate is known.
    const { clock, rate } = make({ initialRatePerSecond: 10, coolOffMs: 3000 });
    const stop = busy(rate, clock, 10);
    await clock.advance(2000);
    rate.record('throttled'); // another's probe, or a burst drained: noted, three base steps given back
    expect(rate.ratePerSecond).toBe(8.5);
    // Without the charge the next rise would come a cool-off after the note, at 5 s; it comes
    // when 50 requests at 8.5 r/s have paid for the 429, 5.88 s later.
    await untilRise(rate, clock);
    expect(clock.now()).toBe(Math.ceil((2000 + 1000 / (0.02 * 8.5)) / 10) * 10);
    expect(rate.ratePerSecond).toBeCloseTo(8.5 * 1.1, 12);
    stop();
    await clock.runAll();
  });

  it('a cut that answers the service, not a probe, voids what the failed probe was charged: the climb after it is not held', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 20 });
    let stop = busy(rate, clock);
    await clock.advance(1000);
    rate.record('throttled'); // a relapse from 22 r/s, back under 20
    for (let i = 0; i < 6; i++) {
      await clock.advance(250);
      rate.record('throttled'); // six more 429s charged: 17.5 s at 20 r/s before a rise above it
    }
    stop();
    await clock.runAll();
    await clock.advance(3500 - clock.now());
    rate.record('throttled'); // nothing delivered for 2.5 s: conditions changed, a deep cut
    const cut = rate.ratePerSecond;
    expect(cut).toBeLessThan(12);
    stop = busy(rate, clock);
    await clock.advance(8000);
    // Climbing a cool-off a step, past the 19 r/s the failed probe fell back to, 11.5 s in.
    expect(rate.ratePerSecond).toBeGreaterThan(20);
    stop();
    await clock.runAll();
  });

  it('never falls below minRatePerSecond (default 1) nor rises above maxRatePerSecond', async () => {
    const a = make({ initialRatePerSecond: 8 });
    for (let i = 0; i < 10; i++) {
      a.rate.record('throttled');
      await a.clock.advance(1000);
    }
    expect(a.rate.ratePerSecond).toBe(1);
    const b = make({ initialRatePerSecond: 8, minRatePerSecond: 3 });
    for (let i = 0; i < 10; i++) {
      b.rate.record('throttled');
      await b.clock.advance(1000);
    }
    expect(b.rate.ratePerSecond).toBe(3);

    const c = make({ initialRatePerSecond: 10, maxRatePerSecond: 12 });
    expect(await rises(c.rate, c.clock, 4, 1000)).toEqual([11, 12, 12, 12]);
    const d = make({ maxRatePerSecond: 40 });
    expect(d.rate.ratePerSecond).toBe(40); // the initial rate defaults to the maximum
  });
});

describe('adaptiveRate: priorities', () => {
  it('serves a waiting request of a more important class first, FIFO within a class', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 10 });
    const high = rate.priority('high');
    const low = rate.priority('low');
    const order: string[] = [];
    rate.acquire(); // takes the first slot
    const all = [
      ['low', 1],
      ['normal', 1],
      ['high', 1],
      ['low', 2],
      ['high', 2],
      ['normal', 2],
    ].map(([cls, n]) => {
      const view = cls === 'high' ? high : cls === 'low' ? low : rate;
      return Promise.resolve(view.acquire()).then(() => order.push(`${cls}${n}`));
    });
    await clock.runAll();
    await Promise.all(all);
    expect(order).toEqual(['high1', 'high2', 'normal1', 'normal2', 'low1', 'low2']);
  });

  it('names its classes with `priorities` and the controller’s own with `defaultPriority`', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 10, priorities: ['gold', 'silver'], defaultPriority: 'gold' });
    const order: string[] = [];
    rate.acquire();
    const all = [
      Promise.resolve(rate.priority('silver').acquire()).then(() => order.push('silver')),
      Promise.resolve(rate.acquire()).then(() => order.push('default')),
    ];
    await clock.runAll();
    await Promise.all(all);
    expect(order).toEqual(['default', 'silver']);
    expect(() => rate.priority('high')).toThrow(/expected `name` to be one of "gold", "silver", got "high"/);
  });

  it('a view shares the controller’s rate and loop', () => {
    const { rate } = make({ initialRatePerSecond: 100 });
    const view = rate.priority('low');
    view.record('throttled', view.acquire());
    expect(rate.ratePerSecond).toBe(50);
    expect(view.ratePerSecond).toBe(50);
  });

  it('under a throttled controller, high-priority requests wait far less than low-priority ones', async () => {
    const waitsFor = async (prioritized: boolean) => {
      const clock = virtualClock();
      const rate = adaptiveRate({ clock, initialRatePerSecond: 20, maxRatePerSecond: 20 });
      // 20 clients, even ones high, odd ones low, against a service that never says no: the
      // controller's 20/s is the bottleneck.
      const { waits } = await runFleet({
        clock,
        clients: 20,
        seconds: 20,
        serve: () => true,
        rate: (n) => (prioritized ? rate.priority(n % 2 === 0 ? 'high' : 'low') : rate),
      });
      const mean = (parity: number) => {
        const all = waits.filter((_, n) => n % 2 === parity).flat();
        return all.reduce((a, b) => a + b, 0) / all.length;
      };
      return { high: mean(0), low: mean(1) };
    };
    const withClasses = await waitsFor(true);
    const without = await waitsFor(false);
    // 10 high clients at 20/s: each waits ~ 10 / 20 s; the low ones get only the leftovers.
    expect(withClasses.high).toBeLessThan(600);
    expect(withClasses.low).toBeGreaterThan(5 * withClasses.high);
    // Without classes both halves wait alike (FIFO).
    expect(Math.abs(without.high - without.low)).toBeLessThan(0.1 * without.high);
  });
});

describe('adaptiveRate: abort', () => {
  it('rejects a waiting acquire with the signal’s reason, keeps the others in order, and leaves no timer', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 10 });
    rate.acquire();
    const controller = new AbortController();
    const order: number[] = [];
    const a = Promise.resolve(rate.acquire()).then(() => order.push(1));
    const b = rate.acquire(controller.signal) as Promise<unknown>;
    const c = Promise.resolve(rate.acquire()).then(() => order.push(3));
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(b).rejects.toBe(reason);
    expect(rate.waiting).toBe(2);
    await clock.runAll();
    await Promise.all([a, c]);
    expect(order).toEqual([1, 3]);

    const lone = new AbortController();
    const d = rate.acquire(lone.signal) as Promise<unknown>;
    expect(clock.pending).toBe(1);
    lone.abort(reason);
    await expect(d).rejects.toBe(reason);
    expect(clock.pending).toBe(0);
    await expect(Promise.resolve(rate.acquire(lone.signal))).rejects.toBe(reason);
  });
});

describe('adaptiveRate in a pipeline', () => {
  it('gets the tickets back from the pipeline: a wave of throttles from one round cuts the rate once', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 1000 });
    const throttled = () => Object.assign(new Error('429'), { throttled: true });
    // 20 operations let through 1 ms apart, each failing after 50 ms in flight.
    const call = pipeline([retrying({ clock, isFailure: () => false }), rate]);
    const ops = Array.from({ length: 20 }, () =>
      call
        .execute(async () => {
          await clock.sleep(50);
          throw throttled();
        })
        .catch(() => {}),
    );
    await clock.advance(75);
    expect(rate.ratePerSecond).toBe(500);
    await clock.runAll();
    await Promise.all(ops);
  });

  it('does not oscillate: it settles at the service’s limit, cutting no more than 2 × margin at a time', async () => {
    const clock = virtualClock();
    const R = 100;
    const server = limiter(clock, () => R, 10);
    const rate = adaptiveRate({ clock });
    const rates: number[] = [];
    await runFleet({
      clock,
      rate,
      clients: 50,
      seconds: 180,
      latencyMs: 20,
      serve: () => server.take(),
      sampleMs: 50,
      onSample: (now) => {
        if (now > 15_000) rates.push(rate.ratePerSecond);
      },
    });
    // Served: within 10 % of the limit in every 10-s window after the first 15 s.
    for (let s = 15; s + 10 <= 180; s += 10) {
      const served = total(server.served, s, s + 10) / 10;
      expect(served).toBeGreaterThan(0.9 * R);
      expect(served).toBeLessThanOrEqual(1.01 * R);
    }
    // Throttled: under 1 % of requests after settling.
    expect(total(server.rejected, 15, 180)).toBeLessThan(0.01 * total(server.served, 15, 180));
    // The rate stays near the limit: near it, probes are small absolute steps that the burst
    // absorbs for a while; when it drains, the throttle cuts by about the margin, never more
    // than 2 × margin (the law before probed by 10 % and undid the probe, every 8 s at most).
    expect(Math.min(...rates)).toBeGreaterThanOrEqual(0.9 * R);
    expect(Math.max(...rates)).toBeLessThanOrEqual(1.1 * R);
    const cuts = rates.slice(1).filter((r, i) => r < (rates[i] as number));
    expect(cuts.length).toBeGreaterThan(0);
    for (let i = 1; i < rates.length; i++) {
      expect(rates[i] as number).toBeGreaterThanOrEqual((rates[i - 1] as number) * (1 - 2 * 0.05));
    }
  });
});

describe('adaptiveRate against limiters of other algorithms (virtual time)', () => {
  /** Logs the rate's decreases: { t, from, to }. */
  const logged = (rate: AdaptiveRateController, clock: VirtualClock) => {
    const cuts: { t: number; from: number; to: number }[] = [];
    const view: AdaptiveRateController = {
      acquire: (signal) => rate.acquire(signal),
      record: (outcome, ticket) => {
        const from = rate.ratePerSecond;
        rate.record(outcome, ticket);
        const to = rate.ratePerSecond;
        if (to < from && from !== Infinity) cuts.push({ t: clock.now(), from, to });
      },
      get ratePerSecond() {
        return rate.ratePerSecond;
      },
    };
    return { view, cuts };
  };

  it('a fixed window (R per whole second, reset at each): settles under R, no multiplicative decrease after it settles', async () => {
    const clock = virtualClock();
    const R = 40;
    let window = -1;
    let used = 0;
    const served: number[] = [];
    const rejected: number[] = [];
    const take = () => {
      const s = Math.floor(clock.now() / 1000);
      if (s !== window) {
        window = s;
        used = 0;
      }
      served[s] ??= 0;
      rejected[s] ??= 0;
      if (used < R) {
        used++;
        served[s]++;
        return true;
      }
      rejected[s]++;
      return false;
    };
    const { view, cuts } = logged(adaptiveRate({ clock }), clock);
    await runFleet({ clock, rate: guard(view), clients: 40, seconds: 60, latencyMs: 20, serve: take });
    const ok = total(served, 10, 60);
    expect(ok / 50).toBeGreaterThanOrEqual(0.9 * R);
    expect(total(rejected, 10, 60)).toBeLessThanOrEqual(0.02 * (ok + total(rejected, 10, 60)));
    expect(cuts.filter((c) => c.t >= 10_000 && c.to / c.from < 0.75)).toEqual([]);
  });

  it('a token bucket that doubles from 25 to 50 r/s (burst 5): found within 5 s of the doubling at every phase of it, 3 s on average, with no cut > 25 %', async () => {
    // The halving scenario of the limits benchmark (nginx 50 → 25 → 50 r/s, burst 5) on virtual
    // time, the doubling moved by 0–875 ms so that it meets the probing at eight phases.
    // "Found" as the benchmark has it: the first whole second after the doubling from which three
    // in a row serve 90 % of the limit or more (and no more than the limit + burst + 1). Found in
    // 2, 3, 1, 3, 5, 5, 3, 2 s (4, 5, 3, 4, 6, 6, 4, 3 s with a whole base step to pass). Without the convex
    // region entered on a hold past the rate last throttled, one phase takes 6 s; without the
    // larger convex step, 3.4 s on average; without the convex relapse landing at 0.95 × the
    // delivered rate, one takes 8 s (a failed +26.7 % probe undone to 44 r/s).
    const found: number[] = [];
    for (let d = 0; d < 1000; d += 125) {
      const clock = virtualClock();
      const doubling = 24_000 + d;
      const server = limiter(clock, (t) => (t >= 12_000 + d && t < doubling ? 25 : 50), 5);
      const { view, cuts } = logged(adaptiveRate({ clock }), clock);
      await runFleet({ clock, rate: guard(view), clients: 40, seconds: 40, latencyMs: 3, serve: () => server.take() });
      const from = Math.ceil(doubling / 1000);
      let at = -1;
      for (let s = from; s + 3 <= 40 && at < 0; s++) {
        if ([0, 1, 2].every((k) => (server.served[s + k] ?? 0) >= 45 && (server.served[s + k] ?? 0) <= 56))
          at = s - from;
      }
      found.push(at);
      expect(cuts.filter((c) => c.t >= doubling + 2000 && c.to / c.from < 0.75)).toEqual([]);
    }
    for (const s of found) {
      expect(s).toBeGreaterThanOrEqual(0);
      expect(s).toBeLessThanOrEqual(5);
    }
    expect(found.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(3 * found.length);
  });

  it('a token bucket whose capacity halves, then doubles back: follows it down at once and back up', async () => {
    const clock = virtualClock();
    const R = 60;
    const capacity = (t: number) => (t >= 30_000 && t < 60_000 ? R / 2 : R);
    const server = limiter(clock, capacity, 5);
    const { view, cuts } = logged(adaptiveRate({ clock }), clock);
    await runFleet({ clock, rate: guard(view), clients: 40, seconds: 100, latencyMs: 20, serve: () => server.take() });
    const perSecond = (from: number, to: number) => total(server.served, from, to) / (to - from);
    // Settled at R: 90 % or more, seconds 10–30; at R/2 within 5 s of the halving; back at R
    // within 20 s of the doubling (probes past the last throttled rate take base steps, at most
    // one a cool-off).
    expect(perSecond(10, 30)).toBeGreaterThanOrEqual(0.9 * R);
    expect(perSecond(35, 60)).toBeGreaterThanOrEqual(0.9 * (R / 2));
    expect(perSecond(80, 100)).toBeGreaterThanOrEqual(0.9 * R);
    // The halving is one congestion event: no cut > 25 % while the limit holds still. The cut
    // that answers it comes within 3 s: a probe that the halving makes fail is a relapse, and the
    // event a relapse begins lasts two cool-offs (here the relapse came 0.15 s after the halving
    // and the halving's cut 2.15 s after it).
    const steady = cuts.filter(
      (c) => (c.t >= 10_000 && c.t < 30_000) || (c.t >= 33_000 && c.t < 60_000) || c.t >= 62_000,
    );
    expect(steady.filter((c) => c.to / c.from < 0.75)).toEqual([]);
    // Throttled: at most 2 % after settling, the transitions included.
    const rejected = total(server.rejected, 10, 100);
    expect(rejected).toBeLessThanOrEqual(0.02 * (rejected + total(server.served, 10, 100)));
  });
});

describe('adaptiveRate: options', () => {
  it('rejects bad options at construction, naming them', () => {
    const bad: [AdaptiveRateOptions, RegExp][] = [
      [{ initialRatePerSecond: 0 }, /`initialRatePerSecond` to be a number > 0/],
      [{ initialRatePerSecond: -1 }, /`initialRatePerSecond`/],
      [
        { initialRatePerSecond: 5, minRatePerSecond: 10 },
        /`initialRatePerSecond` to be a number from minRatePerSecond/,
      ],
      [{ decreaseFactor: 1 }, /`decreaseFactor` to be a number between 0 and 1/],
      [{ decreaseFactor: 0 }, /`decreaseFactor`/],
      [{ increase: 0 }, /`increase` to be a finite number > 0/],
      [{ increase: 1 }, /`increase` to be a number below 1 with decreaseFactor 0.5/],
      [{ decreaseFactor: 0.9, increase: 0.2 }, /`increase`.*A rise must be smaller than a fall/],
      [{ decreaseFactor: 0.95 }, /`decreaseFactor` to be a number below 0.909.* with the default increase 0.1/],
      [{ coolOffMs: 0 }, /`coolOffMs` to be a number > 0/],
      [{ coolOffMs: Number.NaN }, /`coolOffMs`/],
      [{ maxCoolOffMs: 500 }, /`maxCoolOffMs` to be a number >= coolOffMs \(1000\)/],
      [{ minRatePerSecond: 0 }, /`minRatePerSecond` to be a number > 0/],
      [{ minRatePerSecond: Infinity }, /`minRatePerSecond`/],
      [{ maxRatePerSecond: 0.5 }, /`maxRatePerSecond` to be a number >= minRatePerSecond/],
      [{ priorities: [] }, /`priorities` to be a non-empty array of distinct names/],
      [{ priorities: ['a', 'a'] }, /`priorities`/],
      [{ priorities: ['a', 'b'] }, /`defaultPriority` to be one of the priorities \("a", "b"\), got "normal"/],
      [{ defaultPriority: 'urgent' }, /`defaultPriority`/],
      [{ clock: {} as Clock }, /`clock` to be a Clock/],
      [{ rate: 5 } as never, /unknown option `rate`/],
      // null is refused, not read as "the default", for these four.
      [{ decreaseFactor: null } as never, /`decreaseFactor`.*got null/],
      [{ increase: null } as never, /`increase`.*got null/],
      [{ priorities: null } as never, /`priorities`.*got null/],
      [{ defaultPriority: null } as never, /`defaultPriority`.*got null/],
      [{ margin: 0.5 }, /`margin` to be a number from 0 up to \(not including\) 0.5, got 0.5/],
      [{ margin: -0.01 }, /`margin`/],
      [{ margin: null } as never, /`margin`.*got null/],
    ];
    for (const [options, message] of bad) expect(() => adaptiveRate(options), JSON.stringify(options)).toThrow(message);
    expect(() => adaptiveRate({ coolOffMs: -1 })).toThrow(RangeError);
    expect(() => adaptiveRate({ priorities: 'high' as never })).toThrow(TypeError);
  });
});
