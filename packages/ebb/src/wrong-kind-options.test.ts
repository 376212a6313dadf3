import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exponential } from './backoff/exponential.js';
import { jitterNamed } from './backoff/jitter-named.js';
import { sample } from './backoff/sample.js';
import { sequence } from './backoff/sequence.js';
import { withRetry } from './http/with-retry.js';
import { adaptiveRate } from './rate/adaptive-rate.js';
import { adaptiveThrottle } from './rate/adaptive-throttle.js';
import { awsRetryQuota } from './rate/aws-retry-quota.js';
import { circuitBreaker } from './resilience/circuit-breaker.js';
import { concurrencyLimit } from './resilience/concurrency-limit.js';
import { hedging } from './resilience/hedging.js';
import { vegas } from './resilience/vegas.js';
import { fallback } from './retry/fallback.js';
import { pipeline } from './retry/pipeline.js';
import { retry } from './retry/retry.js';

/*
 * A number where a function, a policy, a jitter value, a string, an array or an object goes is of
 * the wrong kind, so a `TypeError` (as JavaScript's own `[].map(5)`), never a `RangeError`: that is
 * kept for a number outside a numeric option's domain. `catch (e) { if (e instanceof RangeError) … }`
 * must not mistake one for the other. Each case gives one such option any number and must be
 * refused as a TypeError whose message names the option.
 */

const op = async () => 1;
const cases: [string, string, (n: number) => unknown][] = [
  ['exponential()', 'jitter', (n) => exponential({ jitter: n as never })],
  ['jitterNamed()', 'name', (n) => jitterNamed(n as never)],
  ['sample()', 'backoff', (n) => sample(n as never)],
  ['sample()', 'random', (n) => sample(exponential(), { random: n as never })],
  ['sequence()', 'delaysMs', (n) => sequence({ delaysMs: n as never })],
  ['retry()', 'backoff', (n) => retry(op, { backoff: n as never })],
  ['retry()', 'isFailure', (n) => retry(op, { isFailure: n as never })],
  ['retry()', 'random', (n) => retry(op, { random: n as never })],
  ['retry()', 'operation', (n) => retry(n as never)],
  ['withRetry()', 'fetchImpl', (n) => withRetry(n as never)],
  ['withRetry()', 'isFailure', (n) => withRetry(fetch, { isFailure: n as never })],
  ['withRetry()', 'use', (n) => withRetry(fetch, { use: n as never })],
  ['pipeline()', 'mechanisms', (n) => pipeline(n as never)],
  ['pipeline()', 'name', (n) => pipeline([], { name: n as never })],
  ['fallback()', 'isFailure', (n) => fallback(1, { isFailure: n as never })],
  ['circuitBreaker()', 'openBackoff', (n) => circuitBreaker({ openBackoff: n as never })],
  ['circuitBreaker()', 'isFailure', (n) => circuitBreaker({ isFailure: n as never })],
  ['circuitBreaker()', 'random', (n) => circuitBreaker({ random: n as never })],
  ['concurrencyLimit()', 'algorithm', (n) => concurrencyLimit({ algorithm: n as never })],
  ['hedging()', 'isFailure', (n) => hedging({ isFailure: n as never })],
  ['vegas()', 'random', (n) => vegas({ random: n as never })],
  ['adaptiveRate()', 'random', (n) => adaptiveRate({ random: n as never })],
  ['adaptiveRate()', 'priorities', (n) => adaptiveRate({ priorities: n as never })],
  ['adaptiveThrottle()', 'random', (n) => adaptiveThrottle({ random: n as never })],
  ['awsRetryQuota()', 'classify', (n) => awsRetryQuota({ classify: n as never })],
  ['awsRetryQuota()', 'behaviour', (n) => awsRetryQuota({ behaviour: n as never })],
];

describe('a number where something else goes: a TypeError naming the option, whatever the number', () => {
  it.each(cases)('%s `%s`', async (where, name, build) => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.double(), fc.constantFrom(0, -0, 1, 5, 0.5, Number.NaN, Infinity)), async (n) => {
        let error: unknown;
        try {
          // retry() refuses by rejecting, the constructors by throwing.
          await build(n);
        } catch (e) {
          error = e;
        }
        expect(error, `${where} took ${n} for \`${name}\``).toBeInstanceOf(TypeError);
        expect((error as Error).message).toContain(where);
        expect((error as Error).message).toContain(`\`${name}\``);
      }),
      { numRuns: 30 },
    );
  });
});
