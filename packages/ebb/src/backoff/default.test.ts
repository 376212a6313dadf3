import { describe, expect, it } from 'vitest';
import { findPreset } from './catalog.js';
import { defaultBackoff, defaultSummary } from './default.js';
import { describePolicy, describeRow, type ScheduleRow } from './describe.js';

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
