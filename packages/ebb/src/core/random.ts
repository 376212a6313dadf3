import { DEV } from './dev.js';
import { brief, mistyped } from './validate.js';
/**
 * A source of randomness: a function returning a number in [0, 1), like `Math.random`.
 *
 * Every randomized part of ebb takes one, so a seeded generator makes a run reproducible.
 * A `Random` must never return 1: the jitter formulas rely on the half-open interval.
 */
export type Random = () => number;

/**
 * Checks a `random` option: left out (`undefined`), it stays so and the caller uses
 * `Math.random`; anything else must be a function, or a `TypeError` names `where`. @internal
 */
export function randomOption(where: string, value: unknown): Random | undefined {
  if (value !== undefined && typeof value !== 'function') {
    mistyped(
      where,
      'random',
      value,
      DEV ? 'a function returning a number in [0, 1)' : '',
      DEV ? 'Leave it out for Math.random, or pass seeded(1) from ebb for a repeatable run.' : '',
    );
  }
  return value as Random | undefined;
}

const MASK64 = 0xffff_ffff_ffff_ffffn;

/**
 * SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
 * OOPSLA 2014), the seeding function Vigna recommends for the xoshiro family: it spreads any
 * 64-bit seed, including 0, over the generator's state.
 */
function splitMix64(state: bigint): [next: bigint, output: bigint] {
  const next = (state + 0x9e37_79b9_7f4a_7c15n) & MASK64;
  let z = next;
  z = ((z ^ (z >> 30n)) * 0xbf58_476d_1ce4_e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d0_49bb_1331_11ebn) & MASK64;
  return [next, z ^ (z >> 31n)];
}

/** A seeded generator: `Random` plus the raw 32-bit stream it is built from. */
export interface SeededRandom extends Random {
  /** The next raw 32-bit output of xoshiro128**, as an unsigned integer. */
  uint32(): number;
}

/**
 * A seeded, reproducible `Random`: **xoshiro128\*\*** 1.1 (Blackman and Vigna, "Scrambled
 * linear pseudorandom number generators", 2018; https://prng.di.unimi.it/), its 128-bit state
 * filled from the seed by SplitMix64. Each number in [0, 1) takes two 32-bit outputs and keeps
 * 53 bits, so every double of the form k / 2^53 can occur, from 0 up to 1 - 2^-53.
 *
 * Not for cryptography. Fast enough for simulators (a few ns a call).
 *
 * @param seed any safe integer or bigint (taken modulo 2^64); equal seeds give equal streams.
 * @example
 * const random = seeded(42);
 * sample(presets.default, { count: 4, random }); // the same four delays on every run
 */
export function seeded(seed: number | bigint): SeededRandom {
  if (typeof seed === 'number' ? !Number.isSafeInteger(seed) : typeof seed !== 'bigint') {
    const message = DEV
      ? `seeded(): expected \`seed\` to be a safe integer or a bigint, got ${
          typeof seed === 'number' ? String(seed) : typeof seed
        }. Use a whole number such as 42.`
      : brief('seeded()', 'seed', seed);
    throw typeof seed === 'number' ? new RangeError(message) : new TypeError(message);
  }
  let state = BigInt.asUintN(64, BigInt(seed));
  let output: bigint;
  [state, output] = splitMix64(state);
  let s0 = Number(output & 0xffff_ffffn);
  let s1 = Number(output >> 32n);
  [state, output] = splitMix64(state);
  let s2 = Number(output & 0xffff_ffffn);
  let s3 = Number(output >> 32n);
  // The all-zero state is the one state xoshiro cannot leave; SplitMix64 never yields two zero
  // words in a row, but guard anyway.
  if ((s0 | s1 | s2 | s3) === 0) s0 = 1;

  const uint32 = (): number => {
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = rotl(s3, 11);
    return result;
  };
  // 27 high bits of one output and 26 of the next: (a * 2^26 + b) / 2^53, as java.util.Random.
  const random = (() => ((uint32() >>> 5) * 67_108_864 + (uint32() >>> 6)) / 9_007_199_254_740_992) as SeededRandom;
  random.uint32 = uint32;
  return random;
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
