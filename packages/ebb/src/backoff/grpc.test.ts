import { describe, expect, it } from 'vitest';
import { describePolicy } from './describe.js';
import { grpcRetryPolicy } from './grpc.js';
import { fullJitter } from './jitter-full.js';
import { SEGMENTS } from './segment.js';
import { always, NEXT_BELOW_ONE } from './test-helpers.js';

const a6 = { maxAttempts: 4, initialBackoffMs: 100, maxBackoffMs: 1_000, backoffMultiplier: 2 };

describe('grpcRetryPolicy follows gRFC A6', () => {
  it('waits random(0, min(initial · multiplier^(n−1), max)): the A6 example, .1s doubling to 1s, 4 attempts', () => {
    const s = describePolicy(grpcRetryPolicy(a6), 10);
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
    const s = describePolicy(grpcRetryPolicy({ ...a6, backoffMultiplier: 0.5 }), 3);
    expect(s.rows.map((r) => r.maxDelayMs)).toEqual([100, 50, 25]);
  });

  it('names the option, the value and the fix in each message', () => {
    const w = 'grpcRetryPolicy()';
    const attempts = 'A6 requires 2 or more: the original call and at least one retry.';
    const cases: [object, Error][] = [
      [
        { ...a6, maxAttempts: 1 },
        new RangeError(`${w}: expected \`maxAttempts\` to be a whole number >= 2, got 1. ${attempts}`),
      ],
      [
        { ...a6, maxAttempts: Infinity },
        new RangeError(`${w}: expected \`maxAttempts\` to be a whole number >= 2, got Infinity. ${attempts}`),
      ],
      [
        { ...a6, maxAttempts: undefined },
        new TypeError(`${w}: expected \`maxAttempts\` to be a whole number >= 2, got undefined. ${attempts}`),
      ],
      [
        { ...a6, maxAttemptsLimit: 1 },
        new RangeError(
          `${w}: expected \`maxAttemptsLimit\` to be a whole number >= 2, got 1. gRPC clients default to 5.`,
        ),
      ],
      [
        { ...a6, maxAttemptsLimit: Infinity },
        new RangeError(
          `${w}: expected \`maxAttemptsLimit\` to be a whole number >= 2, got Infinity. gRPC clients default to 5.`,
        ),
      ],
      [
        { ...a6, initialBackoffMs: 0 },
        new RangeError(
          `${w}: expected \`initialBackoffMs\` to be a finite number > 0, got 0. For example 100 (A6: ".1s").`,
        ),
      ],
      [
        { ...a6, maxBackoffMs: Infinity },
        new RangeError(
          `${w}: expected \`maxBackoffMs\` to be a finite number > 0, got Infinity. For example 1000 (A6: "1s").`,
        ),
      ],
      [
        { ...a6, backoffMultiplier: '2' },
        new TypeError(`${w}: expected \`backoffMultiplier\` to be a finite number > 0, got "2". For example 2.`),
      ],
      [
        { ...a6, foo: 1 },
        new TypeError(
          `${w}: unknown option \`foo\`. Known options: maxAttempts, initialBackoffMs, maxBackoffMs, backoffMultiplier, maxAttemptsLimit.`,
        ),
      ],
    ];
    for (const [options, error] of cases) expect(() => grpcRetryPolicy(options as never)).toThrow(error);
    expect(() => grpcRetryPolicy(7 as never)).toThrow(new TypeError(`${w}: expected an options object, got 7.`));
  });

  it('builds one segment: the A6 curve under full jitter, capped before the draw, no time budget', () => {
    const b = grpcRetryPolicy({ ...a6, maxAttempts: 2, maxAttemptsLimit: 2 });
    expect(b.maxAttempts).toBe(2);
    expect(b.maxElapsedMs).toBe(Infinity);
    expect(b[SEGMENTS]).toEqual([
      {
        curve: { type: 'exponential', initialDelayMs: 100, multiplier: 2 },
        jitter: fullJitter,
        ceiling: Infinity,
        maxIntervalMs: 1_000,
        maxDelayMs: Infinity,
        rows: Infinity,
      },
    ]);
    // Tiny positive values are valid.
    expect(
      grpcRetryPolicy({ ...a6, initialBackoffMs: 0.001, maxBackoffMs: 0.001, backoffMultiplier: 0.001 }).maxAttempts,
    ).toBe(4);
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
