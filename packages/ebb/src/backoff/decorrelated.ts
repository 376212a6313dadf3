import { DEV } from '../core/dev.js';
import type { Random } from '../core/random.js';
import { brief, invalid } from '../core/validate.js';
import { draw } from './draw.js';
import type { Jitter, RowBounds } from './jitter.js';
import { clampOf, type Segment } from './segment.js';

/**
 * The distribution of decorrelated jitter (AWS Architecture Blog, "Exponential Backoff and
 * Jitter", 2015): `X₀ = b`, `Xₖ = min(C, U[b, m·Xₖ₋₁])`.
 *
 * Each delay depends on the one before, so row `k`'s distribution is that of a Markov chain
 * after `k` steps; its bounds are exact (`[min(b, C), min(C, b·mᵏ)]`) but its mean has no closed
 * form once the cap `C` binds (before that, `E[Xₖ] = (b + m·E[Xₖ₋₁]) / 2` exactly). The mean is
 * therefore computed numerically, by pushing the distribution through the chain:
 *
 * - the support [b, C] is cut into log-spaced cells, each at most 2 % wide (at least 256, at
 *   most 20,000), plus an edge at C/m, where the cap starts to bind, and an atom at C;
 * - each cell is one particle with the cell's mass at the cell's mean position. A particle at x
 *   spreads its mass uniformly over [b, m·x], and what lies above C collects in the atom.
 *
 * Because the chain's step is linear in x below the cap and the particles keep each cell's first
 * moment, the mean is exact (to rounding) until the cap binds, and afterwards off only by the
 * curvature of the clamp within one cell: under 1e-4 relative (the unit tests check it against
 * the closed form and against a million samples). The chain forgets its start geometrically, so
 * the iteration stops once the mean is stationary. The mean converges at rate about m/2, so a
 * multiplier just under 2 with a far-away cap may not settle within the work budget (5e7
 * cell-steps); rows past the computed ones then throw rather than guess.
 */

const CELL_RATIO = 1.02;
const MIN_CELLS = 256;
const MAX_CELLS = 20_000;
const WORK_BUDGET = 5e7;
const SETTLED = 1e-13;

/** Means of rows 1, 2, … of one decorrelated policy, computed on demand and kept. */
export class DecorrelatedMeans {
  readonly #b: number;
  readonly #m: number;
  readonly #c: number;
  /** The cap in units of b. */
  readonly #ratio: number;
  readonly #edges: Float64Array;
  #mass: Float64Array;
  #pos: Float64Array;
  readonly #means: number[] = [];
  /** Rows computed at most before giving up on settling: the work budget over the cell count. */
  readonly maxSteps: number;
  #settled = false;

  /**
   * @param b the initial delay (> 0)
   * @param m the multiplier (>= 1)
   * @param c the cap (finite, > 0)
   * @param maxSteps rows computed at most before giving up on settling (tests lower it)
   */
  constructor(b: number, m: number, c: number, maxSteps?: number) {
    this.#b = b;
    this.#m = m;
    this.#c = c;
    // The chain scales with b (X/b follows the same chain from 1 with cap C/b), so work in units
    // of b: tiny initial delays would otherwise sink into subnormal arithmetic. A ratio beyond
    // 1e300 (b under about 1e-285 ms) is treated as 1e300.
    const ratio = Math.min(c / b, 1e300);
    this.#ratio = ratio;
    const edges: number[] = [];
    const cells = Math.min(MAX_CELLS, Math.max(MIN_CELLS, Math.ceil(Math.log(ratio) / Math.log(CELL_RATIO))));
    // At most MAX_CELLS cells, so the default is at least 2,500 rows.
    this.maxSteps = maxSteps ?? Math.floor(WORK_BUDGET / cells);
    // The grid is built even where mean() never uses it (a cap at or below b, multiplier 1): mean()
    // answers those before stepping. The last edge is ratio ** 1, which is ratio exactly.
    for (let i = 0; i <= cells; i++) edges.push(ratio ** (i / cells));
    // The knee C/m, where the cap starts to bind; 1 (a zero-width cell: no mass) if it binds at once.
    // Stryker disable next-line ArithmeticOperator: ratio * m drops the knee from the grid, which moves the means by ~1e-8 relative, far below their documented 1e-4 accuracy
    edges.push(Math.max(ratio / m, 1));
    // Stryker disable next-line MethodExpression,ArithmeticOperator,ArrowFunction: unsorted, only the knee is out of place and its cell gets no mass: the means move by ~1e-8 relative, below their 1e-4 accuracy
    edges.sort((x, y) => x - y);
    this.#edges = Float64Array.from(edges);
    // Particles: one per cell, plus the atom at the cap in the last slot. Start: all mass at 1 (= b).
    this.#mass = new Float64Array(edges.length);
    this.#pos = new Float64Array(edges.length);
    this.#mass[0] = 1;
    this.#pos[0] = 1;
  }

