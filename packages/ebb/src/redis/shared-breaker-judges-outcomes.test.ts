// sharedCircuitBreaker speaks circuitBreaker's language: the same option names (the old ones
// refused with the same hints) and the same isFailure(outcome, context), which judges returned
// values too. Virtual time, against the model of Redis (breaker-model.ts).
import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { virtualClock } from '../core/virtual-clock.js';
import { circuitBreaker } from '../resilience/circuit-breaker.js';
import { isBrokenCircuitError, LimitExceededError } from '../resilience/errors.js';
import type { AttemptContext } from '../retry/contexts.js';
import { defaultIsFailure, type Result, stop } from '../retry/errors.js';
import { pipeline } from '../retry/pipeline.js';
import { breakerModel } from './breaker-model.js';
import { settle } from './breaker-test-helpers.js';
import { type SharedCircuitBreakerOptions, sharedCircuitBreaker } from './shared-breaker.js';

const OPEN = constant({ delayMs: 1000, jitter: noJitter, maxAttempts: Infinity });
const outcome = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

function member(more: Partial<SharedCircuitBreakerOptions<never>> = {}) {
  const clock = virtualClock(1_000_000);
  const breaker = sharedCircuitBreaker({
    client: breakerModel(clock),
    name: 'svc',
    clock,
    minCalls: 5,
    windowMs: 2000,
    reportMs: 100,
    openBackoff: OPEN,
    ...more,
  });
  return { clock, breaker };
}

/** Runs `n` calls of `op` through the breaker, 20 ms apart; returns how many were refused. */
async function calls(
  m: ReturnType<typeof member>,
  n: number,
  op: (context: AttemptContext) => unknown,
): Promise<{ refused: number; results: unknown[] }> {
  const api = pipeline([m.breaker]);
  let refused = 0;
  const results: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const r = await outcome(api.execute(op));
    if (!r.ok && isBrokenCircuitError(r.error)) refused++;
    else results.push(r.ok ? r.value : r.error);
    await m.clock.advance(20);
    await settle();
  }
  return { refused, results };
}

describe('sharedCircuitBreaker: the 1.0 option names, as circuitBreaker', () => {
  it('refuses minimumCalls and halfOpenProbes with the hints circuitBreaker gives, and minimumMembers pointing to minMembers', () => {
    const client = breakerModel(virtualClock());
    const hint = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return String((e as Error).message).replace(/^[a-zA-Z]+\(\): /, '');
      }
      return 'accepted';
    };
    for (const old of ['minimumCalls', 'halfOpenProbes']) {
      const shared = hint(() => sharedCircuitBreaker({ client, name: 'x', [old]: 1 } as never));
      expect(shared).toBe(hint(() => circuitBreaker({ [old]: 1 } as never)));
      expect(shared).toMatch(new RegExp(`^\`${old}\` was renamed in 1.0: use \``));
    }
    expect(() => sharedCircuitBreaker({ client, name: 'x', minimumMembers: 2 } as never)).toThrow(
      /^sharedCircuitBreaker\(\): `minimumMembers` was renamed in 1\.0: use `minMembers`\.$/,
    );
  });

  it('minCalls, minMembers and maxHalfOpenProbes are checked under their new names', () => {
    const client = breakerModel(virtualClock());
    expect(() => sharedCircuitBreaker({ client, name: 'x', minCalls: 0 })).toThrow(/`minCalls`/);
    expect(() => sharedCircuitBreaker({ client, name: 'x', minMembers: 0 })).toThrow(/`minMembers`/);
    expect(() => sharedCircuitBreaker({ client, name: 'x', maxHalfOpenProbes: 0 })).toThrow(/`maxHalfOpenProbes`/);
    expect(() => sharedCircuitBreaker({ client, name: 'x', isFailure: 1 as never })).toThrow(
      /isFailure.*\(outcome, context\)/,
    );
  });

  it('minCalls is the volume the window needs: below it a member whose every call fails stays closed', async () => {
    const few = member({ minCalls: 8 });
    expect((await calls(few, 7, () => Promise.reject(new Error('down')))).refused).toBe(0);
    const enough = member({ minCalls: 6 });
    expect((await calls(enough, 7, () => Promise.reject(new Error('down')))).refused).toBe(1);
  });
});

