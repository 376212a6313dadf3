// A throttle at a rate that held gives back three base steps (rate/law.ts, [collision.yield]).
// Independent processes sharing one limit: a probe of one puts the limit over, and the limit
// refuses whichever process's request comes when its bucket is full — mostly not the prober's.
// A note changes no rate, so without the rule the overshoot stays until some process takes two
// throttles within a cool-off; with it, each process refused takes three probes' steps off the limit.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
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
  yieldOf,
} from './law.js';
import { LAW_OPTIONS as DEFAULTS, lawThrottleCase } from './test-helpers.js';

/** A controller of its own (adaptiveRate's rules, without the spread so that times are exact). */
const P = lawParams({ ...DEFAULTS, collisionCharge: LAW.collisionCharge, collisionYield: LAW.collisionYield });
/** The same without the rule: the charge of [charge.collision] alone. */
const CHARGE = lawParams({ ...DEFAULTS, collisionCharge: LAW.collisionCharge });
/** The rule without the charge. */
const YIELD = lawParams({ ...DEFAULTS, collisionYield: LAW.collisionYield });
/** The fleet's parameters: one controller, whose every throttle after a rise is its own relapse. */
const FLEET = lawParams(DEFAULTS);
/** `delivered` r/s measured over one second (20 successes: enough to count). */
const measured = (delivered: number): Measurement => ({ sent: 0, delivered, count: 20, spanMs: 1000, refused: false });
const BLIND: Measurement = { sent: 0, delivered: -1, count: 0, spanMs: 1000, refused: false };
/** The evidence for a rise, complete at the last change: a success and a request kept waiting. */
const ready = (s: LawState): LawState => waited(succeeded(s, s.changedAt), s.changedAt);

