// The rate law is a pure step (rate/law.ts): it reads no clock, starts no timer, does no I/O, and
// never changes the state it is given — every step returns a new record, or the same one when
// nothing changes. Its agreement with the fleet's Lua law is test/redis/rate-law-step.test.ts;
// its behaviour, through adaptiveRate, is adaptive-rate.test.ts.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  charge,
  fall,
  initialState,
  LAW,
  type LawState,
  lawParams,
  type Measurement,
  planRise,
  rise,
  succeeded,
  throttled,
  waited,
  waitFor,
} from './law.js';
import { LAW_OPTIONS as DEFAULTS } from './test-helpers.js';

describe('the rate law is a pure step over an explicit state', () => {
  it('imports nothing: no clock, timer, Redis or other module can reach it', () => {
    const source = readFileSync(new URL('./law.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/^\s*import\b/m);
    expect(source).not.toMatch(/\b(Date\.now|performance\.now|setTimeout|setInterval|Math\.random)\b/);
  });

  it('never changes the state it is given, for any trace of successes, waits, throttles and ticks', () => {
    const p = lawParams(DEFAULTS);
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            kind: fc.constantFrom('success', 'wait', 'throttle', 'tick', 'read'),
            dtMs: fc.integer({ min: 0, max: 3000 }),
            delivered: fc.double({ min: -1, max: 200, noNaN: true }),
            count: fc.integer({ min: 0, max: 40 }),
          }),
          { maxLength: 200 },
        ),
        (events) => {
          let s: LawState = Object.freeze(initialState(p, 40, 0));
          let now = 0;
          for (const e of events) {
            now += e.dtMs;
            const copy = { ...s };
            let next: LawState = s;
            if (e.kind === 'success') next = rise(succeeded(s, now), p, now);
            else if (e.kind === 'wait') next = waited(rise(s, p, now), now);
            else if (e.kind === 'throttle') {
              const m = { sent: 40, delivered: e.delivered, count: e.count, spanMs: 1000, refused: false };
              next = throttled(s, p, now, m);
            } else if (e.kind === 'read') planRise(s, p, now);
            else next = rise(s, p, now);
            // The frozen input is unchanged (a write to it would have thrown in strict mode).
            expect(s).toEqual(copy);
            s = Object.freeze(next);
          }
        },
      ),
    );
  });

  it('a step that changes nothing returns the same record (the caller can tell a rise by identity)', () => {
    const p = lawParams(DEFAULTS);
    const s = initialState(p, 40, 0);
    expect(rise(s, p, 0)).toBe(s);
    expect(charge(s, p, 0, false)).toBe(s);
    const ready = waited(succeeded(s, 0), 0);
    expect(succeeded(ready, 1)).toBe(ready);
    expect(waited(ready, 1)).toBe(ready);
    expect(rise(ready, p, 1000)).not.toBe(ready);
    expect(rise(ready, p, 1000).rate).toBe(44);
  });

  it('the constants are one table, and the derived parameters follow it', () => {
    expect(LAW).toEqual({
      additiveRate: 5,
      probeBudget: 0.02,
      probeSpread: 1,
      convexKeep: 0.75,
      tolerance: 1e-9,
      minDelivered: 10,
      slackRequests: 2,
      longEvent: 2,
      collisionCharge: 1,
      collisionYield: 3,
    });
    const p = lawParams(DEFAULTS);
    // (1 − 0.05) / 0.75 − 1 = 26.7 %, above twice the base step (20 %), below 1 / 0.5 − 1.
    expect(p.convexStep).toBeCloseTo(0.95 / 0.75 - 1, 12);
    expect(p.maxStep).toBe(1);
    // 1 s doubled three times reaches 8 s.
    expect(p.maxRelapses).toBe(3);
    expect(lawParams({ ...DEFAULTS, maxCoolOffMs: 8001 }).maxRelapses).toBe(4);
    expect(lawParams({ ...DEFAULTS, maxCoolOffMs: 1000 }).maxRelapses).toBe(0);
  });
});

const p = lawParams(DEFAULTS);
/** Nothing measured: a blind throttle. */
const BLIND: Measurement = { sent: 0, delivered: -1, count: 0, spanMs: 1000, refused: false };
/** `delivered` r/s measured over one second (20 successes: enough to count). */
const measured = (delivered: number): Measurement => ({ sent: 0, delivered, count: 20, spanMs: 1000, refused: false });
/** The evidence for a rise, complete at the last change: a success and a request kept waiting. */
const ready = (s: LawState): LawState => waited(succeeded(s, s.changedAt), s.changedAt);
/** The state after the next rise, applied when it falls due. */
function riseWhenDue(s: LawState): LawState {
  const plan = planRise(ready(s), p, Infinity);
  if (!plan) throw new Error(`no rise planned from ${s.rate} r/s`);
  return rise(ready(s), p, plan.at);
}

