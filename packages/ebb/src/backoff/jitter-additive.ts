import { check, checkKeys, DURATION_MS } from '../core/validate.js';
import { draw } from './draw.js';
import type { JitterKind, Span } from './jitter.js';

type Additive = { readonly kind: 'additive'; readonly maxMs: number };

/**
 * `{ kind: 'additive', maxMs }`: `d + r·maxMs`, uniform in [d, d + maxMs], mean d + maxMs/2 —
 * Google Drive's "+ random_number_milliseconds".
 */
export const additiveJitter: JitterKind = {
  parse(where, value) {
    checkKeys(`${where} jitter`, value, ['kind', 'maxMs']);
    const maxMs = check(where, 'jitter.maxMs', (value as { maxMs?: unknown }).maxMs, DURATION_MS);
    return Object.freeze({ kind: 'additive', maxMs });
  },
  draw: (d, random, s) => d + draw(random) * (s.jitter as Additive).maxMs,
};

/** The bounds of {@link additiveJitter}'s draw, for `describeRow()`. */
export const additiveSpan: Span = (d, s) => [d, d + (s.jitter as Additive).maxMs];
