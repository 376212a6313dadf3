import { expect, it, describe as suite } from 'vitest';
import { sequence } from './sequence.js';
import { delays } from './test-helpers.js';

suite('sequence', () => {
  it('reads the table and repeats its last entry', () => {
    expect(delays(sequence({ delaysMs: [0, 1_000, 5_000] }), 5)).toEqual([0, 1_000, 5_000, 5_000, 5_000]);
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
});
