import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { exponential } from '../backoff/exponential.js';
import { fullJitter } from '../backoff/jitter-full.js';
import { noJitter } from '../backoff/jitter-none.js';
import { seeded } from '../core/random.js';
import { virtualClock } from '../core/virtual-clock.js';
import { RetryError } from '../retry/errors.js';
import { pipeline } from '../retry/pipeline.js';
import { retrying } from '../retry/retrying.js';
import { timeout } from '../retry/timeout.js';
import { type CircuitBreakerOptions, circuitBreaker, type StateChange } from './circuit-breaker.js';
import { BrokenCircuitError } from './errors.js';

/** 1 s, 2 s, 4 s, 8 s, 8 s, … with no jitter: open periods exact. */
const doubling = exponential({ initialDelayMs: 1_000, maxDelayMs: 8_000, jitter: noJitter });

function setup(options: CircuitBreakerOptions = {}) {
  const clock = virtualClock(1_000);
  const changes: string[] = [];
  const breaker = circuitBreaker({
    clock,
    openBackoff: doubling,
    onStateChange: (c: StateChange) => {
      changes.push(`${c.from}>${c.to} ${c.reason}${c.openMs === undefined ? '' : ` ${c.openMs}`} @${c.at}`);
    },
    ...options,
  });
  const fail = (error: unknown = new Error('x')) => breaker.record('failure', breaker.acquire(), error);
  const succeed = () => breaker.record('success', breaker.acquire());
  const refusal = (attempt?: number) => {
    try {
      breaker.acquire(undefined, attempt);
    } catch (error) {
      return error as BrokenCircuitError;
    }
    throw new Error('admitted');
  };
  return { clock, breaker, changes, fail, succeed, refusal };
}