  /** The mean of row `k` (the wait after the k-th failure), k >= 1. */
  mean(k: number): number {
    const b = this.#b;
    const c = this.#c;
    if (c <= b) return c; // every draw is at least b, so every delay is the cap
    if (this.#m === 1) return b;
    while (this.#means.length < k && !this.#settled && this.#means.length < this.maxSteps) this.#step();
    const means = this.#means;
    if (k > means.length && !this.#settled) {
      throw new RangeError(
        `describePolicy(): the mean of decorrelated jitter (initial ${b} ms, multiplier ${this.#m}, cap ${c} ms) has not settled after ${means.length} rows, so row ${k} is not computed; rows up to ${means.length} are.`,
      );
    }
    return b * (means[Math.min(k, means.length) - 1] as number);
  }

  #step(): void {
    const b = 1;
    const m = this.#m;
    const c = this.#ratio;
    const edges = this.#edges;
    const cells = edges.length - 1;
    const mass = this.#mass;
    const pos = this.#pos;
    // Particles sorted by position (cells are ordered; the atom at C sits last).
    const tops: number[] = [];
    const densities: number[] = [];
    let atom = 0;
    for (let i = 0; i <= cells; i++) {
      const q = mass[i] as number;
      if (q === 0) continue;
      const high = m * (pos[i] as number);
      const top = Math.min(high, c);
      const width = high - b;
      tops.push(top);
      densities.push(q / width);
      atom += (q * (high - top)) / width;
    }
    // Density of the next step at y: the sum of densities of particles whose top lies above y.
    const suffix = new Float64Array(densities.length + 1);
    for (let j = densities.length - 1; j >= 0; j--) suffix[j] = (suffix[j + 1] as number) + (densities[j] as number);
    const nextMass = new Float64Array(cells + 1);
    const nextPos = new Float64Array(cells + 1);
    let j = 0;
    let total = atom * c;
    // `!==`: i counts up from 0 to cells (at least 257).
    for (let i = 0; i !== cells; i++) {
      const low = edges[i] as number;
      const high = edges[i + 1] as number;
      let q = 0;
      let moment = 0;
      let from = low;
      // The tops ascend (so do the particles) and are at least 1 = edges[0], so each piece [from, to]
      // and the last one [from, high] has width >= 0; a piece of width 0 adds nothing.
      while (j !== tops.length && (tops[j] as number) <= high) {
        const to = tops[j] as number;
        const d = suffix[j] as number;
        q += d * (to - from);
        moment += (d * (to - from) * (to + from)) / 2;
        from = to;
        j++;
      }
      const d = suffix[j] as number;
      q += d * (high - from);
      moment += (d * (high - from) * (high + from)) / 2;
      nextMass[i] = q;
      // An empty cell (q 0) gets position NaN, never read: the next step skips particles of mass 0.
      nextPos[i] = moment / q;
      total += moment;
    }
    nextMass[cells] = atom;
    nextPos[cells] = c;
    this.#mass = nextMass;
    this.#pos = nextPos;
    const previous = this.#means[this.#means.length - 1];
    this.#means.push(total);
    // Stryker disable next-line ArithmeticOperator: SETTLED / total only moves where the iteration stops by rows whose means differ by ~1e-12 relative
    const tolerance = SETTLED * total;
    // Past row 3, so `previous` is a number.
    if (this.#means.length > 3 && Math.abs(total - (previous as number)) <= tolerance) this.#settled = true;
  }
}

type Exponential = { readonly initialDelayMs: number; readonly multiplier: number };

const meansOf = /* @__PURE__ */ new WeakMap<Segment, DecorrelatedMeans>();

/**
 * Decorrelated jitter (AWS Architecture Blog, "Exponential Backoff and Jitter", 2015): each wait
 * is `min(cap, U[initial, previous·multiplier])`, from `X₀ = initialDelayMs` — every draw depends
 * on the one before, so the waits wander rather than follow a curve. For exponential curves only
 * (it reads `initialDelayMs` and `multiplier`), capped by `maxDelayMs` (it has no un-randomized
 * curve for `ceiling` or `maxIntervalMs` to act on). `describePolicy()` gives its rows' exact
 * bounds and a numeric mean (see above); importing it brings that computation along.
 *
 * @example
 * exponential({ initialDelayMs: 5, multiplier: 3, maxDelayMs: 2_000, jitter: decorrelatedJitter })
 */
export const decorrelatedJitter: Jitter = /* @__PURE__ */ Object.freeze({
  name: 'decorrelated',
  toString: () => 'decorrelated jitter',
  chained: true,
  draw(_d: number, random: Random, s: Segment, k: number, previous: number) {
    const { initialDelayMs: base, multiplier } = s.curve as unknown as Exponential;
    // U[base, previous·m], clamped by the caller after the draw as the AWS formula has it, so the
    // cap carries a point mass. previous·m is kept under the envelope base·m^k that
    // describeRow() reports (repeated products and a power can differ in the last bit). Should
    // previous·m overflow, high is Infinity: every draw above 0 is then the cap, and a draw of
    // 0 is `base`, the row's minimum (0 × Infinity would be NaN). No NaN reaches the minima:
    // base > 0 and the multiplier are finite, and `previous` is a finite earlier draw.
    const high = Math.min((k === 1 ? base : previous) * multiplier, base * multiplier ** k);
    const r = draw(random);
    return r > 0 ? base + r * (high - base) : base;
  },
  check(where: string, s: Segment) {
    if (s.curve.type !== 'exponential') {
      throw new TypeError(
        DEV
          ? `${where}: decorrelated jitter grows from \`initialDelayMs\` by \`multiplier\`, so it needs an exponential curve, not ${s.curve.type}.`
          : brief(where, 'jitter', s.curve.type),
      );
    }
    if (s.curve.initialDelayMs === 0) {
      invalid(
        where,
        'initialDelayMs',
        0,
        DEV ? 'a number > 0 with decorrelated jitter' : '',
        DEV ? 'Decorrelated jitter never grows from 0.' : '',
      );
    }
    const limit = s.ceiling !== Infinity ? 'ceiling' : s.maxIntervalMs !== Infinity ? 'maxIntervalMs' : '';
    if (limit) {
      throw new TypeError(
        DEV
          ? `${where}: decorrelated jitter has no un-randomized curve for \`${limit}\` to act on; cap it with \`maxDelayMs\`.`
          : brief(where, limit, s[limit]),
      );
    }
  },
  /**
   * Row `k` of a decorrelated segment as `describeRow()` reports it (`attempt` is the global
   * row): the envelope `min(cap, b·m^k)` as delay and maximum, `min(b, cap)` as minimum, and the
   * numeric mean.
   */
  row(s: Segment, k: number, attempt: number): RowBounds {
    const { initialDelayMs: b, multiplier: m } = s.curve as unknown as Exponential;
    const cap = clampOf(s);
    const envelope = Math.min(b * m ** k, cap);
    let means = meansOf.get(s);
    if (!means) {
      means = new DecorrelatedMeans(b, m, cap);
      meansOf.set(s, means);
    }
    return {
      attempt,
      delayMs: envelope,
      minDelayMs: Math.min(b, cap),
      maxDelayMs: envelope,
      meanDelayMs: means.mean(k),
    };
  },
});
