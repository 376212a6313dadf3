import { DEV } from '../core/dev.js';
import type { Random } from '../core/random.js';
import { mistyped } from '../core/validate.js';
import type { Segment } from './segment.js';

/**
 * How a delay is randomized: a value you import and pass as `jitter`. With `d` the
 * un-randomized delay of a row (after any cap) and `r` a draw from `Random` in [0, 1):
 *
 * | value | delay | source |
 * |---|---|---|
 * | `fullJitter` (the default) | `r·d`, in [0, d) | AWS Architecture Blog, "Exponential Backoff and Jitter" (Brooker, 2015) |
 * | `equalJitter` | `d/2 + r·d/2`, in [d/2, d) | same |
 * | `decorrelatedJitter` | `min(cap, U[initial, previous·multiplier])` | same; exponential curves only |
 * | `proportionalJitter(factor)` | `d·(1 − f + 2·f·r)`, in [d(1−f), d(1+f)] | Google HTTP client's randomization factor, gRPC's ±20 % |
 * | `additiveJitter(maxMs)` | `d + r·maxMs`, in [d, d + maxMs] | Google Drive's "+ random_number_milliseconds" |
 * | `noJitter` | `d` | |
 *
 * Full jitter is the usual choice for clients that retry against a shared service: it spreads
 * retries the most and does the least work (Brooker's simulation, reproduced by `ebb simulate
 * contention`). Proportional and additive jitter can push a delay above the curve's cap;
 * `maxDelayMs` clamps the final delay, `maxIntervalMs` only the un-randomized one.
 *
 * Each value is one frozen object carrying its draw and its bounds, which the run, `describePolicy()`
 * and `sample()` all read; the fields other than `name` are ebb's own (build jitter values with
 * the exports above, not by hand). `jitterNamed('proportional:0.5')` gives a value from its name.
 */
export interface Jitter {
  /** Its name in `jitterNamed()`, the CLI's `--jitter` and `toJSON()`: `'full'`, `'proportional:0.2'`, `'additive:1000'`. */
  readonly name: string;
  /** How a policy's description names it: `full jitter`, `±20 % jitter`, `+0–1 s jitter`. */
  toString(): string;
  /**
   * The wait of row `k` before the final clamp (`maxDelayMs`): `d` is the row's un-randomized
   * delay after caps; `previous` the segment's last wait, kept by the run for a `chained` kind.
   * @internal
   */
  readonly draw: (d: number, random: Random, s: Segment, k: number, previous: number) => number;
  /**
   * The bounds of a uniform draw, `[low, high]` (a point when equal): `describeRow()` takes the
   * row's minimum, maximum and mean (the midpoint, or the clamped uniform's mean under
   * `maxDelayMs`) from them. A kind whose draw is not uniform has `row` instead. @internal
   */
  readonly span?: (d: number, s: Segment) => readonly [low: number, high: number];
  /** Decorrelated jitter's rows, a Markov chain: `describeRow()`'s row `k` of segment `s`. @internal */
  readonly row?: (s: Segment, k: number, attempt: number) => RowBounds;
  /** Each draw depends on the previous one: the run keeps it. @internal */
  readonly chained?: boolean;
  /** Refuses a segment this kind cannot honour (decorrelated: other curves, caps before jitter). @internal */
  readonly check?: (where: string, s: Segment) => void;
}

/** A row of `describeRow()`, as a jitter kind with its own rows computes it. @internal */
export interface RowBounds {
  readonly attempt: number;
  readonly delayMs: number;
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  readonly meanDelayMs: number;
}

/**
 * Checks a `jitter` option: a jitter value, or `fallback` when left out. The 0.x string and
 * object forms (`'full'`, `{ kind: 'proportional', factor }`) are refused with the import that
 * replaces them. @internal
 */
export function jitterOption(where: string, value: unknown, fallback: Jitter): Jitter {
  if (value === undefined) return fallback;
  const j = value as Jitter | null;
  // ebb's own values, from this copy of ebb or another: a draw, and bounds or rows to describe it.
  if (typeof j?.draw === 'function' && (j.span || j.row)) return j;
  if (!DEV) return mistyped(where, 'jitter', value, '');
  const kind = String(typeof value === 'object' ? (value as { kind?: unknown } | null)?.kind : value);
  const name = /^(equal|decorrelated|proportional|additive)$/.test(kind) ? kind : kind === 'none' ? 'no' : 'full';
  return mistyped(
    where,
    'jitter',
    value,
    'a jitter value',
    `Import it from 'ebb': jitter: ${name}Jitter${/^[pa]/.test(name) ? '(…)' : ''}.`,
  );
}
