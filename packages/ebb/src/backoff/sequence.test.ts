import { describe, expect, it } from 'vitest';
import { SEGMENTS } from './segment.js';
import { sequence } from './sequence.js';
import { delays } from './test-helpers.js';

describe('sequence', () => {
  it('reads the table and repeats its last entry', () => {
    expect(delays(sequence({ delaysMs: [0, 1_000, 5_000], maxAttempts: 6 }), 5)).toEqual([
      0, 1_000, 5_000, 5_000, 5_000,
    ]);
  });

  it('keeps its own copy of the table', () => {
    const table = [1, 2];
    const b = sequence({ delaysMs: table });
    table[0] = 99;
    expect(delays(b, 2)).toEqual([1, 2]);
  });

  it('rejects empty tables and bad entries, naming the index', () => {
    expect(() => sequence({ delaysMs: [] })).toThrow(/`delaysMs` to be a non-empty array/);
    expect(() => sequence({ delaysMs: [1, -2] })).toThrow(/`delaysMs\[1\]`.*got -2/);
    expect(() => sequence({} as { delaysMs: number[] })).toThrow(TypeError);
  });

  it('names the function, the option, the value and the fix in each message', () => {
    const fix = 'For example [100, 500, 2000].';
    expect(() => sequence({ delaysMs: [] })).toThrow(
      new TypeError(`sequence(): expected \`delaysMs\` to be a non-empty array of delays in ms, got an array. ${fix}`),
    );
    expect(() => sequence({ delaysMs: 'ab' } as never)).toThrow(
      new TypeError(`sequence(): expected \`delaysMs\` to be a non-empty array of delays in ms, got "ab". ${fix}`),
    );
    expect(() => sequence({ delaysMs: [1, -2] })).toThrow(
      new RangeError(
        'sequence(): expected `delaysMs[1]` to be a finite number >= 0, got -2. Durations are milliseconds, such as 500.',
      ),
    );
    expect(() => sequence({ delaysMs: [1, undefined as never] })).toThrow(
      new TypeError(
        'sequence(): expected `delaysMs[1]` to be a finite number >= 0, got undefined. Durations are milliseconds, such as 500.',
      ),
    );
    expect(() => sequence({ delaysMs: [1], delays: 2 } as never)).toThrow(
      new TypeError(
        'sequence(): unknown option `delays`. Did you mean `delaysMs`? Known options: delaysMs, jitter, ceiling, maxIntervalMs, maxDelayMs, maxAttempts, maxElapsedMs.',
      ),
    );
  });

  it('accepts a one-entry table and freezes its copy', () => {
    const b = sequence({ delaysMs: [7] });
    expect(delays(b, 3)).toEqual([7, 7, 7]);
    const curve = b[SEGMENTS][0]?.curve;
    expect(curve).toEqual({ type: 'sequence', delaysMs: [7] });
    expect(Object.isFrozen(curve?.type === 'sequence' ? curve.delaysMs : undefined)).toBe(true);
  });
});
