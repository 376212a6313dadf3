import { expect, it, describe as suite } from 'vitest';
import { linear } from './linear.js';
import { delays } from './test-helpers.js';

suite('linear', () => {
  it('adds incrementMs per failure, defaulting to initialDelayMs', () => {
    expect(delays(linear(), 4)).toEqual([100, 200, 300, 400]);
    expect(delays(linear({ initialDelayMs: 100, incrementMs: 50 }), 4)).toEqual([100, 150, 200, 250]);
    expect(delays(linear({ initialDelayMs: 0, incrementMs: 10 }), 3)).toEqual([0, 10, 20]);
  });

  it('takes the shared limits', () => {
    expect(delays(linear({ initialDelayMs: 100, ceiling: 2, maxDelayMs: 150 }), 4)).toEqual([100, 150, 150, 150]);
  });

  it('rejects bad options', () => {
    expect(() => linear({ incrementMs: -1 })).toThrow(/`incrementMs`/);
    expect(() => linear({ increment: 1 } as object)).toThrow(/Did you mean `incrementMs`/);
  });
});
