import { describe, expect, it } from 'vitest';
import { linear } from './linear.js';
import { SEGMENTS } from './segment.js';
import { delays } from './test-helpers.js';

describe('linear', () => {
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

  it('defaults incrementMs to the initial delay given, not to 100', () => {
    expect(delays(linear({ initialDelayMs: 30 }), 3)).toEqual([30, 60, 90]);
    expect(delays(linear({ incrementMs: 5 }), 3)).toEqual([100, 105, 110]);
    expect(linear({ initialDelayMs: 30 })[SEGMENTS][0]?.curve).toEqual({
      type: 'linear',
      initialDelayMs: 30,
      incrementMs: 30,
    });
  });

  it('names the function, the option, the value and the fix in each message', () => {
    expect(() => linear({ initialDelayMs: -1 })).toThrow(
      new RangeError(
        'linear(): expected `initialDelayMs` to be a finite number >= 0, got -1. Durations are milliseconds, such as 500.',
      ),
    );
    expect(() => linear({ incrementMs: Infinity })).toThrow(
      new RangeError(
        'linear(): expected `incrementMs` to be a finite number >= 0, got Infinity. Durations are milliseconds, such as 500.',
      ),
    );
    expect(() => linear({ increment: 1 } as object)).toThrow(
      new TypeError(
        'linear(): unknown option `increment`. Did you mean `incrementMs`? Known options: initialDelayMs, incrementMs, jitter, ceiling, maxIntervalMs, maxDelayMs, maxAttempts, maxElapsedMs.',
      ),
    );
    expect(() => linear(7 as never)).toThrow(
      new TypeError(
        'linear(): expected an options object, got 7. Pass an options object: linear({ initialDelayMs: … }).',
      ),
    );
  });
});
