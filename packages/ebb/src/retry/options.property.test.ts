import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import { RetryError } from './errors.js';
import { poll } from './poll.js';
import { retry } from './retry.js';
import { retrySync } from './retry-sync.js';

/**
 * Every option of retry(), poll() and retrySync()
 * fed anything — fc.anything(), boundary numbers, functions returning anything — either throws a
 * TypeError/RangeError at the call whose message names the option, or works: the operation
 * settles within bounded virtual time, and every wait reported is a finite number >= 0.
 */
const boundary = fc.constantFrom<unknown>(
  Number.NaN,
  Infinity,
  -Infinity,
  -0,
  0,
  2 ** 53,
  1e308,
  5e-324,
  -1,
  0.5,
  3,
  '5',
  '',
  null,
  true,
  {},
  [],
  '9'.repeat(100_000),
);
const anyValue = fc.oneof(fc.anything(), boundary, fc.func(fc.oneof(fc.anything(), boundary)));

const ASYNC_KEYS = [
  'backoff',
  'isFailure',
  'maxRetryAfterMs',
  'onRetry',
  'onFailedAttempt',
  'onGiveUp',
  'onSuccess',
  'clock',
  'random',
  'signal',
  'unref',
  'budget',
] as const;
const SYNC_KEYS = ASYNC_KEYS.slice(0, 9);

/** Fails twice (the second time with a server hint of 100 ms), then succeeds. */
function operation() {
  return ({ attempt }: { attempt: number }) => {
    if (attempt === 1) throw new Error('first');
    if (attempt === 2) throw Object.assign(new Error('second'), { retryAfterMs: 100 });
    return 'ok';
  };
}

/** A settled outcome that "works": the value, a RetryError, or a named error from a bad value the run met. */
function expectWorks(outcome: { value?: unknown; error?: unknown }): void {
  if ('value' in outcome) {
    expect(outcome.value).toBe('ok');
    return;
  }
  const error = outcome.error;
  if (error instanceof RetryError) return;
  // An isFailure answering something falsy makes the operation's own error final.
  if (error instanceof Error && ['first', 'second'].includes(error.message)) return;
  expect(error).toSatisfy((e: unknown) => e instanceof TypeError || e instanceof RangeError);
  expect((error as Error).message).toMatch(/backoff\.next\(\)|random|clock\.|isFailure/);
  expect((error as Error).message.length).toBeLessThan(1_000);
}

function expectNamed(error: unknown, key: string): void {
  expect(error).toSatisfy((e: unknown) => e instanceof TypeError || e instanceof RangeError);
  expect((error as Error).message).toContain(`\`${key}`);
  // A value is quoted in part, never whole (a 100,000-character string is among the values).
  expect((error as Error).message.length).toBeLessThan(1_000);
}

describe('every executor option fed anything: a named refusal at the call, or a run that settles', () => {
  for (const [name, keys, initial] of [
    ['retry()', ASYNC_KEYS, false],
    ['poll()', [...ASYNC_KEYS, 'initialDelayMs'], true],
  ] as const) {
    it(`${name}: throws naming the option, or settles in bounded virtual time with finite waits`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...keys), anyValue, async (key, value) => {
          const clock = virtualClock(123_456);
          const waits: number[] = [];
          const recorder = key === 'onFailedAttempt' ? 'onRetry' : 'onFailedAttempt';
          const options: Record<string, unknown> = {
            clock,
            [recorder]: (c: { delayMs?: number }) => {
              if (c.delayMs !== undefined) waits.push(c.delayMs);
            },
            [key]: value,
          };
          if (key === 'unref') delete options.clock;
          // The default clock is real time, which a virtual clock cannot drive (tested elsewhere).
          if (key === 'clock' && value === undefined) return;
          if (key === 'unref' && (value === undefined || typeof value === 'boolean')) return;
          const op = operation();
          let p: Promise<unknown>;
          try {
            p = initial
              ? poll((c) => ({ done: true, value: op(c) }), options)
              : retry(op, options as Parameters<typeof retry>[1]);
          } catch (error) {
            // retry() never throws at the call: its errors are rejections.
            expect(initial).toBe(true);
            expectNamed(error, key);
            return;
          }
          const settled = p.then(
            (v) => ({ value: v }),
            (error: unknown) => ({ error }),
          );
          await clock.runAll(10_000);
          await new Promise((resolve) => setImmediate(resolve));
          const outcome = await Promise.race([settled, Promise.resolve({ hung: true })]);
          expect(outcome).not.toHaveProperty('hung');
          const o = outcome as { value?: unknown; error?: unknown };
          const message = 'error' in o ? String((o.error as Error)?.message ?? '') : '';
          if (key === 'clock' || message.includes(`\`${key}`)) expectNamed(o.error, key);
          else expectWorks(o);
          for (const w of waits) {
            expect(Number.isFinite(w)).toBe(true);
            expect(w).toBeGreaterThanOrEqual(0);
          }
        }),
        { numRuns: 400 },
      );
    });
  }

  it('retrySync(): throws naming the option at the call, or settles with finite waits', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SYNC_KEYS), anyValue, (key, value) => {
        let now = 777;
        const waits: number[] = [];
        const recorder = key === 'onFailedAttempt' ? 'onRetry' : 'onFailedAttempt';
        const options: Record<string, unknown> = {
          clock: {
            now: () => now,
            sleepSync: (ms: number) => {
              now += ms;
            },
          },
          [recorder]: (c: { delayMs?: number }) => {
            if (c.delayMs !== undefined) waits.push(c.delayMs);
          },
          [key]: value,
        };
        let outcome: { value?: unknown; error?: unknown };
        try {
          outcome = { value: retrySync(operation(), options) };
        } catch (error) {
          outcome = { error };
        }
        if ('error' in outcome && String((outcome.error as Error)?.message ?? '').includes(`\`${key}`)) {
          expectNamed(outcome.error, key);
        } else if (key === 'clock' && value !== undefined) {
          expectNamed(outcome.error, key);
        } else expectWorks(outcome);
        for (const w of waits) {
          expect(Number.isFinite(w)).toBe(true);
          expect(w).toBeGreaterThanOrEqual(0);
        }
      }),
      { numRuns: 1_000 },
    );
  });
});
