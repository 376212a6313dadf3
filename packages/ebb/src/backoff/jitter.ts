import type { Random } from '../core/random.js';
import { invalid } from '../core/validate.js';
import { decorrelatedJitter } from './decorrelated.js';
import { additiveJitter } from './jitter-additive.js';
import { equalJitter } from './jitter-equal.js';
import { fullJitter } from './jitter-full.js';
import { noJitter } from './jitter-none.js';
import { proportionalJitter } from './jitter-proportional.js';
import type { Segment } from './segment.js';

/**
 * How a delay is randomized. With `d` the un-randomized delay of a row (after any cap) and `r`
 * a draw from `Random` in [0, 1):
 *
 * | kind | delay | source |
 * |---|---|---|
 * | `'none'` | `d` | |
 * | `'full'` | `r·d`, in [0, d) | AWS Architecture Blog, "Exponential Backoff and Jitter" (Brooker, 2015) |
 * | `'equal'` | `d/2 + r·d/2`, in [d/2, d) | same |
 * | `'decorrelated'` | `min(cap, U[initial, previous·multiplier])` | same; exponential curves only |
 * | `{ kind: 'proportional', factor }` | `d·(1 − factor + 2·factor·r)`, in [d(1−f), d(1+f)] | Google HTTP client's randomization factor, gRPC's ±20 % |
 * | `{ kind: 'additive', maxMs }` | `d + r·maxMs`, in [d, d + maxMs] | Google Drive's "+ random_number_milliseconds" |
 *
 * Full jitter is the usual choice for clients that retry against a shared service: it spreads
 * retries the most and does the least work (Brooker's simulation, reproduced by `ebb simulate
 * contention`). Proportional and additive jitter can push a delay above the curve's cap;
 * `maxDelayMs` clamps the final delay, `maxIntervalMs` only the un-randomized one.
 */
export type Jitter =
  | 'none'
  | 'full'
  | 'equal'
  | 'decorrelated'
  | { readonly kind: 'proportional'; readonly factor: number }
  | { readonly kind: 'additive'; readonly maxMs: number };

/**
 * One kind of jitter, in one module (`jitter-full.ts`, …, `decorrelated.ts`): how it is written,
 * checked and drawn; the same module exports its bounds (a {@link Span}) for `describeRow()`, as
 * a separate value so that a program that never describes a policy does not carry them. A new
 * kind is a new module, one entry in {@link KINDS}, its written form in {@link FORMS} and its
 * span in `describe.ts`'s `SPANS` (tests check that the three list the same kinds). @internal
 */
export interface JitterKind {
  /** Object forms only: checks the fields and returns the jitter, frozen. String forms have none. */
  parse?(where: string, value: object): Jitter;
  /**
   * The wait of row `k` before the final clamp (`maxDelayMs`): `d` is the row's un-randomized
   * delay after caps, `previous` the segment's last wait (for kinds marked `chained`).
   */
  draw(d: number, random: Random, s: Segment, k: number, previous: number): number;
  /** Each draw depends on the previous one: the run keeps it. */
  readonly chained?: boolean;
  /** Refuses a segment this kind cannot honour (decorrelated: other curves, caps before jitter). */
  check?(where: string, s: Segment): void;
}

/**
 * The bounds of a kind's draw: it is uniform on [low, high] (a point when they are equal), so
 * `describeRow()` takes the row's minimum, maximum and mean from them, under the clamp.
 * Decorrelated jitter has none: its rows are a Markov chain (`decorrelated.ts` computes them). @internal
 */
export type Span = (d: number, s: Segment) => readonly [low: number, high: number];

/** Every kind by the name the option uses (`'full'`, or the object form's `kind`), in documentation order. */
export const KINDS: Readonly<Record<string, JitterKind>> = {
  none: noJitter,
  full: fullJitter,
  equal: equalJitter,
  decorrelated: decorrelatedJitter,
  proportional: proportionalJitter,
  additive: additiveJitter,
};

/**
 * How each kind is written, in the order of {@link KINDS}, for the message that refuses a bad
 * `jitter` (a literal: building it from the kinds would put these strings in every bundle twice
 * over). @internal
 */
export const FORMS =
  "'none', 'full', 'equal', 'decorrelated', { kind: 'proportional', factor } or { kind: 'additive', maxMs }";

/** The kind of a (normalized) jitter. @internal */
export function jitterKind(jitter: Jitter): JitterKind {
  return KINDS[jitterName(jitter)] as JitterKind;
}

/** The name of a (normalized) jitter's kind: `'full'`, `'proportional'`. @internal */
export function jitterName(jitter: Jitter): string {
  return typeof jitter === 'string' ? jitter : jitter.kind;
}

/** Validates a jitter option and returns it normalized (a frozen copy for the object forms). @internal */
export function normalizeJitter(where: string, value: unknown): Jitter {
  if (value === undefined) return 'none';
  const isObject = typeof value === 'object' && value !== null;
  const name = isObject ? (value as { kind?: unknown }).kind : value;
  const kind = typeof name === 'string' && Object.hasOwn(KINDS, name) ? KINDS[name] : undefined;
  if (kind?.parse && isObject) return kind.parse(where, value);
  if (kind && !kind.parse && !isObject) return name as Jitter;
  return invalid(where, 'jitter', value, FORMS, "Full jitter ('full') suits most clients.");
}

/**
 * Jitter as a short label, as the CLI writes it: `full`, `proportional:0.5`, `additive:1000ms` —
 * an object form's kind and its one parameter (with `ms` when the parameter is a duration). @internal
 */
export function jitterLabel(jitter: Jitter): string {
  if (typeof jitter === 'string') return jitter;
  const [name, value] = Object.entries(jitter)[1] as [string, number];
  return `${jitter.kind}:${value}${name.endsWith('Ms') ? 'ms' : ''}`;
}
