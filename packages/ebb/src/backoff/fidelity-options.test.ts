import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { awsStandardBackoff } from './aws.js';
import type { Backoff } from './backoff.js';
import { describePolicy } from './describe.js';
import { googleExponentialBackoff } from './google.js';
import { grpcRetryPolicy } from './grpc.js';

/** Boundary numbers and hostile values for any option. */
const hostile = fc.oneof(
  fc.constantFrom(
    Number.NaN,
    Infinity,
    -Infinity,
    -0,
    0,
    1,
    2 ** 31 - 1,
    2 ** 31,
    2 ** 53,
    1e308,
    -1,
    0.5,
    1 - 2 ** -53,
    '500',
    null,
    {},
    [],
    true,
  ),
  fc.double(),
  fc.integer(),
  fc.anything(),
);

/** Either throws a TypeError/RangeError naming one of `names`, or gives a sane policy. */
function checkBuilder(build: (o: Record<string, unknown>) => Backoff, names: readonly string[]) {
  fc.assert(
    fc.property(
      fc.dictionary(fc.constantFrom(...names), hostile, { maxKeys: names.length }),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      (options, r) => {
        let b: Backoff;
        try {
          b = build(options);
        } catch (error) {
          expect(error instanceof TypeError || error instanceof RangeError).toBe(true);
          expect(names.some((n) => (error as Error).message.includes(`\`${n}\``))).toBe(true);
          return;
        }
        const rows = describePolicy(b, 20).rows;
        for (const row of rows) {
          for (const v of [row.delayMs, row.minDelayMs, row.maxDelayMs, row.meanDelayMs]) {
            expect(Number.isFinite(v) && v >= 0).toBe(true);
          }
        }
        const run = b.start(() => r);
        for (let i = 0; i < 20; i++) {
          const wait = run.next();
          expect(wait === -1 || (Number.isFinite(wait) && wait >= 0)).toBe(true);
          if (wait === -1) break;
        }
      },
    ),
    { numRuns: 500 },
  );
}

describe('the fidelity builders take any input: a named TypeError/RangeError, or a finite policy', () => {
  it('googleExponentialBackoff', () => {
    checkBuilder(
      (o) => googleExponentialBackoff(o),
      ['initialIntervalMs', 'randomizationFactor', 'multiplier', 'maxIntervalMs', 'maxElapsedTimeMs'],
    );
  });
  it('awsStandardBackoff', () => {
    checkBuilder((o) => awsStandardBackoff(o), ['behaviour', 'maxAttempts']);
  });
  it('grpcRetryPolicy', () => {
    checkBuilder(
      (o) =>
        grpcRetryPolicy({
          maxAttempts: 3,
          initialBackoffMs: 100,
          maxBackoffMs: 1_000,
          backoffMultiplier: 2,
          ...o,
        } as never),
      ['maxAttempts', 'initialBackoffMs', 'maxBackoffMs', 'backoffMultiplier', 'maxAttemptsLimit'],
    );
  });
});
