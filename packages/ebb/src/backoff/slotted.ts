import { DEV } from '../core/dev.js';
import { formatMs } from '../core/format-ms.js';
import { brief, check, DURATION_MS, invalid } from '../core/validate.js';
import { type Backoff, fromCurve, type LimitOptions } from './backoff.js';
import { draw } from './draw.js';
import type { Jitter } from './jitter.js';
import { type CurveMaths, capOf, makeCurve } from './segment.js';

const WINDOW_FIX = 'Windows are counted in slots minus one, as the standards write CWmin and CWmax.';

type Slots = { readonly slotMs: number; readonly cwMin: number; readonly cwMax: number };

/** The contention window (in slots) after `k` failures: min((cwMin+1)·2^k, cwMax+1). @internal */
export function slotWindow(curve: Slots, k: number): number {
  return Math.min((curve.cwMin + 1) * 2 ** k, curve.cwMax + 1);
}

/** The slot window after `k` failures, narrowed so the longest wait stays under `cap`. */
function cappedWindow(curve: Slots, k: number, cap: number): number {
  return Math.min(slotWindow(curve, k), Math.floor(cap / curve.slotMs) + 1);
}

/**
 * The slot draw, which stands in for jitter: a whole number of slots, uniform in 0 … W−1. Its
 * longest wait, (W−1) slots, is the row's delay; the mean of a whole number of slots uniform in
 * 0 … W−1 is (W−1)/2 slots, the same as a continuous draw on [0, d]: hence its span. It has no
 * name, so `toJSON()` writes no `jitter` for a slotted policy. @internal
 */
export const SLOTS: Jitter = {
  name: undefined as unknown as string,
  toString: () => 'random slot count',
  draw(_d, random, s, k) {
    const c = s.curve as unknown as Slots;
    const cap = capOf(s);
    const w = cappedWindow(c, Math.min(k, s.ceiling), cap);
    // floor(r·w) < w for every r in [0, 1) and every w >= 1: r·w <= (1 − 2^−53)·w, and that
    // product rounds to a double below w (w·2^−53 is more than half the spacing below w).
    const d = Math.floor(draw(random) * w) * c.slotMs;
    // The window keeps (w−1)·slotMs under the cap, but the product can land one ulp above it
    // (17 × 0.1 = 1.7000000000000002 with a 1.7 ms cap): clamp the residue.
    return Math.min(d, cap);
  },
  span: (d) => [0, d],
};

const SLOTTED: CurveMaths = {
  at(this: Slots, n, cap) {
    return (cappedWindow(this, n, cap) - 1) * this.slotMs;
  },
  toString(this: Slots) {
    return `slotted ${formatMs(this.slotMs)} slots, CW ${this.cwMin}…${this.cwMax}`;
  },
  check(where, s) {
    if (s.jitter !== SLOTS) {
      throw new TypeError(
        DEV
          ? `${where}: a slotted policy draws its own random slot count; \`jitter\` cannot apply to it.`
          : brief(where, 'jitter', s.jitter),
      );
    }
  },
};

/** Options of {@link slotted}. */
export interface SlottedOptions extends Omit<LimitOptions, 'jitter'> {
  /** Length of one slot in ms: 0.0512 (51.2 µs) for 10 Mb/s Ethernet, 0.009 for 802.11 OFDM. */
  readonly slotMs: number;
  /** Contention window before the first failure, in slots minus one. Default 0 (802.3); 15 for 802.11 OFDM. */
  readonly cwMin?: number;
  /** Largest contention window, in slots minus one. Default 1023 (both 802.3 and 802.11). */
  readonly cwMax?: number;
}

/**
 * The slotted contention window of shared channels (IEEE 802.3 CSMA/CD, IEEE 802.11 DCF):
 * after `c` failures the sender waits `k` slots, `k` uniform in `0 … W−1`, where
 * `W = min((cwMin+1)·2^c, cwMax+1)` — the window doubles (`CW ← 2(CW+1)−1`) up to `cwMax`.
 *
 * The draw is discrete and built in, so a slotted policy takes no `jitter`. Its mean after `c`
 * failures is `(W−1)/2` slots: with `cwMin` 0, the Wikipedia article's E(c) = (2^c − 1)/2.
 * Default: 5 attempts in all (none by default when you set a finite `maxElapsedMs`).
 *
 * @example
 * slotted({ slotMs: 0.0512, cwMin: 0, cwMax: 1023, maxAttempts: 16 }) // 802.3, as presets.ethernet
 */
export function slotted(options: SlottedOptions): Backoff {
  const where = 'slotted()';
  return fromCurve(
    where,
    options,
    ['slotMs', 'cwMin', 'cwMax'],
    (o) => {
      const slotMs = check(where, 'slotMs', o.slotMs, DURATION_MS);
      if (slotMs === 0)
        invalid(
          where,
          'slotMs',
          0,
          DEV ? 'a finite number > 0' : '',
          DEV ? 'The 802.3 slot at 10 Mb/s is 0.0512 ms.' : '',
        );
      const cwMin = check(where, 'cwMin', o.cwMin, { whole: true, fix: WINDOW_FIX }, 0);
      // cwMax's bound is cwMin, known only now.
      const cwMax = check(
        where,
        'cwMax',
        o.cwMax,
        { whole: true, min: cwMin, fix: `${WINDOW_FIX} It must be >= cwMin (${cwMin}).` },
        Math.max(1023, cwMin),
      );
      return makeCurve(SLOTTED, { type: 'slotted' as const, slotMs, cwMin, cwMax });
    },
    Infinity,
    SLOTS,
  );
}
