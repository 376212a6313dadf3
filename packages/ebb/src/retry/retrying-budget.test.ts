import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { virtualClock } from '../core/virtual-clock.js';
import { concurrencyLimit } from '../resilience/concurrency-limit.js';
import { LimitExceededError } from '../resilience/limit-exceeded-error.js';
import { isRetryError } from './errors.js';
import { pipeline } from './pipeline.js';
import { retry } from './retry.js';
import { retrying } from './retrying.js';

/*
 * retrying() keeps a retry budget of its own unless told `budget: false`: its calls share it,
 * so a dead service gets about 1.2 attempts a call rather than the policy's five.
 */

const fiveAttempts = constant({ delayMs: 100, maxAttempts: 5, jitter: noJitter });

/** `calls` calls, one every `gapMs`, through `api`, each against `op`; the attempts made and how the calls ended. */
async function crowd(
  make: (clock: ReturnType<typeof virtualClock>) => ReturnType<typeof pipeline>,
  calls: number,
  gapMs: number,
  op: (attempt: number) => unknown,
) {
  const clock = virtualClock();
  const api = make(clock);
  let attempts = 0;
  const ended: Promise<string>[] = [];
  for (let i = 0; i < calls; i++) {
    ended.push(
      api
        .execute(() => {
          attempts++;
          return op(attempts);
        })
        .then(
          () => 'ok',
          (e: unknown) => (isRetryError(e) ? `gave up: ${e.reason}` : String(e)),
        ),
    );
    await clock.advance(gapMs);
  }
  await clock.runAll();
  const outcomes = await Promise.all(ended);
  const tally: Record<string, number> = {};
  for (const o of outcomes) tally[o] = (tally[o] ?? 0) + 1;
  return { attempts, tally };
}

const dead = () => {
  throw new Error('503');
};