describe('[collision.yield] a throttle at a rate that held gives back three base steps', () => {
  const start = initialState(P, 10, 0);
  const noted = fall(start, P, 5000, measured(10));

  it('noted at 10 r/s: down to 8.5 (3 × 0.1 × 5 r/s), the gate there, one 429 owed at 8.5 r/s; the rest as the note without the rule', () => {
    const without = fall(start, CHARGE, 5000, measured(10));
    expect(without.rate).toBe(10);
    expect(noted).toEqual({ ...without, rate: 8.5, gateRate: 8.5, paidAt: 5000 + 1000 / (0.02 * 8.5) });
    // Still a note, not a cut: no event, the rate last throttled and the step kept, a new round.
    expect([noted.notedAt, noted.eventAt, noted.throttledAt, noted.epoch]).toEqual([5000, -Infinity, Infinity, 1]);
  });

  it('the step is the additive rise: increase × the rate up to LAW.additiveRate, collisionYield of them, never below min', () => {
    expect(yieldOf(P, 100)).toBe(98.5);
    expect(yieldOf(P, 5)).toBe(3.5);
    // Below 5 r/s a fraction of the rate: 3 × 0.1 × 3.
    expect(yieldOf(P, 3)).toBeCloseTo(2.1, 12);
    expect(yieldOf(lawParams({ ...DEFAULTS, increase: 0.2, collisionYield: 1 }), 100)).toBe(99);
    expect(yieldOf(lawParams({ ...DEFAULTS, collisionYield: 1 }), 100)).toBe(99.5);
    expect(yieldOf(lawParams({ ...DEFAULTS, collisionYield: 2 }), 100)).toBe(99);
    // At 1.2 r/s with a floor of 1 r/s: 0.84 would be below it.
    expect(yieldOf(P, 1.2)).toBe(1);
    expect(fall(initialState(P, 1.2, 0), P, 5000, measured(1.2)).rate).toBe(1);
    // With the fleet's parameters, nothing: the rate throttled.
    expect(yieldOf(FLEET, 100)).toBe(100);
  });

  it('notes that keep coming give back three steps each (one a cool-off apart); a second within a cool-off trims by the margin', () => {
    const again = fall(noted, P, 6000, measured(10));
    expect([again.rate, again.gateRate, again.notedAt]).toEqual([7, 7, 6000]);
    expect(again.paidAt).toBe(noted.paidAt + 1000 / (0.02 * 7));
    // 999 ms after the last note: [fall.held]'s trim, 0.95 × the 8.5 r/s (below the delivered 10).
    const trimmed = fall(noted, P, 5999, measured(10));
    expect(trimmed.rate).toBeCloseTo(0.95 * 8.5, 12);
    expect(trimmed.eventAt).toBe(5999);
  });

  it('no rise above the rate given back before the 429 is paid for; without the charge, a cool-off after the note', () => {
    // From 8.5 r/s the next rise (+0.85, 10 % of the rate: nothing throttled yet) waits for the
    // 50 requests at 8.5 r/s, 5.88 s.
    expect(planRise(ready(noted), P, Infinity)).toEqual({
      rate: 8.5 + 0.1 * 8.5,
      step: 0.1,
      relapses: 0,
      at: 5000 + 1000 / (0.02 * 8.5),
    });
    // The rule alone: the step given back, no charge, no gate, the rise a cool-off later.
    const alone = fall(start, YIELD, 5000, measured(10));
    expect([alone.rate, alone.paidAt, alone.gateRate]).toEqual([8.5, -Infinity, Infinity]);
    expect(planRise(ready(alone), YIELD, Infinity)?.at).toBe(6000);
    // The fleet's: nothing given back, nothing owed.
    const fleet = fall(start, FLEET, 5000, measured(10));
    expect([fleet.rate, fleet.paidAt, fleet.gateRate]).toEqual([10, -Infinity, Infinity]);
  });

  it('a relapse is the controller’s own failed probe: the same with or without the rule', () => {
    const probe = rise(ready(initialState(P, 20, 0)), P, 1000);
    expect(probe.rose).toBe(true);
    expect(fall(probe, P, 1500, measured(21))).toEqual(fall(probe, CHARGE, 1500, measured(21)));
    // Through throttled(): a rise that fell due before the throttle is judged, not given back for.
    const s = ready(start);
    expect(throttled(s, P, 1500, measured(10))).toEqual(throttled(s, CHARGE, 1500, measured(10)));
    // Before it fell due, the rate held: the steps given back.
    expect(throttled(s, P, 500, measured(10)).rate).toBe(8.5);
  });

  it('within its own failed probe’s charge a throttle is that probe’s: noted, no step given back', () => {
    // 20 r/s rose to 22 at 1 s and relapsed at once: its charge lasts until 3 s.
    const relapsed = fall(rise(ready(initialState(P, 20, 0)), P, 1000), P, 1000, BLIND);
    expect(relapsed.costUntil).toBe(3000);
    const within = fall(relapsed, P, 2000, BLIND);
    expect(within.rate).toBe(relapsed.rate);
    expect(within).toEqual(fall(relapsed, CHARGE, 2000, BLIND));
    // At 3 s the charge has ended: a throttle at the rate that held gives back its steps (3 × 0.5 r/s).
    expect(fall(relapsed, P, 3000, measured(20)).rate).toBeCloseTo(relapsed.rate - 1.5, 12);
  });

  it('for any state and throttle, the rule only lowers a noted rate by its steps, gated there when charged', () => {
    fc.assert(
      fc.property(lawThrottleCase(P), ({ s, now, m }) => {
        const on = fall(s, P, now, m);
        const off = fall(s, CHARGE, now, m);
        // Without the charge, the rule changes the rate alone.
        const alone = fall(s, YIELD, now, m);
        const plain = fall(s, FLEET, now, m);
        expect({ ...alone, rate: 0 }).toEqual({ ...plain, rate: 0 });
        // A throttle noted (no cut) and charged as a collision: the rule's one case.
        const chargedNote = off.paidAt !== plain.paidAt && off.eventAt === s.eventAt;
        if (!chargedNote) {
          expect(on).toEqual(off);
          expect(alone).toEqual(plain);
          return;
        }
        // At a rate that held, outside a failed probe's charge.
        expect(s.rose).toBe(false);
        expect(now).toBeGreaterThanOrEqual(s.costUntil);
        expect([on.notedAt, on.eventAt]).toEqual([now, s.eventAt]);
        expect(off.rate).toBe(s.rate);
        // Exactly three base steps below, never below min; the gate there (or a lower one still
        // owed for, as [charge.collision] keeps it); one 429 owed at it. Computed as yieldOf does
        // (3 × 0.1 is 0.30000000000000004): the same float.
        const to = Math.max(1, s.rate - 3 * 0.1 * Math.min(s.rate, 5));
        expect(on.rate).toBe(to);
        expect(alone.rate).toBe(to);
        expect(on.rate).toBeLessThanOrEqual(s.rate);
        expect(on.gateRate).toBe(s.paidAt > now ? Math.min(s.gateRate, to) : to);
        expect(on.paidAt).toBe(Math.max(s.paidAt, now) + 1000 / (LAW.probeBudget * to));
        expect({ ...on, rate: 0, gateRate: 0, paidAt: 0 }).toEqual({ ...off, rate: 0, gateRate: 0, paidAt: 0 });
      }),
      { numRuns: 2000 },
    );
  });
});
