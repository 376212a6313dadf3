import { describe, expect, it } from 'vitest';
import { flagMessage } from './cli.js';

describe('flagMessage', () => {
  it('names the flag the user typed instead of the library option', () => {
    expect(flagMessage('exponential(): expected `multiplier` to be a finite number >= 1, got 0.5. Use 1.')).toBe(
      '--multiplier must be a finite number >= 1, got 0.5. Use 1.',
    );
    expect(flagMessage('withOptions(): expected `maxAttempts` to be a whole number >= 1 (or Infinity), got 0. x')).toBe(
      '--max-attempts must be a whole number >= 1 (or Infinity), got 0. x',
    );
    expect(flagMessage('proportionalJitter(): expected `factor` to be a number from 0 to 1, got 2. x')).toBe(
      '--jitter proportional:FACTOR must be a number from 0 to 1, got 2. x',
    );
    expect(
      flagMessage(
        'constant(): `maxIntervalMs` (10 ms) is below the first wait (1 s), so every wait would be 10 ms. Raise it, or lower the first wait; constant({ delayMs: 0 }) retries without waiting.',
      ),
    ).toBe(
      '--max-interval (10 ms) is below the first wait (1 s), so every wait would be 10 ms. Raise it, or lower the first wait (--initial, --delay).',
    );
    // A wait with a decimal point is quoted whole, not cut at its point.
    expect(
      flagMessage(
        'exponential(): `maxDelayMs` (1.5 s) is below the first wait (2 s), so every wait would be 1.5 s. Raise it, or lower the first wait; constant({ delayMs: 0 }) retries without waiting.',
      ),
    ).toBe(
      '--max-delay (1.5 s) is below the first wait (2 s), so every wait would be 1.5 s. Raise it, or lower the first wait (--initial, --delay).',
    );
    expect(flagMessage('something else')).toBe('something else');
  });
});
