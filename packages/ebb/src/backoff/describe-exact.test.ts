import { describe, expect, it } from 'vitest';
import type { Backoff } from './backoff.js';
import { constant } from './constant.js';
import { describePolicy } from './describe.js';
import { exponential } from './exponential.js';
import { noJitter } from './jitter-none.js';
import { linear } from './linear.js';
import { SEGMENTS } from './segment.js';
import { sequence } from './sequence.js';
import { capped, run } from './test-helpers.js';

// Exact specifications of describe.ts written against the survivors of a mutation run
// (docs/dev/mutation-backoff.md).

describe('describePolicy() agrees with the run bit for bit', () => {
  it("an un-jittered row's minDelayMs and maxDelayMs are its wait, −0 options included", () => {
    // Every combination of hostile and ordinary values: −0 and 0 (whose signs the caps and
    // clamps must treat as the run does), a saturating 1e308, MAX_SAFE_INTEGER, small numbers.
    const values = [-0, 0, 0.5, 3, 1e308, Number.MAX_SAFE_INTEGER];
    const limits = [undefined, -0, 0, 2, 1e6, Number.POSITIVE_INFINITY];
    const curves: ((d: number, o: object) => Backoff)[] = [
      (d, o) => constant({ delayMs: d, ...o }),
      (d, o) => linear({ initialDelayMs: d, incrementMs: 1, ...o }),
      (d, o) => exponential({ initialDelayMs: d, multiplier: 2, ...o }),
      (d, o) => sequence({ delaysMs: [d, 1], ...o }),
    ];
    let checked = 0;
    for (const curve of curves) {
      for (const d of values) {
        for (const maxIntervalMs of limits) {
          for (const maxDelayMs of limits) {
            const b = capped((limits) => curve(d, { ...limits, jitter: noJitter }), { maxIntervalMs, maxDelayMs });
            const waits = run(b, 3);
            const rows = describePolicy(b, 3).rows;
            for (const [i, row] of rows.entries()) {
              // toBe is Object.is: +0 and −0 differ.
              expect(row.minDelayMs, `${i + 1} of ${JSON.stringify(b[SEGMENTS])}`).toBe(waits[i]);
              expect(row.maxDelayMs, `${i + 1} of ${JSON.stringify(b[SEGMENTS])}`).toBe(waits[i]);
              checked++;
            }
          }
        }
      }
    }
    expect(checked).toBe(4 * 6 * 6 * 6 * 3);
  });
});
