import { describe, expect, it } from 'vitest';
import { seeded } from '../core/random.js';
import { findPreset } from './catalog.js';
import { defaultBackoff, defaultSummary } from './default.js';
import { describePolicy, describeRow, type ScheduleRow } from './describe.js';
import { exponential } from './exponential.js';
import { SEGMENTS } from './segment.js';

describe('the default policy is described from its values, in one place', () => {
  it('the summary says what the policy does: first wait, growth, cap, jitter and attempts read from its schedule', () => {
    const [first, second] = describePolicy(defaultBackoff, 2).rows as unknown as [ScheduleRow, ScheduleRow];
    const cap = describeRow(defaultBackoff, 1_000).delayMs;
    const jitter = first.minDelayMs === 0 && first.maxDelayMs === first.delayMs ? 'full' : 'other';
    expect(defaultSummary()).toBe(
      `${first.delayMs} ms ×${second.delayMs / first.delayMs}, ${cap / 1000} s cap, ${jitter} jitter, ${defaultBackoff.maxAttempts} attempts`,
    );
  });

  it("the catalog's title for `default` is that summary", () => {
    expect(findPreset('default')?.title).toBe(`ebb's default: ${defaultSummary()}`);
    expect(findPreset('default')?.backoff).toBe(defaultBackoff);
  });
});

describe('defaultBackoff, built without the option checks, is exponential() with no options', () => {
  it('the same segment, limits, printed forms and draws; immutable like any policy', () => {
    const b = exponential();
    // Field by field, curve and jitter included: a value drifting from exponential()'s defaults shows here.
    expect(defaultBackoff[SEGMENTS]).toEqual(b[SEGMENTS]);
    expect(Object.getPrototypeOf(defaultBackoff[SEGMENTS][0]?.curve)).toBe(
      Object.getPrototypeOf(b[SEGMENTS][0]?.curve),
    );
    expect(defaultBackoff[SEGMENTS][0]?.jitter).toBe(b[SEGMENTS][0]?.jitter);
    expect([defaultBackoff.maxAttempts, defaultBackoff.maxElapsedMs]).toEqual([b.maxAttempts, b.maxElapsedMs]);
    expect(String(defaultBackoff)).toBe(String(b));
    expect(defaultBackoff.toJSON()).toEqual(b.toJSON());
    const draws = (p: typeof b) => {
      const run = p.start(seeded(7));
      return Array.from({ length: 6 }, () => run.next());
    };
    expect(draws(defaultBackoff)).toEqual(draws(b));
    for (const frozen of [defaultBackoff, defaultBackoff[SEGMENTS], defaultBackoff[SEGMENTS][0]]) {
      expect(Object.isFrozen(frozen)).toBe(true);
    }
  });
});
