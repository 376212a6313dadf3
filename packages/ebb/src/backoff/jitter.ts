import { checkKeys, inRange, invalid, nonNegative } from '../core/validate.js';

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

/** Validates a jitter option and returns it normalized (a frozen copy for the object forms). */
export function normalizeJitter(where: string, value: unknown): Jitter {
  if (value === undefined || value === 'none') return 'none';
  if (value === 'full' || value === 'equal' || value === 'decorrelated') return value;
  if (typeof value === 'object' && value !== null) {
    const kind = (value as { kind?: unknown }).kind;
    if (kind === 'proportional') {
      checkKeys(`${where} jitter`, value, ['kind', 'factor']);
      const factor = inRange(
        where,
        'jitter.factor',
        (value as { factor?: unknown }).factor,
        Number.NaN,
        0,
        1,
        'A factor of 0.5 spreads each delay over ±50 %.',
      );
      return Object.freeze({ kind, factor });
    }
    if (kind === 'additive') {
      checkKeys(`${where} jitter`, value, ['kind', 'maxMs']);
      const maxMs = nonNegative(where, 'jitter.maxMs', (value as { maxMs?: unknown }).maxMs, Number.NaN);
      return Object.freeze({ kind, maxMs });
    }
  }
  return invalid(
    where,
    'jitter',
    value,
    "'none', 'full', 'equal', 'decorrelated', { kind: 'proportional', factor } or { kind: 'additive', maxMs }",
    "Full jitter ('full') suits most clients.",
  );
}

/** Jitter as a short label, as the CLI writes it: `full`, `proportional:0.5`, `additive:1000ms`. */
export function jitterLabel(jitter: Jitter): string {
  if (typeof jitter === 'string') return jitter;
  return jitter.kind === 'proportional' ? `proportional:${jitter.factor}` : `additive:${jitter.maxMs}ms`;
}
