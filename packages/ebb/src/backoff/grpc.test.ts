import { expect, it, describe as suite } from 'vitest';
import { describe } from './describe.js';
import { grpcRetryPolicy } from './grpc.js';
import { always, NEXT_BELOW_ONE } from './test-helpers.js';

const a6 = { maxAttempts: 4, initialBackoffMs: 100, maxBackoffMs: 1_000, backoffMultiplier: 2 };

suite('grpcRetryPolicy follows gRFC A6', () => {
  it('waits random(0, min(initial · multiplier^(n−1), max)): the A6 example, .1s doubling to 1s, 4 attempts', () => {
    const s = describe(grpcRetryPolicy(a6), 10);
    expect(s.rows.map((r) => [r.minDelayMs, r.maxDelayMs])).toEqual([
      [0, 100],
      [0, 200],
      [0, 400],
    ]);
    expect(s.stopsAfterAttempt).toBe(4);
    const run = grpcRetryPolicy({ ...a6, maxAttempts: 5, backoffMultiplier: 4 }).start(always(NEXT_BELOW_ONE));
    expect([run.next(), run.next(), run.next(), run.next(), run.next()]).toEqual([
      100 * NEXT_BELOW_ONE,
      400 * NEXT_BELOW_ONE,
      1_000 * NEXT_BELOW_ONE,
      1_000 * NEXT_BELOW_ONE,
      -1,
    ]);
  });

  it('treats maxAttempts above the client limit (5 by default) as the limit', () => {
    expect(grpcRetryPolicy({ ...a6, maxAttempts: 5 }).maxAttempts).toBe(5);
    expect(grpcRetryPolicy({ ...a6, maxAttempts: 6 }).maxAttempts).toBe(5);
    expect(grpcRetryPolicy({ ...a6, maxAttempts: 1_000 }).maxAttempts).toBe(5);
    expect(grpcRetryPolicy({ ...a6, maxAttempts: 9, maxAttemptsLimit: 7 }).maxAttempts).toBe(7);
  });

  it('allows a multiplier below 1, as A6 does (> 0): waits shrink', () => {
    const s = describe(grpcRetryPolicy({ ...a6, backoffMultiplier: 0.5 }), 3);
    expect(s.rows.map((r) => r.maxDelayMs)).toEqual([100, 50, 25]);
  });

  it('refuses what A6 refuses, naming the option', () => {
    const bad: [object, RegExp, ErrorConstructor][] = [
      [{ ...a6, maxAttempts: 1 }, /`maxAttempts`.*>= 2/, RangeError],
      [{ ...a6, maxAttempts: 2.5 }, /`maxAttempts`/, RangeError],
      [{ ...a6, maxAttempts: undefined }, /`maxAttempts`/, TypeError],
      [{ ...a6, initialBackoffMs: 0 }, /`initialBackoffMs`.*> 0/, RangeError],
      [{ ...a6, maxBackoffMs: -1 }, /`maxBackoffMs`/, RangeError],
      [{ ...a6, backoffMultiplier: 0 }, /`backoffMultiplier`/, RangeError],
      [{ ...a6, backoffMultiplier: Number.NaN }, /`backoffMultiplier`/, RangeError],
      [{ ...a6, backoffMultiplier: Infinity }, /`backoffMultiplier`/, RangeError],
      [{ ...a6, initialBackoffMs: '.1s' }, /`initialBackoffMs`/, TypeError],
      [{ ...a6, maxAttemptsLimit: 1 }, /`maxAttemptsLimit`/, RangeError],
    ];
    for (const [options, message, type] of bad) {
      expect(() => grpcRetryPolicy(options as never)).toThrow(type);
      expect(() => grpcRetryPolicy(options as never)).toThrow(message);
    }
  });
});
