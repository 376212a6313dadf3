// A throttle at a rate that held (rate/law.ts, [charge.collision]): independent processes sharing
// one limit are throttled by each other's probes. Each charges every throttle it receives at a
// rate that held to its own probe budget, as it charges its own failed probe's: no rise above the
// rate throttled until LAW.probeBudget of its requests at the rate have paid for it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  charge,
  collide,
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
} from './law.js';
import { LAW_OPTIONS as DEFAULTS, lawThrottleCase } from './test-helpers.js';

/** A controller of its own (adaptiveRate's parameters, without the spread so that times are exact). */
const P = lawParams({ ...DEFAULTS, collisionCharge: LAW.collisionCharge });
/** The fleet's parameters: one controller, whose every throttle after a rise is its own relapse. */
const FLEET = lawParams(DEFAULTS);
/** `delivered` r/s measured over one second (20 successes: enough to count). */
const measured = (delivered: number): Measurement => ({ sent: 0, delivered, count: 20, spanMs: 1000, refused: false });
const BLIND: Measurement = { sent: 0, delivered: -1, count: 0, spanMs: 1000, refused: false };
/** The evidence for a rise, complete at the last change: a success and a request kept waiting. */
const ready = (s: LawState): LawState => waited(succeeded(s, s.changedAt), s.changedAt);

