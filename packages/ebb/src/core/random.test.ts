import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seeded } from './random.js';

// Vectors from test/vectors/xoshiro128ss.c, a C implementation of SplitMix64 seeding and
// xoshiro128** 1.1 written from the published algorithms (https://prng.di.unimi.it/).
const vectors: Record<string, { seed: number | bigint; uint32: number[]; doubles: number[] }> = {
  zero: {
    seed: 0,
    uint32: [3737715805, 2584255861, 2876756834, 3286328325, 1553311962, 1625202774, 3260698944, 2754151956],
    doubles: [0.87025477440427201, 0.66979715053109778, 0.36165862067339571, 0.75919063867070502],
  },
  one: {
    seed: 1,
    uint32: [1695105466, 1423115009, 634581793, 1068227753, 716759206, 4186505319, 3777694425, 2710820970],
    doubles: [0.3946724931250869, 0.14775008893546571, 0.16688351314326166, 0.87956302338214354],
  },
  answer: {
    seed: 42,
    uint32: [1776835114, 4165204688, 17111135, 2317295270, 2792088233, 2554630222, 2940343271, 2244566231],
    doubles: [0.41370166815658871, 0.0039839933778147429, 0.65008370276388672, 0.68460201861414161],
  },
  allOnes: {
    seed: 0xffff_ffff_ffff_ffffn,
    uint32: [477689756, 2493998634, 555695776, 607808419, 61340979, 301466976, 2478485284, 2565876330],
    doubles: [0.11122081116347982, 0.12938300625619603, 0.014282055722108056, 0.57706732748012712],
  },
};

describe('seeded (SplitMix64 + xoshiro128**)', () => {
  for (const [name, v] of Object.entries(vectors)) {
    it(`matches the C reference for seed ${name}`, () => {
      const raw = seeded(v.seed);
      expect(Array.from({ length: 8 }, () => raw.uint32())).toEqual(v.uint32);
      const random = seeded(v.seed);
      expect(Array.from({ length: 4 }, () => random())).toEqual(v.doubles);
    });
  }

  it('takes negative numbers modulo 2^64, like the bigint', () => {
    expect(seeded(-1)()).toBe(seeded(0xffff_ffff_ffff_ffffn)());
  });

  it('gives equal streams for equal seeds and different streams for different seeds', () => {
    fc.assert(
      fc.property(fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }), (seed) => {
        const a = seeded(seed);
        const b = seeded(seed);
        const c = seeded(seed === 0 ? 1 : 0);
        const xs = Array.from({ length: 16 }, a);
        expect(Array.from({ length: 16 }, b)).toEqual(xs);
        expect(Array.from({ length: 16 }, c)).not.toEqual(xs);
      }),
      { numRuns: 200 },
    );
  });

  it('stays in [0, 1) and is close to uniform over a million draws', () => {
    const random = seeded(7);
    const bins = new Array(10).fill(0);
    let sum = 0;
    let outside = 0;
    for (let i = 0; i < 1_000_000; i++) {
      const x = random();
      if (!(x >= 0 && x < 1)) outside++;
      bins[Math.floor(x * 10)]++;
      sum += x;
    }
    expect(outside).toBe(0);
    expect(sum / 1_000_000).toBeCloseTo(0.5, 2);
    // Each decile holds 100,000 ± a few hundred (sd ≈ 300).
    for (const b of bins) expect(Math.abs(b - 100_000)).toBeLessThan(2_000);
  });

  it('rejects seeds that are not safe integers or bigints', () => {
    expect(() => seeded(1.5)).toThrow(RangeError);
    expect(() => seeded(Number.NaN)).toThrow(/`seed`.*NaN/);
    expect(() => seeded(2 ** 60)).toThrow(RangeError);
    expect(() => seeded('42' as unknown as number)).toThrow(TypeError);
  });
});

describe('seeded: the refusal, exactly', () => {
  it('names the seed, shows a number and the type of anything else, and suggests a fix', () => {
    for (const [seed, type, shown] of [
      [1.5, RangeError, '1.5'],
      [Number.NaN, RangeError, 'NaN'],
      [2 ** 53, RangeError, '9007199254740992'],
      ['42', TypeError, 'string'],
      [null, TypeError, 'object'],
    ] as const) {
      expect(() => seeded(seed as unknown as number)).toThrow(
        new type(
          `seeded(): expected \`seed\` to be a safe integer or a bigint, got ${shown}. Use a whole number such as 42.`,
        ),
      );
      expect(() => seeded(seed as unknown as number)).toThrow(type);
    }
    expect(seeded(2 ** 53 - 1)()).toBe(seeded(BigInt(2 ** 53 - 1))());
  });
});
