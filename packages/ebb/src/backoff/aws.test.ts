import { describe, expect, it } from 'vitest';
import { AWS_DELAY_BASES, AwsStandardBackoff, awsBackoffDelay, awsBoundedHint, awsStandardBackoff } from './aws.js';
import { Backoff } from './backoff.js';
import { describePolicy, describeRow } from './describe.js';
import { fullJitter } from './jitter-full.js';
import { noJitter } from './jitter-none.js';
import { SEGMENTS } from './segment.js';
import { always, NEXT_BELOW_ONE } from './test-helpers.js';
import { withOptions } from './with-options.js';

// The SDK's rule, as aws.ts cites it from @smithy/core's StandardRetryStrategy and
// DefaultRetryBackoffStrategy: retry i waits floor(random · min(base · 2^i, 20 000)) ms, and a
// server hint raises the wait to at most 5 s past it.

describe('awsStandardBackoff', () => {
  it('waits floor(random · min(base · 2^i, 20 000)) ms', () => {
    expect([0, 1, 2, 3].map((i) => awsBackoffDelay(50, i, NEXT_BELOW_ONE))).toEqual([49, 99, 199, 399]);
    expect(awsBackoffDelay(50, 0, 0)).toBe(0);
    expect(awsBackoffDelay(100, 2, 0.5)).toBe(200);
    expect(awsBackoffDelay(1_000, 3, 0.33)).toBe(Math.floor(0.33 * 8_000));
    // The cap applies before the draw: 1000 · 2^5 = 32 000 → 20 000.
    expect(awsBackoffDelay(1_000, 5, 0.5)).toBe(10_000);
    expect(awsBackoffDelay(20_000, 0, 0.5)).toBe(10_000);
    expect(awsBackoffDelay(1_000, 2000, 0.5)).toBe(10_000);
  });

  it('raises the wait to a server hint, at most 5 s past it: max(delay, min(hint, delay + 5000))', () => {
    expect(awsBoundedHint(100, 3_000)).toBe(3_000);
    expect(awsBoundedHint(100, 5_100)).toBe(5_100);
    expect(awsBoundedHint(100, 5_101)).toBe(5_100);
    expect(awsBoundedHint(100, 60_000)).toBe(5_100);
    expect(awsBoundedHint(100, 50)).toBe(100);
    expect(awsBoundedHint(100, 100)).toBe(100);
  });

  it('defaults to the 2026 behaviour and 3 attempts; pre-2026 has its own bases', () => {
    const b = awsStandardBackoff();
    expect(b.behaviour).toBe('2026');
    expect(b.maxAttempts).toBe(3);
    expect(b.maxElapsedMs).toBe(Infinity);
    expect(AWS_DELAY_BASES).toEqual({
      '2026': { base: 50, throttling: 1_000 },
      'pre-2026': { base: 100, throttling: 500 },
    });
    expect(b[SEGMENTS]).toEqual([
      {
        curve: { type: 'exponential', initialDelayMs: 50, multiplier: 2 },
        jitter: fullJitter,
        ceiling: Infinity,
        maxIntervalMs: 20_000,
        maxDelayMs: Infinity,
        rows: Infinity,
      },
    ]);
    const old = awsStandardBackoff({ behaviour: 'pre-2026', maxAttempts: 5 });
    expect(old.behaviour).toBe('pre-2026');
    expect(old.maxAttempts).toBe(5);
    expect(describePolicy(old, 10).rows.map((r) => r.maxDelayMs)).toEqual([100, 200, 400, 800]);
    expect(awsStandardBackoff({ behaviour: '2026' }).behaviour).toBe('2026');
  });

  it('runs: transient errors on the base, throttling errors on the throttling base, -1 after maxAttempts', () => {
    const run = awsStandardBackoff({ maxAttempts: 5 }).start(always(NEXT_BELOW_ONE));
    expect(run.appliesHints).toBe(true);
    expect([
      run.next(0, new Error('x')),
      run.next(0, { throttled: true }),
      run.next(0, { throttled: 'yes' }),
      run.next(0, null),
      run.next(0, undefined),
    ]).toEqual([49, 1_999, 199, 399, -1]);
    const old = awsStandardBackoff({ behaviour: 'pre-2026', maxAttempts: 4 }).start(always(0.5));
    expect([old.next(0, { throttled: true }), old.next(), old.next(0, { throttled: true }), old.next()]).toEqual([
      250, 100, 1_000, -1,
    ]);
    expect(awsStandardBackoff({ maxAttempts: 1 }).start(always(0.5)).next()).toBe(-1);
    expect(awsStandardBackoff({ maxAttempts: 2 }).start(always(0.5)).next()).toBe(25);
  });

  it("applies an error's finite retryAfterMs by the SDK's rule, and ignores any other hint", () => {
    const waits = (error: unknown) => awsStandardBackoff({ maxAttempts: 9 }).start(always(0.5)).next(0, error);
    expect(waits({ retryAfterMs: 3_000 })).toBe(3_000);
    expect(waits({ retryAfterMs: 60_000 })).toBe(5_025);
    expect(waits({ retryAfterMs: 10 })).toBe(25);
    expect(waits({ retryAfterMs: 0 })).toBe(25);
    expect(waits({ retryAfterMs: Infinity })).toBe(25);
    expect(waits({ retryAfterMs: Number.NaN })).toBe(25);
    expect(waits({ retryAfterMs: '3000' })).toBe(25);
    expect(waits({ throttled: true, retryAfterMs: 60_000 })).toBe(5_500);
    expect(waits('retryAfterMs')).toBe(25);
  });

  it('withOptions() keeps the SDK behaviour for maxAttempts; any other option gives an ordinary policy', () => {
    const b = withOptions(awsStandardBackoff({ behaviour: 'pre-2026' }), { maxAttempts: 6 });
    expect(b).toBeInstanceOf(AwsStandardBackoff);
    expect((b as AwsStandardBackoff).behaviour).toBe('pre-2026');
    expect(b.maxAttempts).toBe(6);
    expect(b.start(always(0.5)).next(0, { throttled: true })).toBe(250);
    expect(() => withOptions(awsStandardBackoff(), { maxAttempts: 0 })).toThrow(
      /withOptions\(\): expected `maxAttempts`/,
    );
    const capped = withOptions(awsStandardBackoff(), { maxDelayMs: 30 });
    expect(capped).not.toBeInstanceOf(AwsStandardBackoff);
    expect(capped).toBeInstanceOf(Backoff);
    expect([capped.maxAttempts, describeRow(capped, 1).maxDelayMs, describeRow(capped, 9).maxDelayMs]).toEqual([
      3, 30, 30,
    ]);
    // maxAttempts beside another option: an ordinary policy with both.
    const both = withOptions(awsStandardBackoff(), { maxAttempts: 4, jitter: noJitter });
    expect(both).not.toBeInstanceOf(AwsStandardBackoff);
    expect([both.maxAttempts, describeRow(both, 2).minDelayMs]).toEqual([4, 100]);
  });

  it('prints as the SDK mode it reproduces', () => {
    expect(String(awsStandardBackoff())).toBe(
      'AWS standard retry (2026) full jitter on 50 ms ×2 (1 s after throttling), 20 s cap, 3 attempts',
    );
    expect(String(awsStandardBackoff({ behaviour: 'pre-2026', maxAttempts: Infinity }))).toBe(
      'AWS standard retry (pre-2026) full jitter on 100 ms ×2 (500 ms after throttling), 20 s cap, forever',
    );
    expect(JSON.stringify(awsStandardBackoff({ maxAttempts: 5 }))).toBe(
      '{"type":"aws-standard","behaviour":"2026","maxAttempts":5}',
    );
  });

  it('names the option, the value and the fix in each message', () => {
    const w = 'awsStandardBackoff()';
    const behaviour = "'2026' is what the SDK does today.";
    const attempts = '`maxAttempts` counts calls, the first included: the SDK default is 3.';
    const cases: [object, Error][] = [
      [
        { behaviour: '2025' },
        new TypeError(`${w}: expected \`behaviour\` to be '2026' or 'pre-2026', got "2025". ${behaviour}`),
      ],
      [
        { behaviour: null },
        new TypeError(`${w}: expected \`behaviour\` to be '2026' or 'pre-2026', got null. ${behaviour}`),
      ],
      [
        { maxAttempts: 0 },
        new RangeError(`${w}: expected \`maxAttempts\` to be a whole number >= 1 (or Infinity), got 0. ${attempts}`),
      ],
      [
        { maxAttempts: 1.5 },
        new RangeError(`${w}: expected \`maxAttempts\` to be a whole number >= 1 (or Infinity), got 1.5. ${attempts}`),
      ],
      [
        { max: 1 },
        new TypeError(
          `${w}: unknown option \`max\`. Did you mean \`maxAttempts\`? Known options: behaviour, maxAttempts.`,
        ),
      ],
    ];
    for (const [options, error] of cases) expect(() => awsStandardBackoff(options as never)).toThrow(error);
    expect(() => awsStandardBackoff(3 as never)).toThrow(new TypeError(`${w}: expected an options object, got 3.`));
    expect(awsStandardBackoff({ maxAttempts: Infinity }).maxAttempts).toBe(Infinity);
  });
});
