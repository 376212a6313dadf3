import { describe, expect, it } from 'vitest';
import type { Backoff, BackoffPolicy } from './backoff.js';
import { assertBounded } from './bounded.js';
import { chain } from './chain.js';
import { constant } from './constant.js';
import { exponential } from './exponential.js';
import { linear } from './linear.js';
import { presets } from './presets.js';
import { sequence } from './sequence.js';
import { slotted } from './slotted.js';

const refused =
  (policy: BackoffPolicy, where = 'retry()') =>
  () =>
    assertBounded(where, policy);

describe('assertBounded: retry() and poll() refuse a Backoff that can run forever by accident', () => {
  const bare: Record<string, Backoff> = {
    exponential: exponential(),
    linear: linear(),
    constant: constant(),
    sequence: sequence({ delaysMs: [1, 2] }),
    slotted: slotted({ slotMs: 1 }),
    'jittered and capped': exponential({ jitter: 'full', maxDelayMs: 1_000 }),
  };

  it('refuses every curve built with neither maxAttempts nor maxElapsedMs, naming the caller and the fix', () => {
    for (const [name, policy] of Object.entries(bare)) {
      expect(refused(policy, 'poll()'), name).toThrow(RangeError);
      expect(refused(policy, 'poll()'), name).toThrow(
        'poll(): the backoff policy never stops (no maxAttempts, no maxElapsedMs) — add maxAttempts: 5 or maxElapsedMs',
      );
      expect(refused(policy), name).toThrow(/say maxAttempts: Infinity .* to retry forever/);
    }
  });

  it('accepts a policy with maxAttempts, with maxElapsedMs, or with an explicit maxAttempts: Infinity', () => {
    for (const [name, policy] of Object.entries(bare)) {
      expect(refused(policy.withMaxAttempts(5)), name).not.toThrow();
      expect(refused(policy.withMaxElapsed(10_000)), name).not.toThrow();
      expect(refused(policy.withMaxAttempts(Infinity)), name).not.toThrow();
      expect(refused(policy.withMaxElapsed(0)), name).not.toThrow();
    }
    expect(refused(exponential({ maxAttempts: Infinity }))).not.toThrow();
    expect(refused(constant({ maxAttempts: Infinity, delayMs: 0 }))).not.toThrow();
    expect(refused(slotted({ slotMs: 1, maxAttempts: Infinity }))).not.toThrow();
    expect(refused(exponential({ maxElapsedMs: 5 }))).not.toThrow();
  });

  it('keeps an explicit Infinity through every other with… method, and drops it with a finite maxAttempts', () => {
    const forever = exponential({ maxAttempts: Infinity });
    const kept = [
      forever.withJitter('full'),
      forever.withMaxDelay(1_000),
      forever.withMaxDelay(Infinity),
      forever.withMaxInterval(500),
      forever.withCeiling(4),
      forever.withMaxElapsed(Infinity),
      forever.withMaxElapsed(1_000).withMaxElapsed(Infinity),
    ];
    for (const policy of kept) expect(refused(policy)).not.toThrow();
    // A finite limit replaces the explicit Infinity; removing the budget again makes it unbounded by accident.
    expect(refused(forever.withMaxAttempts(3).withMaxElapsed(Infinity))).not.toThrow();
    const implicit = exponential({ maxAttempts: 3 });
    expect(refused(implicit)).not.toThrow();
    // `maxAttempts: undefined` is the default, not a statement.
    expect(refused(exponential({ maxAttempts: undefined }))).toThrow(RangeError);
    expect(refused(exponential().withJitter('full').withMaxDelay(Infinity))).toThrow(RangeError);
  });

  it('judges a chain by its second part, which governs its end', () => {
    const head = constant({ delayMs: 0, maxAttempts: 2 });
    expect(refused(chain(head, exponential()))).toThrow(RangeError);
    expect(refused(chain(head, exponential({ maxAttempts: Infinity })))).not.toThrow();
    expect(refused(chain(head, exponential({ maxAttempts: 4 })))).not.toThrow();
    expect(refused(chain(head, exponential({ maxElapsedMs: 4_000 })))).not.toThrow();
  });

  it('accepts every preset but awsSimpleDb, whose source names no limit (its doc says to add one)', () => {
    const names = Object.keys(presets) as (keyof typeof presets)[];
    const rejected = names.filter((name) => {
      try {
        assertBounded('retry()', presets[name]);
        return false;
      } catch {
        return true;
      }
    });
    expect(rejected).toEqual(['awsSimpleDb']);
    expect(refused(presets.awsSimpleDb.withMaxAttempts(5))).not.toThrow();
    // sip and sip-invite stop by Timer F / Timer B; grpcConnect and truncatedBinary by choice.
    expect([presets.sip.maxElapsedMs, presets.sipInvite.maxElapsedMs]).toEqual([32_000, 32_000]);
    expect([presets.grpcConnect.maxAttempts, presets.truncatedBinary.maxAttempts]).toEqual([Infinity, Infinity]);
  });

  it('leaves a custom policy (not a Backoff) to its author, even an endless one', () => {
    const custom: BackoffPolicy = { maxElapsedMs: Infinity, start: () => ({ next: () => 10 }) };
    expect(refused(custom)).not.toThrow();
  });
});
