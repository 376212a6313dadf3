import { DEV } from '../core/dev.js';
import { formatMs } from '../core/format-ms.js';
import { check, DURATION_MS, mistyped } from '../core/validate.js';
import { type Backoff, fromCurve, type LimitOptions } from './backoff.js';
import { type CurveMaths, makeCurve } from './segment.js';

const SEQUENCE: CurveMaths = {
  at(this: { readonly delaysMs: readonly number[] }, n) {
    const d = this.delaysMs;
    return d[(n < d.length ? n : d.length) - 1] as number;
  },
  toString(this: { readonly delaysMs: readonly number[] }) {
    return `sequence ${this.delaysMs.map(formatMs).join(' ')}`;
  },
};

/** The table curve: row `n` is `delaysMs[n−1]`, the last repeating (values already checked, frozen). @internal */
export function sequenceCurve(delaysMs: readonly number[]) {
  return makeCurve(SEQUENCE, { type: 'sequence' as const, delaysMs });
}

/** Options of {@link sequence}. */
export interface SequenceOptions extends LimitOptions {
  /** The un-randomized waits after failures 1, 2, …; the last one repeats. */
  readonly delaysMs: readonly number[];
}

/**
 * An explicit table of waits: row `n` is `delaysMs[n−1]`, and the last entry repeats. For
 * schedules that are written down rather than computed (an SLA's retry table, the integer
 * intervals of Google's client), with the usual jitter and limits on top: by default full
 * jitter, no cap and 5 attempts in all (none by default when you set a finite `maxElapsedMs`).
 * Give `jitter: noJitter` to wait exactly the table's values.
 *
 * @example
 * sequence({ delaysMs: [0, 1_000, 5_000, 30_000], jitter: noJitter }) // 5 attempts, 4 waits
 */
export function sequence(options: SequenceOptions): Backoff {
  const where = 'sequence()';
  return fromCurve(where, options, ['delaysMs', 'jitter'], (o) => {
    const raw = o.delaysMs;
    if (!Array.isArray(raw) || raw.length === 0) {
      mistyped(
        where,
        'delaysMs',
        raw,
        DEV ? 'a non-empty array of delays in ms' : '',
        DEV ? 'For example [100, 500, 2000].' : '',
      );
    }
    return sequenceCurve(Object.freeze(raw.map((d, i) => check(where, `delaysMs[${i}]`, d, DURATION_MS))));
  });
}
