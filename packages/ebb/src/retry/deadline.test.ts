import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { decorrelatedJitter } from '../backoff/decorrelated.js';
import { exponential } from '../backoff/exponential.js';
import type { Jitter } from '../backoff/jitter.js';
import { additiveJitter } from '../backoff/jitter-additive.js';
import { equalJitter } from '../backoff/jitter-equal.js';
import { fullJitter } from '../backoff/jitter-full.js';
import { noJitter } from '../backoff/jitter-none.js';
import { proportionalJitter } from '../backoff/jitter-proportional.js';
import { linear } from '../backoff/linear.js';
import { seeded } from '../core/random.js';
import { virtualClock } from '../core/virtual-clock.js';
import { RetryError } from './errors.js';
import { pipeline } from './pipeline.js';
import { retry } from './retry.js';
import { retrying } from './retrying.js';
import { timeout } from './timeout.js';

const jitter = fc.constantFrom<Jitter>(noJitter, fullJitter, equalJitter, proportionalJitter(0.5), additiveJitter(500));
const budget = fc.integer({ min: 0, max: 100_000 });
const policy = fc.oneof(
  fc
    .record({
      initialDelayMs: fc.integer({ min: 0, max: 5_000 }),
      multiplier: fc.double({ min: 1, max: 4, noNaN: true }),
      jitter,
      maxElapsedMs: budget,
    })
    .map((o) => exponential(o)),
  fc
    .record({
      initialDelayMs: fc.integer({ min: 0, max: 5_000 }),
      incrementMs: fc.integer({ min: 0, max: 5_000 }),
      jitter,
      maxElapsedMs: budget,
    })
    .map((o) => linear(o)),
  fc
    .record({
      delayMs: fc.integer({ min: 0, max: 10_000 }),
      jitter,
      maxElapsedMs: budget,
      maxAttempts: fc.integer({ min: 1, max: 50 }),
    })
    .map((o) => constant(o)),
  fc
    .record({
      initialDelayMs: fc.integer({ min: 1, max: 5_000 }),
      multiplier: fc.double({ min: 1, max: 4, noNaN: true }),
      maxElapsedMs: budget,
    })
    .map((o) => exponential({ ...o, jitter: decorrelatedJitter })),
);

describe('maxElapsedMs: no attempt starts past it and no wait ends past it; a timeout() around the retry bounds the whole', () => {
  it('across thousands of random policies, attempt durations and failure patterns', async () => {
    await fc.assert(
      fc.asyncProperty(
        policy,
        fc.array(fc.integer({ min: 0, max: 20_000 }), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer(),
        async (backoff, durations, succeedAt, seed) => {
          const clock = virtualClock();
          const starts: number[] = [];
          const ends: number[] = [];
          const p = retry(
            async ({ attempt, signal }) => {
              starts.push(clock.now());
              await clock.sleep(durations[(attempt - 1) % durations.length] as number, signal);
              ends.push(clock.now());
              if (attempt < succeedAt) throw new Error(`attempt ${attempt}`);
              return attempt;
            },
            { backoff, clock, random: seeded(seed), maxRetryAfterMs: Infinity },
          ).then(
            (v) => ({ v }),
            (e: unknown) => ({ e }),
          );
          await clock.runAll();
          const outcome = await p;
          const limit = backoff.maxElapsedMs;
          // Every attempt starts within the budget; every wait (from one attempt's end to the
          // next one's start) ends within it; nothing runs after the last attempt.
          for (const t of starts) expect(t).toBeLessThanOrEqual(limit);
          expect(clock.now()).toBe(ends.at(-1));
          expect(clock.pending).toBe(0);
          if ('e' in outcome) {
            expect(outcome.e).toBeInstanceOf(RetryError);
            expect((outcome.e as RetryError).elapsedMs).toBe(ends.at(-1));
          }
        },
      ),
      { numRuns: 1_000 },
    );
  }, 120_000);

  it('with timeout(maxElapsedMs) outside the retry, total virtual time never exceeds it', async () => {
    await fc.assert(
      fc.asyncProperty(
        policy,
        fc.array(fc.integer({ min: 0, max: 20_000 }), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer(),
        async (backoff, durations, succeedAt, seed) => {
          const clock = virtualClock();
          const limit = Math.max(1, backoff.maxElapsedMs);
          const call = pipeline([
            timeout(limit, { clock }),
            retrying({ backoff, clock, random: seeded(seed), maxRetryAfterMs: Infinity }),
          ]);
          const p = call
            .execute(async ({ attempt, signal }) => {
              await clock.sleep(durations[(attempt - 1) % durations.length] as number, signal);
              if (attempt < succeedAt) throw new Error(`attempt ${attempt}`);
              return attempt;
            })
            .then(
              (v) => ({ v }),
              (e: unknown) => ({ e }),
            );
          await clock.runAll();
          const outcome = await p;
          expect(clock.now()).toBeLessThanOrEqual(limit);
          expect(clock.pending).toBe(0);
          if ('e' in outcome) {
            const e = outcome.e as Error;
            expect(e instanceof RetryError || e.name === 'TimeoutError').toBe(true);
          }
        },
      ),
      { numRuns: 1_000 },
    );
  }, 120_000);
});