describe('[rise] a rise needs both kinds of evidence', () => {
  it('a success alone (nothing kept waiting: the client sends less than its rate) is no reason to rise', () => {
    const s = initialState(p, 40, 0);
    expect(planRise(succeeded(s, 0), p, Infinity)).toBeUndefined();
    expect(planRise(waited(s, 0), p, Infinity)).toBeUndefined();
    expect(planRise(ready(s), p, Infinity)).toEqual({ rate: 44, step: 0.1, relapses: 0, at: 1000 });
  });

  it('with no bound from outside, a rise comes after the base cool-off (notBefore defaults to none)', () => {
    const s = ready(initialState(p, 40, 0));
    expect(planRise(s, p, 999)).toBeUndefined();
    expect(planRise(s, p, 1000)).toEqual({ rate: 44, step: 0.1, relapses: 0, at: 1000 });
    expect(planRise(s, p, 1000, 1500)).toBeUndefined();
  });
});

describe('[rise.late] a rise applied long after it fell due', () => {
  // Ready at 0, due at 1000 (one base cool-off). Applied at `now`, then handed the evidence that
  // arrived with it (a success and a wait, at the old rate): when does the next rise fall due?
  const next = (now: number) => {
    const s = rise(ready(initialState(p, 40, 0)), p, now);
    const plan = planRise(waited(succeeded(s, now), now), p, Infinity);
    return { changedAt: s.changedAt, rate: s.rate, nextAt: plan?.at };
  };

  it('within a base cool-off of falling due: counted from then (the same schedule however late a call applies it)', () => {
    expect(next(1000)).toEqual({ changedAt: 1000, rate: 44, nextAt: 2000 });
    expect(next(2000)).toEqual({ changedAt: 1000, rate: 44, nextAt: 2000 });
  });

  it('more than a base cool-off late (nothing heard for that long): counted from now, so the next waits a cool-off at the new rate', () => {
    // Counted from 1000, the next rise would be due at 2000, long past: applied with the evidence
    // that came with the news, two rises at once.
    expect(next(2001)).toEqual({ changedAt: 2001, rate: 44, nextAt: 3001 });
    expect(next(6000)).toEqual({ changedAt: 6000, rate: 44, nextAt: 7000 });
  });
});

describe('[fall.relapse] and [rise.held]: the backoff of relapses', () => {
  it('relapses back the cool-off off up to maxRelapses (3 with 1 s → 8 s) and no further', () => {
    let s = initialState(p, 40, 0);
    const relapses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const risen = riseWhenDue(s);
      s = fall(risen, p, risen.changedAt, BLIND);
      relapses.push(s.relapses);
    }
    expect(relapses).toEqual([1, 2, 3, 3, 3]);
    expect(waitFor(s, p, s.rate, false, s.relapses)).toBe(8000);
  });

  it('a probe that held at exactly the rate last throttled relaxes the backoff (at or above it, not only above)', () => {
    // 40 r/s probes to 44 and is throttled: back to 40, one relapse, 44 the rate last throttled.
    let s = fall(riseWhenDue(initialState(p, 40, 0)), p, 1000, BLIND);
    expect([s.rate, s.relapses, s.throttledAt]).toEqual([40, 1, 44]);
    const rates: number[] = [];
    const relapses: number[] = [];
    for (let i = 0; i < 5; i++) {
      s = riseWhenDue(s);
      rates.push(s.rate);
      relapses.push(s.relapses);
    }
    // [rise.additive] Steps of 0.1, 0.2, 0.4 × 5 r/s, cut back to the base step where the doubled
    // one would cross 44; the rise after the probe that reached 44 held relaxes the backoff.
    expect(rates).toEqual([40.5, 41.5, 43.5, 44, 44.5]);
    expect(relapses).toEqual([1, 1, 1, 1, 0]);
  });
});

describe('[wait] the quiet time before the next rise', () => {
  it('after a rise that is not convex: half the backed-off cool-off, at least two base ones once relapsed', () => {
    const s = initialState(p, 40, 0);
    expect([0, 1, 2, 3].map((r) => waitFor(s, p, 40, true, r))).toEqual([1000, 2000, 2000, 4000]);
    expect([0, 1, 2, 3].map((r) => waitFor(s, p, 40, false, r))).toEqual([1000, 2000, 4000, 8000]);
  });
});