describe('retrying() keeps a retry budget of its own', () => {
  it('a dead service: 200 calls cost at most 1.2 attempts each (+ the floor of 10), not 5; the rest give up with reason budget', async () => {
    const r = await crowd((clock) => pipeline([retrying({ backoff: fiveAttempts, clock })]), 200, 20, dead);
    expect(r.attempts).toBeLessThanOrEqual(200 * 1.2 + 10);
    expect(r.attempts).toBeGreaterThanOrEqual(200 * 1.15);
    expect(r.tally['gave up: budget']).toBeGreaterThan(150);
  });

  it('budget: false retries every call as its policy allows: 5 attempts each', async () => {
    const r = await crowd(
      (clock) => pipeline([retrying({ backoff: fiveAttempts, clock, budget: false })]),
      200,
      20,
      dead,
    );
    expect(r.attempts).toBe(1_000);
    expect(r.tally).toEqual({ 'gave up: attempts': 200 });
  });

  it('a blip that fails every 10th attempt: every failed call is retried, and all succeed', async () => {
    const r = await crowd(
      (clock) => pipeline([retrying({ backoff: fiveAttempts, clock })]),
      500,
      5,
      (n) => {
        if (n % 10 === 0) throw new Error('blip');
        return n;
      },
    );
    expect(r.tally).toEqual({ ok: 500 });
    expect(r.attempts).toBe(555);
  });

  it('a client with little traffic keeps its few retries: one call a minute, each failing four times, succeeds', async () => {
    let failures = 0;
    const r = await crowd(
      (clock) => pipeline([retrying({ backoff: fiveAttempts, clock })]),
      5,
      60_000,
      () => {
        if (++failures % 5 !== 0) throw new Error('flaky');
      },
    );
    expect(r.tally).toEqual({ ok: 5 });
    expect(r.attempts).toBe(25);
  });

  it('a budget given replaces its own; two retrying() keep one each; one pipeline shares it among its calls', async () => {
    const never = { tryAcquireRetry: () => false, recordSuccess: () => {} };
    const given = await crowd(
      (clock) => pipeline([retrying({ backoff: fiveAttempts, clock, budget: never })]),
      3,
      10,
      dead,
    );
    expect(given.attempts).toBe(3);
    // Twenty calls of one pipeline against a dead service share the floor: 10 retries in all.
    const shared = await crowd((clock) => pipeline([retrying({ backoff: fiveAttempts, clock })]), 20, 1, dead);
    expect(shared.attempts).toBe(20 + 10);
    // Twenty pipelines, each with its own retrying(): each has a floor of its own.
    const clock = virtualClock();
    const apis = Array.from({ length: 20 }, () => pipeline([retrying({ backoff: fiveAttempts, clock })]));
    let attempts = 0;
    const ended = apis.map((api) =>
      api
        .execute(() => {
          attempts++;
          throw new Error('503');
        })
        .catch(() => {}),
    );
    await clock.runAll();
    await Promise.all(ended);
    expect(attempts).toBe(20 * 5);
  });

  it('budget is checked: neither false nor a budget is refused, naming it', () => {
    expect(() => retrying({ budget: true as never })).toThrow(
      'retrying(): expected `budget` to be an object with tryAcquireRetry() and recordSuccess(), got true.',
    );
    expect(() => retrying({ budget: {} as never })).toThrow(TypeError);
  });

  it('a retry of a local refusal is free: a full limit, an open breaker, a local throttle (any copy, by code) never ask the budget', async () => {
    const asked: unknown[] = [];
    const budget = {
      tryAcquireRetry: (e: unknown) => {
        asked.push(e);
        return true;
      },
      recordSuccess: () => {},
    };
    const serverError = new Error('503');
    const outcomes: unknown[] = [
      new LimitExceededError('queue-full', 1, 'no queue'),
      serverError,
      { code: 'EBB_CIRCUIT_OPEN', retryAfterMs: 5 }, // another copy's BrokenCircuitError
      { code: 'EBB_LOCAL_THROTTLE' },
    ];
    const clock = virtualClock();
    let attempt = 0;
    const done = retry(
      () => {
        const outcome = outcomes[attempt++];
        if (outcome === undefined) return 'ok';
        throw outcome;
      },
      { backoff: fiveAttempts, budget, clock },
    );
    await clock.runAll();
    expect(await done).toBe('ok');
    expect(attempt).toBe(5);
    expect(asked).toEqual([serverError]);
  });

  it('so a burst on a fresh limit of 1 in flight is not refused by the budget: 10 calls of 200 ms, none gives up for it', async () => {
    const clock = virtualClock();
    const api = pipeline([retrying({ clock }), concurrencyLimit({ clock })]);
    const ended = Array.from({ length: 10 }, () =>
      api
        .execute(() => clock.sleep(200))
        .then(
          () => 'ok',
          (e: unknown) => (isRetryError(e) ? e.reason : String(e)),
        ),
    );
    await clock.runAll();
    const reasons = await Promise.all(ended);
    // Charged for the refusals, the shared floor of 10 retries ran out at once: 9 gave up with 'budget'.
    expect(reasons).not.toContain('budget');
    expect(reasons.filter((r) => r === 'ok').length).toBeGreaterThan(1);
  });

  it('whatever mix of refusals and failures, a call sends at most one request more than the retries its budget granted', async () => {
    const kinds = ['EBB_LIMIT_EXCEEDED', 'EBB_CIRCUIT_OPEN', 'EBB_LOCAL_THROTTLE', 'server', 'ok'] as const;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...kinds), { minLength: 1, maxLength: 12 }),
        fc.array(fc.boolean(), { maxLength: 12 }),
        async (script, grants) => {
          let granted = 0;
          let asked = 0;
          const budget = {
            tryAcquireRetry: () => {
              const yes = grants[asked++] ?? true;
              if (yes) granted++;
              return yes;
            },
            recordSuccess: () => {},
          };
          const clock = virtualClock();
          let attempt = 0;
          let requests = 0;
          const done = retry(
            () => {
              const kind = script[attempt++ % script.length];
              if (kind === 'ok' || kind === 'server') requests++;
              if (kind === 'ok') return 'ok';
              throw kind === 'server' ? new Error('503') : Object.assign(new Error('refused'), { code: kind });
            },
            { backoff: constant({ delayMs: 10, maxAttempts: 12, jitter: noJitter }), budget, clock },
          ).catch(() => 'gave up');
          await clock.runAll();
          await done;
          expect(requests).toBeLessThanOrEqual(1 + granted);
        },
      ),
    );
  });
});
