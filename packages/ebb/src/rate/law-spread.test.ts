// The spread of the waits for a rise (rate/law.ts, [spread]): independent controllers sharing one
// limit are all throttled by the same overshoot and all cut at once; each then draws from its own
// seed how much longer than the cool-off it waits, so that they do not all probe again together.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  fall,
  initialState,
  LAW,
  type LawParams,
  type LawState,
  lawParams,
  type Measurement,
  nextSeed,
  planRise,
  spreadOf,
  succeeded,
  waited,
} from './law.js';
import { LAW_OPTIONS as DEFAULTS } from './test-helpers.js';

const MODULUS = 2 ** 31 - 1;
const SPREAD = lawParams({ ...DEFAULTS, probeSpread: LAW.probeSpread });
/** The service delivered about the rate: a throttle at a rate that held (fall.held), not a probe's. */
const held = (rate: number): Measurement => ({ sent: rate, delivered: rate, count: 40, spanMs: 3000, refused: false });

/** The time of the first rise after a throttle at `now` that was not this controller's probe. */
function probeAfterForeignThrottle(s: LawState, p: LawParams, now: number): { s: LawState; at: number } {
  // Frozen: a step that changed the state it was given would throw.
  const cut = waited(succeeded(fall(Object.freeze(s), p, now, held(s.rate)), now), now);
  const plan = planRise(cut, p, now + 60_000);
  if (!plan) throw new Error('no rise planned');
  return { s: cut, at: plan.at };
}

describe('rate law: the spread of the waits for a rise', () => {
  it('draws with the minimal standard generator (48271, modulo 2³¹ − 1): its published check value', () => {
    // The C++ standard's check of std::minstd_rand ([rand.predef]): the 10000th draw from seed 1 is 399268537.
    let seed = 1;
    for (let i = 0; i < 10_000; i++) seed = nextSeed(seed);
    expect(seed).toBe(399_268_537);
    expect([nextSeed(1), nextSeed(48_271)]).toEqual([48_271, 182_605_794]);
    // 0 is the generator's fixed point: a seed of 0 never spreads.
    expect(nextSeed(0)).toBe(0);
  });

  it('after a throttle not its own, the rise waits the cool-off plus spreadMs × seed / (2³¹ − 1), the seed drawn anew at every change', () => {
    expect(SPREAD.spreadMs).toBe(1000);
    const start = initialState(SPREAD, 10, 0, 1);
    expect(start.seed).toBe(1);
    const a = probeAfterForeignThrottle(start, SPREAD, 5000);
    // The cut drew once: 48271; the wait is 1000 ms + 1000 × 48271 / (2³¹ − 1) = 1000.0225 ms.
    expect(a.s.seed).toBe(48_271);
    expect(a.at).toBe(5000 + 1000 + (1000 * 48_271) / MODULUS);
    const b = probeAfterForeignThrottle(a.s, SPREAD, 20_000);
    expect(b.s.seed).toBe(182_605_794);
    expect(b.at).toBe(20_000 + 1000 + (1000 * 182_605_794) / MODULUS);
    expect(b.at - 20_000).toBeCloseTo(1085.03, 2);
  });

  it('a seed of 0, or parameters without a spread (the fleet’s), wait exactly the cool-off and leave the seed alone', () => {
    const zero = probeAfterForeignThrottle(initialState(SPREAD, 10, 0, 0), SPREAD, 5000);
    expect([zero.at, zero.s.seed]).toEqual([6000, 0]);
    const plain = lawParams(DEFAULTS);
    expect(plain.spreadMs).toBe(0);
    const none = probeAfterForeignThrottle(initialState(plain, 10, 0, 12_345), plain, 5000);
    expect([none.at, none.s.seed]).toEqual([6000, 12_345]);
  });

  it('after its own probe failed (a relapse), no spread: the relapse already backs the cool-off off', () => {
    let s = initialState(SPREAD, 10, 0, 1);
    s = waited(succeeded(s, 0), 0);
    const plan = planRise(s, SPREAD, 5000);
    expect(plan?.rate).toBe(11);
    s = waited(
      succeeded(fall({ ...s, rate: 11, rose: true, before: 10, changedAt: 1000 }, SPREAD, 1500, held(11)), 1500),
      1500,
    );
    expect(s.throttledProbe).toBe(true);
    expect(spreadOf(s, SPREAD)).toBe(0);
    expect(s.seed).not.toBe(1); // drawn, but not used while the last throttle was its own probe
  });

  it('a seed is taken modulo 2³¹ − 1, whole and never negative', () => {
    expect(initialState(SPREAD, 10, 0, MODULUS).seed).toBe(0);
    expect(initialState(SPREAD, 10, 0, MODULUS + 5.7).seed).toBe(5);
    expect(initialState(SPREAD, 10, 0, -3).seed).toBe(MODULUS - 3);
  });

  it('five controllers with different seeds, all cut by the same throttles, rarely probe within 50 ms of each other; without the spread, always', () => {
    const ROUNDS = 200;
    /** The share of rounds in which the two earliest probes of the controllers come within 50 ms. */
    const together = (p: LawParams, seeds: number[]): number => {
      let states = seeds.map((seed) => initialState(p, 10, 0, seed));
      let close = 0;
      for (let r = 0; r < ROUNDS; r++) {
        const now = 10_000 * (r + 1);
        const next = states.map((s) => probeAfterForeignThrottle(s, p, now));
        const ats = next.map((x) => x.at).sort((x, y) => x - y);
        if ((ats[1] as number) - (ats[0] as number) < 50) close++;
        states = next.map((x) => x.s);
      }
      return close / ROUNDS;
    };
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: MODULUS - 1 }), { minLength: 5, maxLength: 5 }), (seeds) => {
        // Five uniform draws over 1000 ms: the two earliest come within 50 ms with probability
        // 1 − 0.95⁵ ≈ 23 %; 40 % leaves room for 200 rounds' chance (σ ≈ 3 points).
        expect(together(SPREAD, seeds)).toBeLessThanOrEqual(0.4);
        expect(together(lawParams(DEFAULTS), seeds)).toBe(1);
      }),
      { numRuns: 40 },
    );
  });
});