describe('sharedCircuitBreaker: isFailure(outcome, context) judges every outcome, values included', () => {
  it('a returned { status: 503 } counts as a failure when isFailure says so, and the value still reaches the caller', async () => {
    const seen: Result[] = [];
    const m = member({
      isFailure: (o: Result<{ status: number }>) => {
        seen.push(o);
        return o.ok ? o.value.status >= 500 : defaultIsFailure(o);
      },
    });
    const r = await calls(m, 8, () => ({ status: 503 }));
    expect(r.results.slice(0, 5)).toEqual(Array(5).fill({ status: 503 }));
    expect(r.refused).toBe(3);
    expect(m.breaker.stateOf()).toBe('open');
    expect(seen[0]).toEqual({ ok: true, value: { status: 503 } });
  });

  it('by default no value is a failure: the same 503s leave the breaker closed', async () => {
    const m = member();
    const r = await calls(m, 8, () => ({ status: 503 }));
    expect(r.refused).toBe(0);
    expect(m.breaker.stateOf()).toBe('closed');
  });

  it('an async isFailure is awaited in a pipeline, and gets the attempt’s context', async () => {
    const contexts: number[] = [];
    const m = member({
      isFailure: async (o, context) => {
        contexts.push((context as AttemptContext).attempt);
        await new Promise((r) => setImmediate(r));
        return !o.ok;
      },
    });
    const r = await calls(m, 8, () => Promise.reject(new Error('down')));
    expect(r.refused).toBe(3);
    expect(contexts).toEqual([1, 1, 1, 1, 1]);
  });

  it('an error isFailure calls no failure counts for nothing: the member stays closed', async () => {
    const m = member({ isFailure: (o) => !o.ok && (o.error as Error).message !== 'not found' });
    const r = await calls(m, 10, () => Promise.reject(new Error('not found')));
    expect(r.refused).toBe(0);
    expect(m.breaker.stateOf()).toBe('closed');
  });

  it('by default a bug in the caller’s code, an abort and stop(error) count for nothing; a refusal from inside never counts', async () => {
    const thrown = [
      new TypeError('x.y is not a function'),
      Object.assign(new Error('aborted'), { name: 'AbortError' }),
      stop(new Error('404')),
    ];
    for (const error of thrown) {
      const m = member();
      expect((await calls(m, 8, () => Promise.reject(error))).refused).toBe(0);
    }
    // A full limit inside the breaker: the call never reached the service, whatever isFailure says.
    const m = member({ isFailure: () => true });
    expect((await calls(m, 8, () => Promise.reject(new LimitExceededError('queue-full', 1, 'full')))).refused).toBe(0);
  });

  it('a success slower than slowCallMs counts as a failure', async () => {
    const m = member({ slowCallMs: 100 });
    const api = pipeline([m.breaker]);
    for (let i = 0; i < 5; i++) {
      const done = api.execute(() => m.clock.sleep(150).then(() => 1));
      await settle();
      await m.clock.advance(150);
      expect(await done).toBe(1);
    }
    await settle();
    expect(m.breaker.stateOf()).toBe('open');
  });

  it('record() judges the value it is given; an async isFailure there is refused with a TypeError and the ticket goes back', async () => {
    const m = member({ isFailure: (o: Result<number>) => o.ok && o.value === 503 });
    for (let i = 0; i < 5; i++) {
      const t = await m.breaker.acquire();
      m.breaker.record('success', t, 503);
      await m.clock.advance(20);
    }
    expect(m.breaker.stateOf()).toBe('open');
    const a = member({ isFailure: async () => true });
    const t = await a.breaker.acquire();
    expect(() => a.breaker.record('failure', t, new Error('down'))).toThrow(/isFailure.*promise/);
    // The ticket was handed back: recording it again counts nothing and throws nothing.
    expect(() => a.breaker.record('failure', t, new Error('down'))).not.toThrow();
  });

  it('forKey() guards are pipeline mechanisms too: an async isFailure judges their values', async () => {
    const m = member({ isFailure: async (o: Result<number>) => o.ok && o.value === 503 });
    const api = pipeline([m.breaker.forKey('route-a')]);
    for (let i = 0; i < 5; i++) {
      expect(await api.execute(() => 503)).toBe(503);
      await m.clock.advance(20);
      await settle();
    }
    expect(m.breaker.stateOf('route-a')).toBe('open');
    expect(m.breaker.stateOf('')).toBe('closed');
  });
});
