import { expect, it, describe as suite } from 'vitest';
import { constant } from './constant.js';
import { delays, run } from './test-helpers.js';

suite('constant', () => {
  it('waits delayMs after every failure (default 100)', () => {
    expect(delays(constant(), 3)).toEqual([100, 100, 100]);
    expect(delays(constant({ delayMs: 0 }), 2)).toEqual([0, 0]);
    expect(run(constant({ delayMs: 1_000, jitter: { kind: 'proportional', factor: 0.2 } }), 2, 0)).toEqual([800, 800]);
  });

  it('rejects bad options', () => {
    expect(() => constant({ delayMs: Infinity })).toThrow(/`delayMs` to be a finite number >= 0, got Infinity/);
  });
});
