import { check, checkKeys, type Rule } from '../core/validate.js';
import { draw } from './draw.js';
import type { JitterKind, Span } from './jitter.js';

const FACTOR: Rule = { max: 1, fix: 'A factor of 0.5 spreads each delay over ±50 %.' };

type Proportional = { readonly kind: 'proportional'; readonly factor: number };

/**
 * `{ kind: 'proportional', factor }`: `d·(1 − f + 2·f·r)`, uniform in [d(1−f), d(1+f)], mean d —
 * the Google HTTP client's randomization factor, gRPC's ±20 %.
 */
export const proportionalJitter: JitterKind = {
  parse(where, value) {
    checkKeys(`${where} jitter`, value, ['kind', 'factor']);
    const factor = check(where, 'jitter.factor', (value as { factor?: unknown }).factor, FACTOR);
    return Object.freeze({ kind: 'proportional', factor });
  },
  draw(d, random, s) {
    const f = (s.jitter as Proportional).factor;
    return d * (1 - f + 2 * f * draw(random));
  },
};

/** The bounds of {@link proportionalJitter}'s draw, for `describeRow()`. */
export const proportionalSpan: Span = (d, s) => {
  const f = (s.jitter as Proportional).factor;
  return [d * (1 - f), d * (1 + f)];
};
