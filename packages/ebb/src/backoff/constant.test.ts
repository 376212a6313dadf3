import { describe, expect, it } from 'vitest';
import { constant } from './constant.js';
import { proportionalJitter } from './jitter-proportional.js';
import { SEGMENTS } from './segment.js';
import { delays, run } from './test-helpers.js';

describe('constant', () => {
  it('waits delayMs after every failure (default 100)', () => {
    expect(delays(constant(), 3)).toEqual([100, 100, 100]);
    expect(delays(constant({ delayMs: 0 }), 2)).toEqual([0, 0]);
    expect(run(constant({ delayMs: 1_000, jitter: proportionalJitter(0.2) }), 2, 0)).toEqual([800, 800]);
  });

  it('rejects bad options', () => {
    expect(() => constant({ delayMs: Infinity })).toThrow(/`delayMs` to be a finite number >= 0, got Infinity/);
  });

  it('names the function, the option, the value and the fix in each message', () => {
    expect(() => constant({ delayMs: -1 })).toThrow(
      new RangeError(
        'constant(): expected `delayMs` to be a finite number >= 0, got -1. Durations are milliseconds, such as 500.',
      ),
    );
    expect(() => constant({ delay: 1 } as object)).toThrow(
      new TypeError(
        'constant(): unknown option `delay`. Did you mean `delayMs`? Known options: delayMs, jitter, ceiling, maxIntervalMs, maxDelayMs, maxAttempts, maxElapsedMs.',
      ),
    );
    expect(constant({ delayMs: 7 })[SEGMENTS][0]?.curve).toEqual({ type: 'constant', delayMs: 7 });
  });
});