describe('circuitBreaker: transitions', () => {
  it('opens after consecutiveFailures in a row; a success resets the count', () => {
    const { breaker, changes, fail, succeed } = setup({ consecutiveFailures: 3 });
    fail();
    fail();
    succeed();
    fail();
    fail();
    expect(breaker.state).toBe('closed');
    expect(breaker.metrics.consecutiveFailures).toBe(2);
    fail();
    expect(breaker.state).toBe('open');
    expect(changes).toEqual(['closed>open consecutive-failures 1000 @1000']);
  });

  it('fails fast while open with the time left, then lets exactly maxHalfOpenProbes probes through', async () => {
    const { clock, breaker, changes, fail, refusal } = setup({ consecutiveFailures: 1, maxHalfOpenProbes: 2 });
    fail();
    await clock.advance(400);
    const e = refusal();
    expect(e).toBeInstanceOf(BrokenCircuitError);
    expect(e).toMatchObject({ name: 'BrokenCircuitError', code: 'EBB_CIRCUIT_OPEN', state: 'open', retryAfterMs: 600 });
    expect(e.message).toMatch(/open .*600 ms/);
    expect(breaker.retryAfterMs).toBe(600);
    await clock.advance(599);
    expect(refusal().retryAfterMs).toBe(1);
    await clock.advance(1);
    expect(breaker.state).toBe('half-open');
    const p1 = breaker.acquire();
    const p2 = breaker.acquire();
    expect(refusal()).toMatchObject({ state: 'half-open', retryAfterMs: 0 });
    breaker.release(p2);
    const p3 = breaker.acquire();
    expect(refusal().state).toBe('half-open');
    breaker.record('success', p1);
    expect(breaker.state).toBe('closed');
    // p3 belonged to the half-open period: its late failure counts for nothing now.
    breaker.record('failure', p3, new Error('late'));
    expect(breaker.state).toBe('closed');
    expect(changes).toEqual([
      'closed>open consecutive-failures 1000 @1000',
      'open>half-open open-period-over @2000',
      'half-open>closed probes-succeeded @2000',
    ]);
  });

  it('grows the open period by the backoff on every failed probe and starts over on close', async () => {
    const { clock, breaker, fail, succeed } = setup({ consecutiveFailures: 1 });
    const periods: number[] = [];
    fail();
    for (let i = 0; i < 5; i++) {
      periods.push(breaker.retryAfterMs);
      await clock.advance(breaker.retryAfterMs);
      fail(); // the probe fails
    }
    periods.push(breaker.retryAfterMs);
    expect(periods).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
    await clock.advance(8_000);
    succeed(); // the probe succeeds
    expect(breaker.state).toBe('closed');
    fail();
    expect(breaker.retryAfterMs).toBe(1_000);
  });

  it('keeps the last period when the open backoff stops', async () => {
    const { clock, breaker, fail } = setup({
      consecutiveFailures: 1,
      openBackoff: exponential({ initialDelayMs: 100, multiplier: 3, maxAttempts: 3, jitter: noJitter }),
    });
    const periods: number[] = [];
    fail();
    for (let i = 0; i < 4; i++) {
      periods.push(breaker.retryAfterMs);
      await clock.advance(breaker.retryAfterMs);
      fail();
    }
    // maxAttempts 3 gives two waits (100, 300); then the policy stops and 300 stays.
    expect(periods).toEqual([100, 300, 300, 300]);
  });

  it('needs successesToClose successful probes; one failed probe reopens', async () => {
    const { clock, breaker, changes, fail } = setup({ consecutiveFailures: 1, successesToClose: 2 });
    fail();
    await clock.advance(1_000);
    breaker.record('success', breaker.acquire());
    expect(breaker.state).toBe('half-open');
    breaker.record('success', breaker.acquire());
    expect(breaker.state).toBe('closed');
    fail();
    await clock.advance(1_000);
    breaker.record('success', breaker.acquire());
    breaker.record('failure', breaker.acquire(), new Error('again'));
    expect(breaker.state).toBe('open');
    expect(breaker.retryAfterMs).toBe(2_000);
    expect(changes.at(-1)).toBe('half-open>open probe-failed 2000 @3000');
  });

  it('opens on the failure rate over a count window, only once it holds minCalls', () => {
    const { breaker, changes, fail, succeed } = setup({
      consecutiveFailures: Infinity,
      failureRate: 0.5,
      minCalls: 4,
      windowCalls: 4,
    });
    fail();
    fail();
    fail();
    expect(breaker.state).toBe('closed'); // 3 of 3 failed, but fewer than minCalls
    succeed();
    expect(breaker.state).toBe('closed'); // a success never opens
    expect(breaker.metrics).toMatchObject({ calls: 4, failures: 3 });
    succeed();
    succeed();
    succeed();
    expect(breaker.metrics).toMatchObject({ calls: 4, failures: 0 }); // the window slid past the failures
    fail();
    expect(breaker.state).toBe('closed'); // 1 of 4
    fail();
    expect(breaker.state).toBe('open'); // 2 of 4 = 0.5
    expect(changes).toEqual(['closed>open failure-rate 1000 @1000']);
  });

  it('opens on the failure rate over a time window, where old calls age out', async () => {
    const { clock, breaker, fail, succeed } = setup({
      consecutiveFailures: Infinity,
      failureRate: 0.6,
      minCalls: 3,
      windowMs: 1_000,
    });
    fail();
    fail();
    await clock.advance(1_000);
    succeed();
    succeed();
    fail();
    expect(breaker.metrics).toMatchObject({ calls: 3, failures: 1 });
    expect(breaker.state).toBe('closed');
    await clock.advance(500);
    fail();
    expect(breaker.metrics).toMatchObject({ calls: 4, failures: 2 });
    expect(breaker.state).toBe('closed'); // 2 of 4
    fail();
    expect(breaker.state).toBe('open'); // 3 of 5 = 0.6; without aging, 5 of 7
    expect(breaker.metrics).toMatchObject({ calls: 0, failures: 0 }); // opening starts the window afresh
  });

  it('counts a success slower than slowCallMs as a failure', async () => {
    const { clock, breaker } = setup({ consecutiveFailures: 2, slowCallMs: 100 });
    const call = async (ms: number) => {
      const t = breaker.acquire();
      await clock.advance(ms);
      breaker.record('success', t);
    };
    await call(100);
    await call(101);
    expect(breaker.metrics.consecutiveFailures).toBe(1);
    await call(99);
    expect(breaker.metrics.consecutiveFailures).toBe(0);
    await call(150);
    await call(150);
    expect(breaker.state).toBe('open');
  });

  it('a slow probe reopens the circuit', async () => {
    const { clock, breaker, fail } = setup({ consecutiveFailures: 1, slowCallMs: 50 });
    fail();
    await clock.advance(1_000);
    const probe = breaker.acquire();
    await clock.advance(60);
    breaker.record('success', probe);
    expect(breaker.state).toBe('open');
  });

  it('counts only what isFailure accepts, and ignores the rest', () => {
    const { breaker, fail } = setup({
      consecutiveFailures: 2,
      isFailure: (o) => !o.ok && (o.error as { status?: number }).status !== 404,
    });
    fail({ status: 503 });
    fail({ status: 404 });
    expect(breaker.metrics.consecutiveFailures).toBe(1);
    fail({ status: 500 });
    expect(breaker.state).toBe('open');
  });

  it('retriesOnly: first attempts go through while open and count once half-open; retries fail fast', async () => {
    const { clock, breaker, fail, refusal } = setup({ consecutiveFailures: 1, retriesOnly: true });
    fail();
    expect(refusal(2).state).toBe('open');
    const first = breaker.acquire(undefined, 1);
    breaker.record('success', first); // counts for nothing while open
    expect(breaker.state).toBe('open');
    await clock.advance(1_000);
    const probe = breaker.acquire(undefined, 2);
    expect(refusal(3).state).toBe('half-open');
    breaker.acquire(undefined, 1); // first attempts take no probe slot
    breaker.record('success', probe);
    expect(breaker.state).toBe('closed');
  });

  it('ignores outcomes of calls admitted before the last state change', async () => {
    const { clock, breaker, fail } = setup({ consecutiveFailures: 2 });
    const slow = breaker.acquire();
    fail();
    fail();
    await clock.advance(1_000);
    breaker.record('success', breaker.acquire());
    expect(breaker.state).toBe('closed');
    breaker.record('failure', slow, new Error('stale'));
    expect(breaker.metrics.consecutiveFailures).toBe(0);
  });

  it('isolate() refuses everything, retries-only first attempts included, until reset()', () => {
    const { breaker, changes, refusal } = setup({ retriesOnly: true });
    breaker.isolate();
    expect(refusal(1)).toMatchObject({ state: 'isolated', retryAfterMs: Infinity });
    expect(breaker.state).toBe('isolated');
    breaker.reset();
    expect(breaker.state).toBe('closed');
    breaker.acquire();
    expect(changes).toEqual(['closed>isolated isolate @1000', 'isolated>closed reset @1000']);
  });

  it('a listener that throws on open-period-over harms nothing: the call becomes the probe, and its success closes', async () => {
    const { clock, breaker, fail } = setup({ consecutiveFailures: 1 });
    fail();
    await clock.advance(1_000);
    const stop = breaker.subscribe((c) => {
      if (c.to === 'half-open') throw new Error('listener');
    });
    const probe = breaker.acquire();
    stop();
    breaker.record('success', probe);
    expect(breaker.state).toBe('closed');
  });

  it('a policy whose next() is NaN fails the call that would open, and leaves the breaker closed', () => {
    const bad = { maxElapsedMs: Infinity, start: () => ({ next: () => Number.NaN }) };
    const { breaker, fail } = setup({ consecutiveFailures: 1, openBackoff: bad });
    expect(() => fail()).toThrow(RangeError);
    expect(() => fail()).toThrow(/openBackoff's next\(\) returned NaN/);
    expect(breaker.state).toBe('closed');
  });
});

describe('circuitBreaker: snapshot and restore', () => {
  it('resumes the open period and its backoff where the snapshot left them', async () => {
    const a = setup({ consecutiveFailures: 1 });
    a.fail();
    await a.clock.advance(1_000);
    a.fail(); // probe fails: 2 s
    await a.clock.advance(500);
    const saved = JSON.parse(JSON.stringify(a.breaker.snapshot()));
    expect(saved).toEqual({ state: 'open', openings: 2, openRemainingMs: 1_500, consecutiveFailures: 0 });
    const b = setup({ consecutiveFailures: 1, restore: saved });
    expect(b.breaker.state).toBe('open');
    expect(b.breaker.retryAfterMs).toBe(1_500);
    await b.clock.advance(1_500);
    b.fail(); // its probe fails: the third period, 4 s
    expect(b.breaker.retryAfterMs).toBe(4_000);
  });

  it('restores closed counts, half-open as a due probe, and isolation', async () => {
    const closed = setup({
      consecutiveFailures: 3,
      restore: { state: 'closed', openings: 0, openRemainingMs: 0, consecutiveFailures: 2 },
    });
    closed.fail();
    expect(closed.breaker.state).toBe('open');
    const half = setup({ restore: { state: 'half-open', openings: 1, openRemainingMs: 0, consecutiveFailures: 0 } });
    expect(half.breaker.state).toBe('half-open');
    half.breaker.acquire();
    expect(half.refusal().state).toBe('half-open');
    const iso = setup({ restore: { state: 'isolated', openings: 0, openRemainingMs: 0, consecutiveFailures: 0 } });
    expect(iso.refusal().state).toBe('isolated');
  });

  it('refuses a malformed snapshot naming the field', () => {
    const base = { state: 'open', openings: 1, openRemainingMs: 5, consecutiveFailures: 0 } as const;
    expect(() => circuitBreaker({ restore: { ...base, state: 'ajar' as never } })).toThrow(/restore\.state/);
    expect(() => circuitBreaker({ restore: { ...base, openings: -1 } })).toThrow(RangeError);
    expect(() => circuitBreaker({ restore: { ...base, openings: 1e9 } })).toThrow(/restore\.openings/);
    expect(() => circuitBreaker({ restore: { ...base, openRemainingMs: Number.NaN } })).toThrow(/openRemainingMs/);
    expect(() => circuitBreaker({ restore: null as never })).toThrow(TypeError);
  });
});

describe('circuitBreaker: inside retrying() in a pipeline', () => {
  it("one breaker guards many operations; an open circuit's refusal is backed off until the open period ends, never calling the dead service meanwhile", async () => {
    const clock = virtualClock();
    const breaker = circuitBreaker({
      clock,
      consecutiveFailures: 3,
      openBackoff: constant({ delayMs: 10_000, jitter: noJitter }),
    });
    const calls: number[] = [];
    const down = () => {
      calls.push(clock.now());
      throw new Error('503');
    };
    const call = pipeline([
      retrying({ clock, backoff: constant({ delayMs: 100, maxAttempts: 2, jitter: noJitter }) }),
      breaker,
    ]);
    const first = call.execute(down).catch((e: unknown) => e);
    const second = call.execute(down).catch((e: unknown) => e);
    await clock.advance(100);
    expect(await first).toMatchObject({ name: 'RetryError', cause: { message: '503' } });
    // The third failure (the first operation's attempt 2) opened it: the second operation's
    // attempt 2 was refused, and with no attempt left the refusal is its last error.
    const refused = (await second) as RetryError;
    expect(refused).toBeInstanceOf(RetryError);
    expect(refused.cause).toBeInstanceOf(BrokenCircuitError);
    expect(calls).toEqual([0, 0, 100]);
    // A new operation while open: attempt 1 is refused; the retry waits the rest of the open
    // period (the refusal's retryAfterMs, 10 s, not the policy's 100 ms), then probes.
    const third = call.execute(down).catch((e: unknown) => e);
    await clock.runAll();
    expect(await third).toMatchObject({ name: 'RetryError', attempts: 2, cause: { message: '503' } });
    expect(calls).toEqual([0, 0, 100, 10_100]);
    // Isolated: the refusal's wait is endless, so the retry gives up at once (reason retry-after).
    breaker.isolate();
    const isolated = (await call.execute(down).catch((e: unknown) => e)) as RetryError;
    expect(isolated).toMatchObject({ name: 'RetryError', reason: 'retry-after', attempts: 1 });
    expect(isolated.cause).toBeInstanceOf(BrokenCircuitError);
    expect(calls).toHaveLength(4);
  });

  it('an abort during a probe frees the probe slot', async () => {
    const clock = virtualClock();
    const breaker = circuitBreaker({
      clock,
      consecutiveFailures: 1,
      openBackoff: constant({ delayMs: 1_000, jitter: noJitter }),
    });
    breaker.record('failure', breaker.acquire(), new Error('x'));
    await clock.advance(1_000);
    const controller = new AbortController();
    const call = pipeline([retrying({ clock }), breaker]);
    const probe = call.execute(() => new Promise(() => {}), { signal: controller.signal });
    await clock.advance(1);
    expect(() => breaker.acquire()).toThrow(BrokenCircuitError); // the slot is taken
    controller.abort(new Error('stop'));
    await expect(probe).rejects.toThrow('stop');
    expect(await call.execute(() => 'up')).toBe('up');
    expect(breaker.state).toBe('closed');
  });

  it('a timed-out probe reopens the circuit', async () => {
    const clock = virtualClock();
    const breaker = circuitBreaker({ clock, consecutiveFailures: 1, openBackoff: doubling });
    breaker.record('failure', breaker.acquire(), new Error('x'));
    await clock.advance(1_000);
    const probe = pipeline([
      retrying({ clock, backoff: constant({ delayMs: 10, maxAttempts: 2, jitter: noJitter }) }),
      breaker,
      timeout(50, { clock }),
    ]).execute(() => new Promise(() => {}));
    const settled = probe.catch((e: unknown) => e);
    await clock.runAll();
    const error = (await settled) as RetryError;
    expect(error).toBeInstanceOf(RetryError);
    expect(error.cause).toBeInstanceOf(BrokenCircuitError);
    expect(breaker.retryAfterMs).toBe(2_000 - 10);
  });
});

describe('circuitBreaker: options', () => {
  const names = [
    'consecutiveFailures',
    'failureRate',
    'minCalls',
    'windowCalls',
    'windowMs',
    'slowCallMs',
    'maxHalfOpenProbes',
    'successesToClose',
    'openBackoff',
    'retriesOnly',
    'isFailure',
    'onStateChange',
    'restore',
    'clock',
    'random',
  ];

  it('any value of any option either builds a breaker or throws a TypeError/RangeError naming the option', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...names),
        fc.oneof(
          fc.anything(),
          fc.constantFrom(Number.NaN, Infinity, -Infinity, -0, 2 ** 53, 1e308, -1, 0.5, '5', null),
        ),
        (name, value) => {
          try {
            circuitBreaker({ [name]: value });
          } catch (error) {
            expect(error instanceof TypeError || error instanceof RangeError).toBe(true);
            expect((error as Error).message).toContain(`\`${name}`);
          }
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('names value and fix', () => {
    expect(() => circuitBreaker({ consecutiveFailures: 0 })).toThrow(
      /expected `consecutiveFailures` to be a whole number >= 1 \(or Infinity\), got 0\. For example 5/,
    );
    expect(() => circuitBreaker({ failureRate: 1.5 })).toThrow(RangeError);
    expect(() => circuitBreaker({ failureRate: 0 })).toThrow(/failureRate/);
    expect(() => circuitBreaker({ windowMs: 0 })).toThrow(/windowMs/);
    expect(() => circuitBreaker({ windowCalls: 10, windowMs: 10 })).toThrow(/not both/);
    expect(() => circuitBreaker({ failureRate: 0.5, minCalls: 200, windowCalls: 100 })).toThrow(/minCalls/);
    expect(() => circuitBreaker({ slowCallMs: -1 })).toThrow(/slowCallMs/);
    expect(() => circuitBreaker({ openBackoff: {} as never })).toThrow(/openBackoff/);
    expect(() => circuitBreaker({ retriesOnly: 'yes' as never })).toThrow(TypeError);
    expect(() => circuitBreaker({ maxHalfopenProbes: 1 } as never)).toThrow(/Did you mean `maxHalfOpenProbes`/);
    // The names of 0.1, refused with the new one.
    expect(() => circuitBreaker({ halfOpenProbes: 1 } as never)).toThrow(
      /circuitBreaker\(\): `halfOpenProbes` was renamed in 1.0: use `maxHalfOpenProbes`/,
    );
    expect(() => circuitBreaker({ minimumCalls: 1 } as never)).toThrow(
      /`minimumCalls` was renamed in 1.0: use `minCalls`/,
    );
    expect(() => circuitBreaker().record('oops' as never, undefined)).toThrow(/outcome/);
    // Other breakers' names, with ebb's: a count of failures is not the failureRate the spelling suggests.
    expect(() => circuitBreaker({ failureThreshold: 5 } as never)).toThrow(
      new TypeError(
        "circuitBreaker(): unknown option `failureThreshold` (another library's); failures in a row are `consecutiveFailures`; a share of the calls is `failureRate` (0 to 1).",
      ),
    );
    expect(() => circuitBreaker({ resetTimeout: 30_000 } as never)).toThrow(
      /`resetTimeout` \(another library's\); use `openBackoff: constant\(\{ delayMs, jitter: noJitter, maxAttempts: Infinity \}\)`/,
    );
    expect(() => circuitBreaker({ timeout: 3_000 } as never)).toThrow(/put `timeout\(ms\)` inside the breaker/);
    // The window's options without a failure rate would be ignored: refused, naming the missing option.
    expect(() => circuitBreaker({ minCalls: 20 })).toThrow(
      new TypeError(
        'circuitBreaker(): `minCalls` counts only with `failureRate`, which is not given. Add failureRate (such as 0.5), or leave minCalls out.',
      ),
    );
    expect(() => circuitBreaker({ windowMs: 10_000 })).toThrow(/`windowMs` counts only with `failureRate`/);
    expect(() => circuitBreaker({ failureRate: 0.5, minCalls: 20, windowMs: 10_000 })).not.toThrow();
  });
});

describe('circuitBreaker: invariants under random use', () => {
  type Step =
    | { op: 'acquire'; attempt: number }
    | { op: 'record'; i: number; outcome: 'success' | 'failure' | 'throttled' }
    | { op: 'release'; i: number }
    | { op: 'advance'; ms: number };
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ op: fc.constant('acquire' as const), attempt: fc.integer({ min: 1, max: 3 }) }),
    fc.record({
      op: fc.constant('record' as const),
      i: fc.nat(50),
      outcome: fc.constantFrom('success' as const, 'failure' as const, 'throttled' as const),
    }),
    fc.record({ op: fc.constant('release' as const), i: fc.nat(50) }),
    fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 3_000 }) }),
  );

  it('never runs more than maxHalfOpenProbes probes at once, never admits a retry while open, and periods stay within the backoff’s bounds', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { maxLength: 120 }),
        fc.integer({ min: 1, max: 3 }),
        fc.boolean(),
        fc.integer(),
        async (steps, probes, retriesOnly, seed) => {
          const clock = virtualClock();
          const openings: number[] = [];
          const breaker = circuitBreaker({
            clock,
            random: seeded(seed),
            consecutiveFailures: 2,
            maxHalfOpenProbes: probes,
            retriesOnly,
            openBackoff: exponential({ initialDelayMs: 100, maxDelayMs: 1_000, jitter: fullJitter }),
            onStateChange: (c) => {
              if (c.to === 'open') openings.push(c.openMs as number);
            },
          });
          const tickets: { t: unknown; done: boolean; probe: boolean }[] = [];
          for (const s of steps) {
            if (s.op === 'advance') await clock.advance(s.ms);
            else if (s.op === 'acquire') {
              const before = breaker.state;
              try {
                const t = breaker.acquire(undefined, s.attempt);
                const first = retriesOnly && s.attempt === 1;
                expect(before === 'open' && !first).toBe(false);
                expect(before).not.toBe('isolated');
                tickets.push({ t, done: false, probe: breaker.state === 'half-open' && !first });
              } catch (error) {
                expect(error).toBeInstanceOf(BrokenCircuitError);
                expect(before).not.toBe('closed');
              }
            } else {
              const entry = tickets[s.i];
              if (!entry || entry.done) continue;
              entry.done = true;
              if (s.op === 'release') breaker.release(entry.t);
              else breaker.record(s.outcome, entry.t, new Error('x'));
            }
            if (breaker.state !== 'half-open') for (const e of tickets) e.probe = false;
            const running = tickets.filter((e) => e.probe && !e.done).length;
            expect(running).toBeLessThanOrEqual(probes);
          }
          for (const ms of openings) {
            expect(ms).toBeGreaterThanOrEqual(0);
            expect(ms).toBeLessThan(1_000);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