describe('[probe-at] the gate of a failed probe', () => {
  // 20 r/s probes to 22 at 1 s and is throttled: back to 20, one relapse (2 s backed off), and the
  // probe charged 1 / 0.02 = 50 requests at 20 r/s, paid for 2.5 s after the throttle.
  const probe = riseWhenDue(initialState(p, 20, 0));

  it('a rise to at most the gate comes after the backed-off cool-off, before the probe is paid for', () => {
    const s = fall(probe, p, 1000, BLIND);
    // The gate: (1 − margin) × the rate the probe was throttled at, 0.95 × 22.
    expect([s.rate, s.relapses, s.gateRate, s.paidAt]).toEqual([20, 1, 20.9, 3500]);
    expect(planRise(ready(s), p, Infinity)).toEqual({ rate: 20.5, step: 0.1, relapses: 1, at: 3000 });
  });

  it('a rise to exactly the gate is not above it', () => {
    // Delivered at the probe: 0.95 × this is 20.5 exactly, the next rise.
    const delivered = 21.578947368421055;
    expect(delivered * (1 - DEFAULTS.margin)).toBe(20.5);
    const s = fall(probe, p, 1000, measured(delivered));
    expect([s.rate, s.gateRate, s.paidAt]).toEqual([20, 20.5, 3500]);
    expect(planRise(ready(s), p, Infinity)).toEqual({ rate: 20.5, step: 0.1, relapses: 1, at: 3000 });
  });

  it('a rise above the gate waits until the probe is paid for', () => {
    // Delivered 21.1 r/s: the gate is 0.95 × 21.1 = 20.045, under the next rise (20.5).
    const s = fall(probe, p, 1000, measured(21.1));
    expect([s.rate, s.paidAt]).toEqual([20, 3500]);
    expect(s.gateRate).toBeCloseTo(20.045, 12);
    expect(planRise(ready(s), p, Infinity)).toEqual({ rate: 20.5, step: 0.1, relapses: 1, at: 3500 });
  });
});

describe('[charge] throttles charged to a failed probe', () => {
  const probe = riseWhenDue(initialState(p, 20, 0));
  const relapsed = fall(probe, p, 1000, BLIND);

  it('a throttle within two cool-offs of the relapse adds 50 requests at the rate; one at two cool-offs adds none', () => {
    expect(relapsed.costUntil).toBe(3000);
    expect(charge(relapsed, p, 2999, false).paidAt).toBe(3500 + 2500);
    expect(charge(relapsed, p, 3000, false)).toBe(relapsed);
  });

  it('any other cut answers the service: later throttles charge nothing (the same record)', () => {
    // Within the relapse's event, the delivered rate now measured corrects the blind cut.
    const cut = fall(relapsed, p, 1500, measured(10));
    expect([cut.rate, cut.paidAt, cut.costUntil]).toEqual([10, -Infinity, -Infinity]);
    expect(charge(cut, p, 2000, false)).toBe(cut);
  });
});

describe('[fall] what the measurement says', () => {
  it('[fall.blind] a negative delivered rate is "not measured", whatever the count: the cut is decreaseFactor', () => {
    const s = waited(initialState(p, 40, 0), 0);
    const cut = fall(s, p, 0, { sent: 0, delivered: -1, count: 20, spanMs: 1000, refused: false });
    expect([cut.rate, cut.informed]).toEqual([20, false]);
  });

  it('[fall.event] a blind cut already at (1 − margin) × the delivered rate now measured is noted, not cut again', () => {
    // 76 r/s, throttled blind: cut by decreaseFactor to 38 at 0 s.
    const blind = fall(initialState(p, 76, 0), p, 0, BLIND);
    expect([blind.rate, blind.informed, blind.throttledAt]).toEqual([38, false, 76]);
    // 0.95 × 40 = 38: the measurement confirms the cut.
    const noted = fall(blind, p, 500, measured(40));
    expect(noted).toEqual({ ...blind, notedAt: 500, changedAt: 500, epoch: blind.epoch + 1 });
    // 0.95 × 30 = 28.5: it corrects it.
    const corrected = fall(blind, p, 500, measured(30));
    expect([corrected.rate, corrected.informed, corrected.eventAt, corrected.throttledAt]).toEqual([
      28.5,
      true,
      500,
      30,
    ]);
  });

  it('[fall.changed] short by exactly 2 × margin with the slack is not "well below": held, and noted', () => {
    const s = initialState(p, 40, 0);
    // 40 × (1 − 2 × 0.05) = 36 = 34 + 2 requests of slack over 1 s.
    expect(fall(s, p, 0, measured(34))).toMatchObject({ rate: 40, notedAt: 0, relapses: 0 });
    // 33.5 + 2 < 36: the service changed; cut to 0.95 × 33.5.
    expect(fall(s, p, 0, measured(33.5))).toMatchObject({ rate: 33.5 * 0.95, notedAt: -Infinity, eventAt: 0 });
  });
});
