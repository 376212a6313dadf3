import { describe, expect, it } from 'vitest';
import { formatDuration, MAX_TIMER_MS, parseDuration, parseNumber, positiveDuration, timerMs } from './duration.js';

describe('parseDuration', () => {
  it('reads every unit into milliseconds', () => {
    expect(parseDuration('--x', '500ms')).toBe(500);
    expect(parseDuration('--x', '1.5s')).toBe(1_500);
    expect(parseDuration('--x', '2m')).toBe(120_000);
    expect(parseDuration('--x', '2min')).toBe(120_000);
    expect(parseDuration('--x', '1h')).toBe(3_600_000);
    expect(parseDuration('--x', '51.2us')).toBeCloseTo(0.0512, 12);
    expect(parseDuration('--x', '9µs')).toBeCloseTo(0.009, 12);
    expect(parseDuration('--x', '0')).toBe(0);
    expect(parseDuration('--x', '1e3ms')).toBe(1_000);
  });

  it('refuses a number without a unit, with a hint', () => {
    expect(() => parseDuration('--initial', '100')).toThrow('--initial needs a unit: did you mean 100ms?');
    expect(() => parseDuration('--delay', '2.5')).toThrow('--delay needs a unit: did you mean 2.5ms?');
  });

  it('admits Infinity only where asked', () => {
    expect(parseDuration('--max-elapsed', 'Infinity', true)).toBe(Infinity);
    expect(() => parseDuration('--initial', 'Infinity')).toThrow(/--initial expects a duration/);
  });

  it('rejects anything else with one line naming the flag', () => {
    for (const bad of ['', '5x', '-5ms', 'ms', '1.2.3s', 'NaN']) {
      expect(() => parseDuration('--initial', bad)).toThrow(
        `--initial expects a duration such as 500ms, 1.5s, 2m or 51.2us, got "${bad}"`,
      );
    }
  });
});

describe('positiveDuration', () => {
  it('reads a duration longer than 0, and refuses 0 with the value typed and one to use', () => {
    expect(positiveDuration('--service', '1us', '10ms')).toBeCloseTo(0.001, 12);
    expect(positiveDuration('--service', '2s', '10ms')).toBe(2_000);
    for (const zero of ['0', '0ms', '0.0s', '1e-400ms']) {
      expect(() => positiveDuration('--service', zero, '10ms')).toThrow(
        `--service must be longer than 0, got "${zero}": such as 10ms`,
      );
    }
    expect(() => positiveDuration('--service', 'soon', '10ms')).toThrow(/^--service expects a duration/);
  });
});

describe('timerMs', () => {
  it('reads a duration up to the longest timer Node.js keeps, 2^31 − 1 ms', () => {
    expect(MAX_TIMER_MS).toBe(2 ** 31 - 1);
    expect(timerMs('--kill-after', '1.5s')).toBe(1_500);
    expect(timerMs('--kill-after', '596h')).toBe(2_145_600_000);
    expect(timerMs('--kill-after', '2147483647ms')).toBe(MAX_TIMER_MS);
  });

  it('refuses a longer one, naming the flag and the value as typed', () => {
    expect(() => timerMs('--kill-after', '2147483648ms')).toThrow(
      '--kill-after must be at most 596h (2147483647 ms, the longest timer Node.js keeps), got "2147483648ms"',
    );
    expect(() => timerMs('--attempt-timeout', '597h')).toThrow(
      '--attempt-timeout must be at most 596h (2147483647 ms, the longest timer Node.js keeps), got "597h"',
    );
  });

  it('refuses what parseDuration refuses, with its message', () => {
    expect(() => timerMs('--attempt-timeout', 'soon')).toThrow(/^--attempt-timeout expects a duration/);
    expect(() => timerMs('--attempt-timeout', 'Infinity')).toThrow(/^--attempt-timeout expects a duration/);
  });
});

describe('parseNumber', () => {
  it('reads plain numbers and refuses the rest', () => {
    expect(parseNumber('--multiplier', '1.5')).toBe(1.5);
    expect(parseNumber('--multiplier', '-2')).toBe(-2);
    expect(parseNumber('--max-attempts', 'inf', true)).toBe(Infinity);
    expect(() => parseNumber('--multiplier', 'two')).toThrow(/--multiplier expects a number, got "two"/);
    expect(() => parseNumber('--multiplier', '')).toThrow(/--multiplier/);
  });
});

describe('formatDuration', () => {
  it('picks a readable unit', () => {
    expect(formatDuration(0)).toBe('0 ms');
    expect(formatDuration(0.0512)).toBe('51.2 µs');
    expect(formatDuration(843.5)).toBe('843.5 ms');
    expect(formatDuration(1_687)).toBe('1.687 s');
    expect(formatDuration(150_000)).toBe('2.5 min');
    expect(formatDuration(5_400_000)).toBe('1.5 h');
    expect(formatDuration(Number.MAX_SAFE_INTEGER)).toMatch(/years$/);
  });
});
