import { decorrelatedJitter, describePolicy, equalJitter, fullJitter, noJitter, presets } from 'ebb';
import { describe, expect, it } from 'vitest';
import { CUSTOM_DEFAULTS, parseJitter, policyFromFlags } from './policy.js';

const maxima = (flags: Parameters<typeof policyFromFlags>[0], n = 4) =>
  describePolicy(policyFromFlags(flags).backoff, n).rows.map((r) => r.maxDelayMs);

describe('policyFromFlags', () => {
  it('finds presets by id or key', () => {
    expect(policyFromFlags({ preset: 'google-http-client' }).backoff).toBe(presets.googleHttpClient);
    expect(policyFromFlags({ preset: 'googleHttpClient' }).name).toBe('google-http-client');
  });

  it('applies limit flags and jitter to a preset', () => {
    const b = policyFromFlags({ preset: 'default', maxAttempts: '3', maxDelay: '150ms', jitter: 'none' }).backoff;
    expect(describePolicy(b, 10).rows.map((r) => r.delayMs)).toEqual([100, 150]);
    expect(policyFromFlags({ preset: 'sip', maxElapsed: '10s' }).backoff.maxElapsedMs).toBe(10_000);
    expect(
      describePolicy(policyFromFlags({ preset: 'default', ceiling: '2', maxAttempts: 'inf' }).backoff, 4).rows.map(
        (r) => r.delayMs,
      ),
    ).toEqual([100, 200, 200, 200]);
    expect(maxima({ preset: 'google-http-client', maxInterval: '1s' })[3]).toBe(1_500);
  });

  it('builds each custom curve from its flags', () => {
    // As exponential() builds it: capped at 20 s unless --max-delay or --max-interval says otherwise.
    expect(maxima({ initial: '1s', multiplier: '3' })).toEqual([1_000, 3_000, 9_000, 20_000]);
    expect(maxima({ initial: '1s', multiplier: '3', maxDelay: 'Infinity' })).toEqual([1_000, 3_000, 9_000, 27_000]);
    expect(policyFromFlags({ initial: '1s', multiplier: '3' }).summary).toBe(
      'exponential 1 s ×3, 20 s cap, full jitter, 5 attempts',
    );
    expect(maxima({ curve: 'linear', initial: '1s', increment: '500ms' })).toEqual([1_000, 1_500, 2_000, 2_500]);
    expect(maxima({ delay: '2s' })).toEqual([2_000, 2_000, 2_000, 2_000]);
    expect(maxima({ slot: '1ms', cwMin: '1', cwMax: '7' })).toEqual([3, 7, 7, 7]);
    expect(maxima({ initial: '100ms', maxAttempts: '3' }, 10)).toEqual([100, 200]);
    expect(policyFromFlags({ maxElapsed: '1m' }).backoff.maxElapsedMs).toBe(60_000);
  });

  it('no flags is the default preset; limit flags alone adjust it', () => {
    expect(policyFromFlags({}).backoff).toBe(presets.default);
    expect(policyFromFlags({}).name).toBe('default');
    const b = policyFromFlags({ maxAttempts: '8' }).backoff;
    expect(b.maxAttempts).toBe(8);
    expect(describePolicy(b, 3).rows).toEqual(describePolicy(presets.default, 3).rows);
  });

  it('a custom curve is jittered and bounded unless told otherwise', () => {
    const b = policyFromFlags({ initial: '1ms' }).backoff;
    expect(b.maxAttempts).toBe(CUSTOM_DEFAULTS.maxAttempts);
    const s = describePolicy(b, 10);
    expect(s.stopsAfterAttempt).toBe(5);
    // Full jitter: each wait is drawn from [0, curve].
    expect(s.rows.map((r) => [r.minDelayMs, r.maxDelayMs])).toEqual([
      [0, 1],
      [0, 2],
      [0, 4],
      [0, 8],
    ]);
    // Explicit choices win: no jitter, forever.
    const forever = policyFromFlags({ initial: '1ms', jitter: 'none', maxAttempts: 'Infinity' }).backoff;
    expect(forever.maxAttempts).toBe(Infinity);
    expect(describePolicy(forever, 3).rows.map((r) => r.minDelayMs)).toEqual([1, 2, 4]);
    // A time budget alone bounds it too: no attempt limit is added.
    const budget = policyFromFlags({ delay: '1s', maxElapsed: '1m' }).backoff;
    expect([budget.maxAttempts, budget.maxElapsedMs]).toEqual([Infinity, 60_000]);
    // Slotted curves draw their own slots: no jitter added, but bounded.
    const slots = policyFromFlags({ slot: '1ms', cwMin: '1', cwMax: '7' }).backoff;
    expect(slots.maxAttempts).toBe(5);
  });

  it('refuses flags that do not fit, naming them', () => {
    expect(() => policyFromFlags({ preset: 'zzz' })).toThrow(
      /unknown preset "zzz"; presets: default, google-http-client/,
    );
    expect(() => policyFromFlags({ preset: 'sip', multiplier: '3' })).toThrow(/--multiplier defines a custom curve/);
    expect(() => policyFromFlags({ curve: 'constant', initial: '1s' })).toThrow(
      /--initial does not apply to --curve constant/,
    );
    expect(() => policyFromFlags({ curve: 'slotted' })).toThrow(/needs --slot/);
    expect(() => policyFromFlags({ slot: '1ms', jitter: 'full' })).toThrow(
      /--jitter does not apply to --curve slotted/,
    );
    expect(() => policyFromFlags({ curve: 'cubic' })).toThrow(/--curve expects/);
    expect(() => policyFromFlags({ multiplier: '0.5' })).toThrow(RangeError);
  });
});

describe('parseJitter', () => {
  it('reads every kind', () => {
    expect(parseJitter('none')).toBe(noJitter);
    expect(parseJitter('full')).toBe(fullJitter);
    expect(parseJitter('equal')).toBe(equalJitter);
    expect(parseJitter('decorrelated')).toBe(decorrelatedJitter);
    expect(parseJitter('proportional:0.5').name).toBe('proportional:0.5');
    // The CLI's durations: 1s is 1000 ms, and a bare number needs a unit.
    expect(parseJitter('additive:1s').name).toBe('additive:1000');
    expect(() => parseJitter('additive:1000')).toThrow(/needs a unit/);
  });

  it('refuses the rest', () => {
    for (const bad of ['', 'gauss', 'full:1', 'proportional', 'additive:', 'proportional:0.5:1', 'proportional:x']) {
      expect(() => parseJitter(bad)).toThrow(/--jitter expects|--jitter/);
    }
  });
});
