import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { virtualClock } from '../core/virtual-clock.js';
import type { AttemptContext } from '../retry/contexts.js';
import type { FailureVerdict, Result } from '../retry/errors.js';
import type { Mechanism } from '../retry/mechanism.js';
import { pipeline } from '../retry/pipeline.js';
import { aimd } from './aimd.js';
import { bulkhead } from './bulkhead.js';
import { circuitBreaker } from './circuit-breaker.js';
import { concurrencyLimit } from './concurrency-limit.js';

/**
 * A pipeline runs two of ebb's judged mechanisms in a row (a breaker, a limit, a bulkhead) with
 * one reaction on the call's promise when nothing can abort the call. These tests hold that this
 * changes nothing anyone can see: the same pipeline with a mechanism that only passes the call on
 * between the two (so that they run one inside the other, each with its own reaction) ends every
 * call the same way and leaves both mechanisms in the same state.
 */

/** Passes the call on: two judged mechanisms with this between them are not run as one. */
const passOn: Mechanism = { execute: (next, context) => next(context) };

/** How an isFailure answers. */
type Answer = 'default' | 'true' | 'false' | 'throttled' | 'throws' | 'async-true' | 'async-false' | 'rejects' | 'bad';

const answers: Answer[] = [
  'default',
  'true',
  'false',
  'throttled',
  'throws',
  'async-true',
  'async-false',
  'rejects',
  'bad',
];

function isFailureOf(answer: Answer): ((o: Result, c: AttemptContext) => unknown) | undefined {
  switch (answer) {
    case 'default':
      return undefined;
    case 'true':
      return () => true;
    case 'false':
      return () => false;
    case 'throttled':
      return () => 'throttled';
    case 'throws':
      return () => {
        throw new Error('isFailure bug');
      };
    case 'async-true':
      return () => Promise.resolve(true);
    case 'async-false':
      return () => Promise.resolve(false);
    case 'rejects':
      return () => Promise.reject(new Error('isFailure rejected'));
    case 'bad':
      return () => 'yes';
  }
}

type Kind = 'breaker' | 'limit' | 'bulkhead';

/** One mechanism of `kind`, judging by `answer`, on `clock`; and its state, to compare. */
function make(kind: Kind, answer: Answer, clock: ReturnType<typeof virtualClock>) {
  const isFailure = isFailureOf(answer) as ((o: Result) => FailureVerdict) | undefined;
  if (kind === 'breaker') {
    const b = circuitBreaker({
      clock,
      consecutiveFailures: 2,
      openBackoff: constant({ delayMs: 100, jitter: noJitter, maxAttempts: Infinity }),
      ...(isFailure ? { isFailure } : {}),
    });
    return { m: b as Mechanism, state: () => ({ ...b.metrics, state: b.state }) };
  }
  if (kind === 'limit') {
    const l = concurrencyLimit({
      clock,
      algorithm: aimd({ initialLimit: 2, minLimit: 1, maxLimit: 2 }),
      ...(isFailure ? { isFailure } : {}),
    });
    return { m: l as Mechanism, state: () => ({ limit: l.limit, inflight: l.inflight, queued: l.queued }) };
  }
  const h = bulkhead({ maxConcurrent: 1, maxQueue: 1, maxWaitMs: 50, clock });
  return { m: h as Mechanism, state: () => ({ inflight: h.inflight, queued: h.queued }) };
}

/** What one call's operation does: its outcome, and how long it takes on the virtual clock. */
type Op = { ok: boolean; status: number; ms: number };

/** What a call ended with, read as soon as it ends. */
const settled = (p: Promise<unknown>): Promise<string> =>
  p.then(
    (value) => `value ${JSON.stringify(value)}`,
    (error: unknown) => `error ${(error as Error)?.name}: ${(error as Error)?.message ?? String(error)}`,
  );

/** Runs `ops` (started `gapMs` apart) through [outer, inner] or [outer, passOn, inner]; what each call ended with and the states after. */
async function runAll(kinds: [Kind, Kind], answers: [Answer, Answer], ops: Op[], gapMs: number, apart: boolean) {
  const clock = virtualClock();
  const outer = make(kinds[0], answers[0], clock);
  const inner = make(kinds[1], answers[1], clock);
  const api = pipeline(apart ? [outer.m, passOn, inner.m] : [outer.m, inner.m]);
  const calls: Promise<string>[] = [];
  const states: unknown[] = [];
  for (const [i, op] of ops.entries()) {
    calls.push(
      settled(
        api.execute(() =>
          clock.sleep(op.ms).then(() => {
            if (op.ok) return { status: op.status, call: i };
            throw Object.assign(new Error(`call ${i} failed`), { status: op.status });
          }),
        ),
      ),
    );
    states.push([outer.state(), inner.state()]);
    await clock.advance(gapMs);
  }
  await clock.runAll();
  return { ended: await Promise.all(calls), states, after: [outer.state(), inner.state()] };
}

describe('two judged mechanisms in a row run as one, and nothing anyone sees changes', () => {
  it('every call ends as it does with the two apart, and both mechanisms end in the same state', async () => {
    const kind = fc.constantFrom<Kind>('breaker', 'limit', 'bulkhead');
    const answer = fc.constantFrom(...answers);
    const op = fc.record({
      ok: fc.boolean(),
      status: fc.constantFrom(200, 429, 500, 503),
      ms: fc.constantFrom(0, 0, 5, 30, 120),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(kind, kind),
        fc.tuple(answer, answer),
        fc.array(op, { minLength: 1, maxLength: 12 }),
        fc.constantFrom(0, 1, 10, 60),
        async (kinds, as, ops, gap) => {
          const together = await runAll(kinds, as, ops, gap, false);
          const apart = await runAll(kinds, as, ops, gap, true);
          expect(together).toEqual(apart);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('a limit that refuses inside a breaker: the refusal reaches the caller, and the breaker counts nothing', async () => {
    const clock = virtualClock();
    const breaker = circuitBreaker({
      clock,
      consecutiveFailures: 1,
      openBackoff: constant({ delayMs: 100, jitter: noJitter, maxAttempts: Infinity }),
    });
    const limit = concurrencyLimit({ clock, algorithm: aimd({ initialLimit: 1, minLimit: 1, maxLimit: 1 }) });
    const api = pipeline([breaker, limit]);
    const held = api.execute(() => clock.sleep(10).then(() => 'held'));
    await expect(api.execute(() => 'never')).rejects.toMatchObject({ name: 'LimitExceededError' });
    expect(breaker.state).toBe('closed');
    expect(breaker.metrics.consecutiveFailures).toBe(0);
    await clock.advance(10);
    expect(await held).toBe('held');
    expect(limit.inflight).toBe(0);
  });
});
