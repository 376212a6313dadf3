/**
 * The internal representation of a policy, and the arithmetic every row shares. Nothing here is
 * exported from the package: a `Backoff` is read through its public fields, `describePolicy()`,
 * `describeRow()`, `sample()` and its printed forms (`toString()`, `toJSON()`).
 *
 * A policy is a list of segments. A segment is a curve (the un-randomized delay of each row, its
 * maths and its printed name owned by the curve's module: `exponential.ts`, `constant.ts`,
 * `linear.ts`, `sequence.ts`, `slotted.ts`), a jitter value (its draw and bounds owned by its
 * module: `jitter-*.ts`, `decorrelated.ts`) and its caps. A bundler keeps only the curve modules
 * and jitter values a program imports.
 */
import type { Random } from '../core/random.js';
import type { Jitter } from './jitter.js';

/**
 * Delays saturate here: `Number.MAX_SAFE_INTEGER` ms, about 285,000 years. Growth that would
 * overflow (`2 ** 1024 === Infinity`, and `0 * Infinity === NaN`) stops at this value instead,
 * so every delay ebb computes is a finite number, whatever the attempt number.
 */
export const MAX_DELAY_MS: number = Number.MAX_SAFE_INTEGER;

/**
 * The key of a `Backoff`'s segments. The package does not export it, so the representation is
 * not part of the public shape of a `Backoff` (only `maxAttempts`, `maxElapsedMs`, `start()` and
 * the printed forms are); `describePolicy()`, `describeRow()` and `sample()` are the public ways
 * to read a policy. @internal
 */
export const SEGMENTS: unique symbol = Symbol();

/** What a curve's module gives its curve values (their prototype): the maths of one row, and its name. @internal */
export interface CurveMaths {
  /** The un-randomized delay of row `n` (ceiling already applied), before caps; `cap` is the segment's. */
  at(n: number, cap: number): number;
  /** The curve as a policy's description starts: `exponential 100 ms ×2`, `constant 1 s`. */
  toString(): string;
  /** Refuses a segment this curve cannot honour (slotted: any jitter but its own slot draw). */
  check?(where: string, s: Segment): void;
}

/** The un-randomized shape of a policy: the delay of row `n` before jitter and caps. @internal */
export type Curve = CurveMaths &
  (
    | { readonly type: 'constant'; readonly delayMs: number }
    | { readonly type: 'linear'; readonly initialDelayMs: number; readonly incrementMs: number }
    | { readonly type: 'exponential'; readonly initialDelayMs: number; readonly multiplier: number }
    | { readonly type: 'slotted'; readonly slotMs: number; readonly cwMin: number; readonly cwMax: number }
    | { readonly type: 'sequence'; readonly delaysMs: readonly number[] }
  );

/** A curve value: `data` (frozen) on top of its module's maths. @internal */
export function makeCurve<T extends object>(maths: CurveMaths, data: T): CurveMaths & T {
  return Object.freeze(Object.assign(Object.create(maths) as CurveMaths, data));
}

/**
 * One stretch of a policy: a curve, its jitter and caps, serving `rows` rows (the waits after
 * that many failed attempts) before the next segment takes over. Most policies are one
 * segment; `chain()` makes more. @internal
 */
export interface Segment {
  readonly curve: Curve;
  /** The jitter value; for a slotted curve, its own slot draw. */
  readonly jitter: Jitter;
  /** Rows after this one repeat it: the failure count is truncated at `ceiling`. */
  readonly ceiling: number;
  /** Caps the un-randomized delay; jitter may go above it (Google's and gRPC's rule). */
  readonly maxIntervalMs: number;
  /** Caps the un-randomized delay and clamps the final one: no wait is longer. */
  readonly maxDelayMs: number;
  /** How many rows this segment serves; `Infinity` for the last. */
  readonly rows: number;
}

/** The effective cap of a segment's un-randomized delay. @internal */
export function capOf(s: Segment): number {
  return Math.min(s.maxIntervalMs, s.maxDelayMs, MAX_DELAY_MS);
}

/** The un-randomized delay of row `k` of a segment (ceiling applied, before caps). @internal */
export function nominal(s: Segment, k: number): number {
  return s.curve.at(Math.min(k, s.ceiling), capOf(s));
}

/** The un-randomized delay of row `k`, capped. Never NaN, never Infinity. @internal */
export function capped(s: Segment, k: number): number {
  const cap = capOf(s);
  const d = s.curve.at(Math.min(k, s.ceiling), cap);
  return d < cap ? d : cap;
}

/** The clamp on a segment's final delay. @internal */
export function clampOf(s: Segment): number {
  return Math.min(s.maxDelayMs, MAX_DELAY_MS);
}

/**
 * Draws the wait of row `k` of segment `s` under its clamp. `previous` is the last wait of this
 * segment (for decorrelated jitter; ignored by the others and on row 1). Finite and non-negative
 * for every `k` up to `Number.MAX_SAFE_INTEGER` and every `random` in [0, 1). @internal
 */
export function drawDelay(s: Segment, k: number, random: Random, previous: number): number {
  // capped() and clampOf(), written out: every bundle with a policy runs this, and only
  // describeRow() needs those two on their own.
  const clamp = Math.min(s.maxDelayMs, MAX_DELAY_MS);
  const cap = Math.min(s.maxIntervalMs, clamp);
  const c = s.curve.at(Math.min(k, s.ceiling), cap);
  const d = s.jitter.draw(c < cap ? c : cap, random, s, k, previous);
  return d < clamp ? d : clamp;
}

/** Where global row `n` falls: the segment and the row within it. @internal */
export function locate(b: { readonly [SEGMENTS]: readonly Segment[] }, n: number): [segment: Segment, row: number] {
  let k = n;
  for (const s of b[SEGMENTS]) {
    if (k <= s.rows) return [s, k];
    k -= s.rows;
  }
  // Unreachable through the public API: the last segment serves Infinity rows.
  throw new RangeError(`row ${n} is past the end of the policy`);
}