describe('[charge.collision] a throttle at a rate that held is charged to the probe budget', () => {
  // 10 r/s since 0, no rise since: the service delivers 10 r/s and still throttles at 5 s.
  const start = initialState(P, 10, 0);
  const noted = fall(start, P, 5000, measured(10));

  it('noted at 10 r/s: one 429 to pay for at 2 % of the requests (50 at 10 r/s, 5 s), no rise above 10 r/s before', () => {
    expect(noted).toEqual({
      ...start,
      notedAt: 5000,
      changedAt: 5000,
      epoch: 1,
      paidAt: 5000 + 1000 / (0.02 * 10),
      gateRate: 10,
    });
    expect(noted.paidAt).toBe(10_000);
    // The next rise, to 11 r/s, is above the gate: at 10 s, not one cool-off after the note (6 s).
    expect(planRise(ready(noted), P, Infinity)).toEqual({ rate: 11, step: 0.1, relapses: 0, at: 10_000 });
  });

  it('with the fleet’s parameters (collisionCharge 0) the same note charges nothing: the next rise a cool-off later', () => {
    const plain = fall(start, FLEET, 5000, measured(10));
    expect([plain.paidAt, plain.gateRate, plain.rate]).toEqual([-Infinity, Infinity, 10]);
    expect(planRise(ready(plain), FLEET, Infinity)?.at).toBe(6000);
  });

  it('collisionCharge is the number of 429s charged: 2 owes 100 requests at the rate', () => {
    const two = lawParams({ ...DEFAULTS, collisionCharge: 2 });
    expect(fall(start, two, 5000, measured(10)).paidAt).toBe(15_000);
  });

  it('a second throttle within a cool-off trims the rate by the margin and adds its 429 at the new rate; rises back to the gate are free, above it wait', () => {
    const trimmed = fall(noted, P, 5500, measured(10));
    expect([trimmed.rate, trimmed.gateRate, trimmed.eventAt, trimmed.throttledAt]).toEqual([9.5, 10, 5500, 10]);
    // Owed: 10 s for the first, then 50 requests at 9.5 r/s (5.263 s) for the second.
    expect(trimmed.paidAt).toBe(10_000 + 1000 / (0.02 * 9.5));
    // Back to the gate, 10 r/s, one cool-off after the trim; past it (10.5), only once paid for.
    const back = rise(ready(trimmed), P, 6500);
    expect([back.rate, back.changedAt]).toEqual([10, 6500]);
    expect(planRise(ready(back), P, Infinity)).toEqual({
      rate: 10.5,
      step: 0.1,
      relapses: 0,
      at: 10_000 + 1000 / (0.02 * 9.5),
    });
    // Without the rule the trim voids every charge, and 10.5 r/s comes one cool-off after 10.
    const plain = fall(fall(start, FLEET, 5000, measured(10)), FLEET, 5500, measured(10));
    expect([plain.rate, plain.paidAt]).toEqual([9.5, -Infinity]);
    expect(planRise(ready(rise(ready(plain), FLEET, 6500)), FLEET, Infinity)?.at).toBe(7500);
  });

  it('a new charge while one is owed keeps the lower gate', () => {
    // Owed until 15.3 s with the gate at 10; a throttle of a later round, at 9.5 r/s, is noted and
    // lowers the gate to 9.5.
    const trimmed = fall(noted, P, 5500, measured(10));
    const again = fall(trimmed, P, 7000, measured(9.5));
    expect([again.notedAt, again.gateRate, again.rate]).toEqual([7000, 9.5, 9.5]);
    expect(again.paidAt).toBe(trimmed.paidAt + 1000 / (0.02 * 9.5));
    // A gate already lower stays.
    expect(collide({ ...trimmed, gateRate: 9 }, P, 7000, 9.5).gateRate).toBe(9);
    // Paid for exactly now: nothing owed, the old gate no longer holds.
    expect(collide({ ...trimmed, gateRate: 9 }, P, trimmed.paidAt, 9.5).gateRate).toBe(9.5);
    // Nothing owed any more: the gate is the rate throttled, up or down.
    expect(collide({ ...trimmed, gateRate: 9 }, P, 20_000, 9.5).gateRate).toBe(9.5);
    expect(collide({ ...trimmed, gateRate: 9 }, P, 20_000, 9.5).paidAt).toBe(20_000 + 1000 / (0.02 * 9.5));
  });

  it('a relapse is the controller’s own failed probe: charged as such, the same with or without the rule', () => {
    const probe = rise(ready(initialState(P, 20, 0)), P, 1000);
    expect(probe.rose).toBe(true);
    expect(fall(probe, P, 1500, measured(21))).toEqual(fall(probe, FLEET, 1500, measured(21)));
  });

  it('within its own failed probe’s charge a throttle is charged once, as that probe’s; at its end, as a collision', () => {
    // 20 r/s rose to 22 at 1 s and relapsed at once: owed 50 requests at 20 r/s (2.5 s), charged until 3 s.
    const relapsed = fall(rise(ready(initialState(P, 20, 0)), P, 1000), P, 1000, BLIND);
    expect([relapsed.paidAt, relapsed.costUntil, relapsed.gateRate]).toEqual([3500, 3000, 20.9]);
    // A throttle of a new round at 2 s: charge() adds its 429, fall() notes it and adds nothing.
    const within = fall(charge(relapsed, P, 2000, false), P, 2000, BLIND);
    expect(within.paidAt).toBe(6000);
    expect(within).toEqual(fall(charge(relapsed, FLEET, 2000, false), FLEET, 2000, BLIND));
    // At 3 s the probe's charge has ended: a throttle at the rate that held is a collision.
    const after = fall(charge(relapsed, P, 3000, false), P, 3000, measured(20));
    expect([after.notedAt, after.paidAt, after.gateRate]).toEqual([3000, 6000, 20]);
  });

  it('through throttled(): a throttle after a rise fell due judges that rise (a relapse, not a collision); before it, a collision', () => {
    // 10 r/s with the evidence for a rise complete at 0: the rise to 11 r/s falls due at 1 s.
    const s = ready(start);
    const late = throttled(s, P, 1500, measured(10));
    // Back to 0.95 × the 10 r/s before the rise, charged as the probe's: the same with or without the rule.
    expect([late.rate, late.throttledProbe, late.gateRate]).toEqual([9.5, true, 9.5]);
    expect(late).toEqual(throttled(s, FLEET, 1500, measured(10)));
    // At 0.5 s no rise is due: the rate held, the throttle is charged as a collision.
    const early = throttled(s, P, 500, measured(10));
    expect([early.rate, early.notedAt, early.paidAt, early.gateRate]).toEqual([10, 500, 5500, 10]);
    expect(throttled(s, FLEET, 500, measured(10)).paidAt).toBe(-Infinity);
  });

  it('a throttle showing the service changed (delivering well below) voids every charge, as any other cut', () => {
    const changed = fall(noted, P, 7000, measured(5));
    expect([changed.rate, changed.paidAt, changed.costUntil]).toEqual([5, -Infinity, -Infinity]);
  });

  it('within the event of a cut that voided every charge, a throttle is that cut’s (rule 2): noted, not charged', () => {
    const changed = fall(noted, P, 7000, measured(5));
    const inEvent = fall(changed, P, 7500, measured(5));
    expect([inEvent.notedAt, inEvent.rate, inEvent.paidAt, inEvent.gateRate]).toEqual([7500, 5, -Infinity, 10]);
    // Within the event of a trim that was charged, a throttle is charged too.
    const trimmed = fall(noted, P, 5500, measured(10));
    const inTrim = fall(trimmed, P, 6000, measured(9.5));
    expect([inTrim.notedAt, inTrim.rate]).toEqual([6000, 9.5]);
    expect(inTrim.paidAt).toBe(trimmed.paidAt + 1000 / (0.02 * 9.5));
  });

  it('for any state and throttle, the rule only postpones rises: never another rate, never sooner', () => {
    fc.assert(
      fc.property(lawThrottleCase(P), fc.integer({ min: 0, max: 60_000 }), ({ s, now, m }, later) => {
        const on = fall(s, P, now, m);
        const off = fall(s, FLEET, now, m);
        // The same state but for what is owed and the gate.
        expect({ ...on, paidAt: 0, gateRate: 0 }).toEqual({ ...off, paidAt: 0, gateRate: 0 });
        const a = planRise(ready(on), P, now + later);
        const b = planRise(ready(off), FLEET, now + later);
        if (a) {
          expect(b?.rate).toBe(a.rate);
          expect(b?.at).toBeLessThanOrEqual(a.at);
        }
        // Charged only at a rate that held, and then by exactly collisionCharge 429s at the new rate.
        if (on.paidAt !== off.paidAt) {
          expect(s.rose).toBe(false);
          expect(on.paidAt).toBe(Math.max(s.paidAt, now) + 1000 / (LAW.probeBudget * on.rate));
        }
      }),
      { numRuns: 2000 },
    );
  });
});
