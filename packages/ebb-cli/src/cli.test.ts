import { describe, expect, it } from 'vitest';
import { flagMessage } from './cli.js';

describe('flagMessage', () => {
  it('names the flag the user typed instead of the library option', () => {
    expect(flagMessage('exponential(): expected `multiplier` to be a finite number >= 1, got 0.5. Use 1.')).toBe(
      '--multiplier must be a finite number >= 1, got 0.5. Use 1.',
    );
    expect(
      flagMessage('withMaxAttempts(): expected `maxAttempts` to be a whole number >= 1 (or Infinity), got 0. x'),
    ).toBe('--max-attempts must be a whole number >= 1 (or Infinity), got 0. x');
    expect(flagMessage('something else')).toBe('something else');
  });
});
