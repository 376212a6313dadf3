import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { virtualClock } from '../core/virtual-clock.js';
import { pipeline } from '../retry/pipeline.js';
import { retrying } from '../retry/retrying.js';
import { timeout } from '../retry/timeout.js';
import { concurrencyLimit, LimitExceededError } from './concurrency-limit.js';
import { aimd, bdp, gradient2, type LimitAlgorithm, vegas } from './limit-algorithms.js';

const feed = (a: LimitAlgorithm, samples: [rttMs: number, inflight: number, dropped?: boolean][]) =>
  samples.map(([rttMs, inflight, dropped = false]) => {
    a.update({ rttMs, inflight, dropped });
    return a.limit;
  });

describe('limit algorithms against scripted latencies (formulas of Netflix concurrency-limits)', () => {
  it('aimd: +1 while at least half the limit is in use, ×0.9 on a drop or a timeout, floors at minLimit', () => {
    const a = aimd({ initialLimit: 10, minLimit: 8, slowCallMs: 100 });
    expect(
      feed(a, [
        [10, 5], // 5·2 >= 10: +1
        [10, 11], // +1
        [10, 2], // app-limited: unchanged
        [10, 12, true], // ⌊12·0.9⌋ = 10
        [101, 10], // slower than slowCallMs: a drop, ⌊10·0.9⌋ = 9
        [10, 9, true], // min(8, ⌊9·0.9⌋ = 8) = 8
        [10, 9, true], // minLimit holds
      ]),
    ).toEqual([11, 12, 12, 10, 9, 8, 8]);
    const small = aimd({ initialLimit: 3 });
    expect(feed(small, [[1, 3, true]])).toEqual([2]); // ⌊3·0.9⌋ = 2, and at least limit − 1
  });

  it('vegas: learns the no-load RTT, grows fast with no queue, shrinks when the queue passes beta', () => {
    const a = vegas({ initialLimit: 20, random: () => 0.999 });
    expect(
      feed(a, [
        [10, 20], // first sample: rttNoLoad = 10, no change
        [10, 20], // queue ⌈20·(1 − 10/10)⌉ = 0 <= log10Root(20) = 1: + 6·1 = 26
        [10.3, 26], // queue ⌈26·(1 − 10/10.3)⌉ = 1 <= 1 (the threshold is inclusive): + 6 = 32
        [20, 32], // queue ⌈32·0.5⌉ = 16 > 6: − 1 = 31
        [12, 31], // queue ⌈31·(1 − 10/12)⌉ = 6: not above beta (6), not below alpha (3): unchanged
        [11, 31], // queue ⌈31/11⌉ = 3, not < 3: unchanged
        [10, 5], // app-limited: unchanged
        [10, 31, true], // a drop: − 1 = 30
      ]),
    ).toEqual([20, 26, 32, 31, 31, 31, 31, 30]);
  });

  it('gradient2: limit·clamp(longRtt/rtt, 0.5, 1) + queueSize, smoothed 0.2, within [minLimit, maxLimit]', () => {
    const a = gradient2({ initialLimit: 20, minLimit: 10, maxLimit: 30 });
    // Steady 10 ms at full use: gradient 1, each step 0.8·L + 0.2·(L + 4) = L + 0.8.
    const steady = feed(
      a,
      Array.from({ length: 10 }, () => [10, 40] as [number, number]),
    );
    expect(steady).toEqual([20, 21, 22, 23, 24, 24, 25, 25, 26, 27].map((_, i) => Math.floor(20 + 0.8 * (i + 1))));
    // Overload: rtt 40 ms, long average (plain over 11 samples) 12.7 ms → gradient 0.5 (clamped).
    const before = 20 + 0.8 * 10;
    const long = (10 * 10 + 40) / 11;
    const gradient = Math.max(0.5, Math.min(1, long / 40));
    expect(feed(a, [[40, 40]])).toEqual([Math.floor(before * 0.8 + (before * gradient + 4) * 0.2)]);
    const g = gradient2({ initialLimit: 20, minLimit: 20, maxLimit: 20 });
    expect(
      feed(g, [
        [1, 40],
        [100, 40],
      ]),
    ).toEqual([20, 20]);
    // After a long overload the long-term average would lag for hundreds of samples; it decays
    // by 10 % a sample while it is more than twice the sample, so a later rise in latency shows.
    const d = gradient2({ initialLimit: 40, minLimit: 1 });
    feed(
      d,
      Array.from({ length: 10 }, () => [100, 80] as [number, number]),
    );
    feed(
      d,
      Array.from({ length: 10 }, () => [10, 80] as [number, number]),
    );
    const beforeRise = d.limit;
    feed(d, [[60, 80]]); // long ≈ 100·0.9^10 ≈ 35 < 60: gradient ≈ 0.58, the limit falls
    expect(d.limit).toBeLessThan(beforeRise);
    const idle = gradient2({ initialLimit: 40, minLimit: 1 });
    expect(
      feed(idle, [
        [100, 1],
        [1, 1],
      ]),
    ).toEqual([40, 40]); // app-limited: never moves
  });

  it('bdp: ⌈gain × the best mean delivery rate of the last rounds (this one once half the limit reported) × min RTT⌉, +1 a sample at most', () => {
    const a = bdp({ initialLimit: 4, probeRounds: Infinity });
    const step = (rttMs: number, delivered: number, dropped = false) => {
      a.update({ rttMs, inflight: 0, dropped, delivered });
      return a.limit;
    };
    // Round 1: four requests admitted together come back after 128 ms having seen 1, 2, 3, 4
    // completions; kept at initialLimit until four are done, then the round's mean (2.5 a round
    // trip): ⌈1.25 × 2.5⌉ = 4.
    expect([step(128, 1), step(128, 2), step(128, 3), step(128, 4)]).toEqual([4, 4, 4, 4]);
    // Round 2: four requests admitted as those completed each see 4 completions. Round 1's mean
    // holds until half the limit (2) has reported in round 2; then round 2's, 4 a round
    // trip: ⌈1.25 × 4⌉ = 5.
    expect([step(128, 4), step(128, 4), step(128, 4), step(128, 4)]).toEqual([4, 5, 5, 5]);
    // A request admitted after round 2 began comes back: round 3 begins, round 2's mean (4) holds.
    expect(step(128, 4)).toBe(5);
    // A drop forgets the finished rounds; the current round's mean, (4/128 + 4/256) ÷ 2 × 128 = 3,
    // gives ⌈3.75⌉ = 4.
    expect(step(256, 4, true)).toBe(4);
    // A faster RTT lowers minRtt to 64: mean (4/128 + 4/256 + 4/64) ÷ 3 × 64 × 1.25 = 2.9 → 3.
    expect(step(64, 4)).toBe(3);
    // A sample without a usable `delivered` (another limiter's, or hostile) adds no rate sample.
    for (const delivered of [undefined, Number.NaN, -1, 0, 1e308, Infinity, '9', [9], { valueOf: () => 9 }]) {
      a.update({ rttMs: 64, inflight: 0, dropped: false, delivered: delivered as number });
    }
    expect(a.limit).toBe(3);
  });

  // A closed loop against a service of `perMs` capacity and `baseMs` latency (Little's law): each
  // round trip, the `limit` requests in flight come back, each having seen `limit` completions.
  const loop = (a: LimitAlgorithm, rounds: number, baseMs: number, perMs: number): number[] => {
    const limits: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const inflight = a.limit;
      const rttMs = Math.max(baseMs, inflight / perMs);
      for (let i = 0; i < inflight; i++) a.update({ rttMs, inflight, dropped: false, delivered: inflight });
      limits.push(a.limit);
    }
    return limits;
  };

  it('bdp: grows at most 25 % past the most in flight and settles between the product and 1.25 × it, whatever the service', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.double({ min: 1, max: 2_000, noNaN: true }),
        fc.integer({ min: 1, max: 40 }),
        (product, baseMs, initialLimit) => {
          // A probe every 10 round trips: a limit that starts above the product never sees the
          // unloaded RTT otherwise (every request queues), and settles too high.
          const a = bdp({ initialLimit, probeRounds: 10 });
          const limits = loop(a, 200, baseMs, product / baseMs);
          // Growth: never 25 % (+ 1 for rounding) past the most the service has had in flight.
          let most = initialLimit;
          for (const l of limits) {
            expect(l).toBeLessThanOrEqual(Math.max(initialLimit, Math.ceil(1.25 * most) + 1));
            most = Math.max(most, l);
          }
          // + 1: the rate's rounding. Between probes the limit keeps the service busy.
          const settled = Math.max(...limits.slice(-30));
          expect(settled).toBeGreaterThanOrEqual(product);
          expect(settled).toBeLessThanOrEqual(Math.ceil(1.25 * product) + 1);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('bdp: the best rate ages out after `rounds` round trips, and a probe re-measures the no-load RTT', () => {
    // 1/16 a ms × 128 ms: a bandwidth-delay product of 8; the limit settles at ⌈1.25 × 8⌉ = 10.
    const fixed = bdp({ initialLimit: 2, probeRounds: Infinity });
    const probing = bdp({ initialLimit: 2, probeRounds: 20 });
    expect(loop(fixed, 30, 128, 1 / 16).at(-1)).toBe(10);
    expect(loop(probing, 19, 128, 1 / 16).at(-1)).toBe(10);
    // The service slows for good: 384 ms at the same 1/16 a ms (a product of 24). With the old
    // minRtt the rate looks like a third of the product, so the limit sinks to minLimit; the probe
    // (half the limit for two round trips) learns 384 ms, and the limit climbs to ⌈1.25 × 24⌉.
    expect(loop(fixed, 60, 384, 1 / 16).at(-1)).toBe(1);
    const after = loop(probing, 60, 384, 1 / 16);
    expect(Math.min(...after)).toBeLessThanOrEqual(5);
    expect(after.at(-1)).toBe(30);
    // Capacity halves (1/32 a ms: a product of 4): once the best rounds age out (2 here, 10 by
    // default) the limit follows to ⌈1.25 × 4⌉; with 10 rounds it has not yet.
    const short = bdp({ initialLimit: 2, rounds: 2, probeRounds: Infinity });
    const long = bdp({ initialLimit: 2, probeRounds: Infinity });
    loop(short, 30, 128, 1 / 16);
    loop(long, 30, 128, 1 / 16);
    expect(loop(short, 8, 128, 1 / 32).at(-1)).toBe(5);
    expect(loop(long, 8, 128, 1 / 32).at(-1)).toBe(10);
  });

  it('bdp: the probe halves the limit for two round trips, every probeRounds, and learns only from requests admitted during it', () => {
    const p = bdp({ initialLimit: 2, probeRounds: 20 });
    const limits = loop(p, 45, 128, 1 / 16);
    expect(limits.slice(0, 6)).toEqual([3, 4, 5, 6, 8, 10]); // ⌈1.25 × L⌉ a round trip, up to ⌈1.25 × 8⌉
    // Below 10 after that: the probes only — two round trips at ⌈10 / 2⌉ = 5, then one a sample back
    // to 10 — the first after round trip 20, the next 20 round trips after the first one ended.
    const low = limits.flatMap((l, i) => (i >= 6 && l < 10 ? [[i, l]] : []));
    expect(low).toEqual([
      [19, 5],
      [20, 5],
      [21, 7],
      [41, 5],
      [42, 5],
      [43, 7],
    ]);
    // Step by step: probeRounds 2, one request at a time.
    const a = bdp({ initialLimit: 1, probeRounds: 2 });
    const step = (rttMs: number, delivered: number) => {
      a.update({ rttMs, inflight: 0, dropped: false, delivered });
      return a.limit;
    };
    expect(step(128, 1)).toBe(2); // minRtt 128, rate 1/128: ⌈1.25⌉
    expect(step(128, 1)).toBe(1); // the second round trip ends: the probe begins, ⌈2 / 2⌉
    // A request admitted before the probe returns in 100 ms: it raises the rate (2 completions)
    // but not the minRtt the probe is measuring: it did not run at the probe's half limit.
    expect(step(100, 2)).toBe(2);
    // The service has slowed to 384 ms; two requests admitted during the probe end it: minRtt 384,
    // and the best round's rate (1/128 + 2/100) / 2 gives ⌈1.25 × 0.0139 × 384⌉ = 7, one a sample.
    // Had the 100-ms sample counted, minRtt would be 100 and the target ⌈1.74⌉ = 2.
    expect([step(384, 1), step(384, 1), step(384, 1)]).toEqual([2, 3, 4]);
  });

  it('rejects bad options naming them', () => {
    expect(() => aimd({ backoffRatio: 1 })).toThrow(/backoffRatio/);
    expect(() => aimd({ backoffRatio: 0.4 })).toThrow(RangeError);
    expect(() => aimd({ minLimit: 10, maxLimit: 5 })).toThrow(/maxLimit/);
    expect(() => aimd({ initialLimit: 500 })).toThrow(/initialLimit/);
    expect(() => vegas({ smoothing: 0 })).toThrow(/smoothing/);
    expect(() => gradient2({ longWindow: 0 })).toThrow(/longWindow/);
    expect(() => concurrencyLimit({ maxQueue: -1 })).toThrow(/maxQueue/);
    expect(() => concurrencyLimit({ algorithm: {} as never })).toThrow(/algorithm/);
    expect(() => bdp({ gain: 4.5 })).toThrow(
      'bdp(): expected `gain` to be a number from 1 to 4, got 4.5. For example 1.25.',
    );
    expect(() => bdp({ rounds: 1001 })).toThrow(
      'bdp(): expected `rounds` to be a whole number from 1 to 1000, got 1001. For example 10.',
    );
    expect(() => bdp({ rounds: Infinity })).toThrow(
      'bdp(): expected `rounds` to be a whole number >= 1, got Infinity. For example 10.',
    );
    expect(() => bdp({ probeRounds: 1 })).toThrow(
      'bdp(): expected `probeRounds` to be a whole number >= 2 (or Infinity), got 1. For example 100.',
    );
    expect(bdp({ gain: 1, rounds: 1_000, probeRounds: 2, initialLimit: 3, minLimit: 2, maxLimit: 9 }).limit).toBe(3);
    for (const make of [aimd, vegas, gradient2, bdp] as ((o: unknown) => LimitAlgorithm)[]) {
      fc.assert(
        fc.property(
          fc.constantFrom(
            'initialLimit',
            'minLimit',
            'maxLimit',
            'smoothing',
            'backoffRatio',
            'slowCallMs',
            'queueSize',
            'gain',
            'rounds',
            'probeRounds',
          ),
          fc.oneof(fc.anything(), fc.constantFrom(Number.NaN, Infinity, -Infinity, -0, 2 ** 53, 1e308, 0.5)),
          (name, value) => {
            try {
              make({ [name]: value });
            } catch (error) {
              expect(error instanceof TypeError || error instanceof RangeError).toBe(true);
              expect((error as Error).message).toMatch(
                new RegExp(`\`(${name}|minLimit|maxLimit|initialLimit)\`|unknown option \`${name}\``),
              );
            }
          },
        ),
        { numRuns: 500 },
      );
    }
  });

  it('any sample sequence keeps every limit a whole number within its bounds', () => {
    const sample = fc.tuple(
      fc.oneof(fc.double({ min: 0, max: 1e6, noNaN: true }), fc.constantFrom(Number.NaN, Infinity, 0, -1, 1e308)),
      fc.integer({ min: 0, max: 2_000 }),
      fc.boolean(),
      fc.oneof(fc.integer({ min: 0, max: 3_000 }), fc.anything()),
    );
    fc.assert(
      fc.property(fc.array(sample, { maxLength: 300 }), (samples) => {
        const b = bdp({ minLimit: 2, maxLimit: 50, initialLimit: 3, probeRounds: 5 });
        for (const [rttMs, inflight, dropped, delivered] of samples) {
          b.update({ rttMs, inflight, dropped, delivered: delivered as number });
          expect(Number.isInteger(b.limit)).toBe(true);
          expect(b.limit).toBeGreaterThanOrEqual(2);
          expect(b.limit).toBeLessThanOrEqual(50);
        }
        for (const [a, lo, hi] of [
          [aimd({ minLimit: 2, maxLimit: 50, initialLimit: 10 }), 2, 50],
          [vegas({ maxLimit: 50, initialLimit: 10, random: () => 0.5 }), 1, 50],
          [gradient2({ minLimit: 5, maxLimit: 50, initialLimit: 10 }), 5, 50],
        ] as const) {
          for (const l of feed(
            a,
            samples.map(([r, i, d]) => [r, i, d] as [number, number, boolean]),
          )) {
            expect(Number.isInteger(l)).toBe(true);
            expect(l).toBeGreaterThanOrEqual(lo);
            expect(l).toBeLessThanOrEqual(hi);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('concurrencyLimit', () => {
  it('defaults to bdp(), which starts at a limit of 1 and keeps it until a request completes', async () => {
    const clock = virtualClock();
    const limiter = concurrencyLimit({ clock });
    expect(limiter.limit).toBe(1);
    expect(bdp().limit).toBe(1);
    const first = limiter.acquire();
    expect(() => limiter.acquire()).toThrow(LimitExceededError);
    await clock.advance(100);
    limiter.record('success', first);
    // One completion at 1 in flight: rate 1 per 100 ms × minRtt 100 ms × gain 1.25 → 2.
    expect(limiter.limit).toBe(2);
    // gradient2()'s own floor, the default before: never below 20.
    expect(gradient2().limit).toBe(20);
  });

  const fixed = (n: number): LimitAlgorithm => ({ limit: n, update() {} });

  it('admits up to the limit at once, queues up to maxQueue, refuses beyond, and hands freed slots on in order', async () => {
    const clock = virtualClock();
    const limiter = concurrencyLimit({ algorithm: fixed(2), maxQueue: 2, clock });
    const a = limiter.acquire();
    const b = limiter.acquire();
    expect(a).not.toBeInstanceOf(Promise);
    const c = limiter.acquire() as Promise<unknown>;
    const d = limiter.acquire() as Promise<unknown>;
    expect(() => limiter.acquire()).toThrow(LimitExceededError);
    expect(limiter).toMatchObject({ inflight: 2, queued: 2 });
    const order: string[] = [];
    c.then(() => order.push('c'));
    d.then(() => order.push('d'));
    limiter.record('success', a);
    await clock.advance(0);
    expect(order).toEqual(['c']);
    limiter.release(b);
    limiter.release(b); // twice: ignored
    await clock.advance(0);
    expect(order).toEqual(['c', 'd']);
    expect(limiter).toMatchObject({ inflight: 2, queued: 0 });
  });

  it('a wait past maxWaitMs rejects; an abort removes the waiter and leaves no timer', async () => {
    const clock = virtualClock();
    const limiter = concurrencyLimit({ algorithm: fixed(1), maxQueue: 5, maxWaitMs: 100, clock });
    limiter.acquire();
    const late = (limiter.acquire() as Promise<unknown>).catch((e: unknown) => e);
    const controller = new AbortController();
    const aborted = (limiter.acquire(controller.signal) as Promise<unknown>).catch((e: unknown) => e);
    controller.abort(new Error('stop'));
    expect(await aborted).toMatchObject({ message: 'stop' });
    expect(limiter.queued).toBe(1);
    await clock.advance(100);
    expect(await late).toMatchObject({ name: 'LimitExceededError', reason: 'wait' });
    expect(limiter.queued).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('priorities: served first, and a full queue makes the lowest newest waiter give way', async () => {
    const clock = virtualClock();
    const limiter = concurrencyLimit({ algorithm: fixed(1), maxQueue: 2, maxWaitMs: Infinity, clock });
    const high = limiter.withPriority(1);
    const first = limiter.acquire();
    const low1 = (limiter.acquire() as Promise<unknown>).then(
      () => 'low1',
      (e: LimitExceededError) => e.reason,
    );
    const low2 = (limiter.acquire() as Promise<unknown>).then(
      () => 'low2',
      (e: LimitExceededError) => e.reason,
    );
    const h = (high.acquire() as Promise<unknown>).then(() => 'high');
    expect(await low2).toBe('displaced');
    expect(() => limiter.acquire()).toThrow(/maxQueue/);
    limiter.record('success', first);
    expect(await h).toBe('high');
    expect(limiter.queued).toBe(1);
    await clock.advance(0);
    expect(await Promise.race([low1, Promise.resolve('waiting')])).toBe('waiting');
  });

  it('feeds the algorithm round trip, inflight at admission and drops; ignores other failures', async () => {
    const clock = virtualClock();
    const seen: unknown[] = [];
    const limiter = concurrencyLimit({
      clock,
      algorithm: { limit: 5, update: (s) => seen.push({ ...s }) },
    });
    const a = limiter.acquire();
    const b = limiter.acquire();
    await clock.advance(30);
    limiter.record('success', a);
    limiter.record('failure', b, Object.assign(new Error('503'), { status: 503 }));
    const c = limiter.acquire();
    limiter.record('failure', c, new Error('404-ish'));
    const d = limiter.acquire();
    limiter.record('throttled', d);
    // delivered: successes completed while the request was in flight, its own included.
    expect(seen).toEqual([
      { rttMs: 30, inflight: 1, dropped: false, delivered: 1 },
      { rttMs: 30, inflight: 2, dropped: true, delivered: 1 },
      { rttMs: 0, inflight: 1, dropped: true, delivered: 0 },
    ]);
    expect(limiter.inflight).toBe(0);
  });

  it('in a pipeline: a slot held by an attempt is freed on success, failure, timeout and abort', async () => {
    const clock = virtualClock();
    const limiter = concurrencyLimit({ algorithm: fixed(1), maxQueue: 10, maxWaitMs: Infinity, clock });
    const retry = retrying({ clock, backoff: constant({ delayMs: 5, maxAttempts: 2, jitter: noJitter }) });
    const call = pipeline([retry, limiter]);
    expect(await call.execute(() => 'ok')).toBe('ok');
    expect(limiter.inflight).toBe(0);
    const retried = call.execute((c) => (c.attempt === 1 ? Promise.reject(new Error('x')) : 'ok'));
    await clock.runAll();
    expect(await retried).toBe('ok');
    expect(limiter.inflight).toBe(0);
    const timedOut = pipeline([retry, limiter, timeout(10, { clock })])
      .execute(() => new Promise(() => {}))
      .catch((e: unknown) => e);
    await clock.runAll();
    expect(await timedOut).toMatchObject({ name: 'RetryError' });
    expect(limiter.inflight).toBe(0);
    const controller = new AbortController();
    const hanging = call.execute(() => new Promise(() => {}), { signal: controller.signal }).catch((e: unknown) => e);
    await clock.advance(1);
    expect(limiter.inflight).toBe(1);
    controller.abort(new Error('stop'));
    await hanging;
    expect(limiter).toMatchObject({ inflight: 0, queued: 0 });
  });
});

describe('concurrencyLimit: invariants under random use', () => {
  type Step =
    | { op: 'acquire'; priority: number; abort: boolean }
    | { op: 'end'; i: number; how: 'success' | 'failure' | 'throttled' | 'release' | 'twice' | 'foreign' }
    | { op: 'advance'; ms: number };
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ op: fc.constant('acquire' as const), priority: fc.integer({ min: 0, max: 2 }), abort: fc.boolean() }),
    fc.record({
      op: fc.constant('end' as const),
      i: fc.nat(60),
      how: fc.constantFrom('success', 'failure', 'throttled', 'release', 'twice', 'foreign'),
    }),
    fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 300 }) }),
  );

  it('never holds more slots than the limit, never loses or double-frees one, and leaves no timer once everything ends', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 80 }), fc.integer({ min: 1, max: 4 }), async (steps, limit) => {
        const clock = virtualClock();
        const limiter = concurrencyLimit({
          clock,
          algorithm: { limit, update() {} },
          maxQueue: 3,
          maxWaitMs: 200,
        });
        const granted: unknown[] = [];
        const ended = new Set<number>();
        const controllers: AbortController[] = [];
        for (const s of steps) {
          if (s.op === 'advance') await clock.advance(s.ms);
          else if (s.op === 'acquire') {
            const controller = new AbortController();
            controllers.push(controller);
            try {
              const got = limiter.withPriority(s.priority).acquire(controller.signal);
              if (got instanceof Promise)
                got.then(
                  (t) => granted.push(t),
                  () => {},
                );
              else granted.push(got);
            } catch (error) {
              expect(error).toBeInstanceOf(LimitExceededError);
            }
            if (s.abort) controller.abort(new Error('stop'));
            await clock.advance(0);
          } else {
            const t = granted[s.i];
            if (t === undefined) continue;
            if (s.how === 'foreign') {
              // Not a ticket of this limiter: ignored, and `t` stays held.
              limiter.record('success', { start: 0, inflight: 1, done: false });
              limiter.release({});
              continue;
            }
            if (s.how === 'release') limiter.release(t);
            else if (s.how === 'twice') {
              limiter.record('success', t);
              limiter.release(t);
            } else limiter.record(s.how, t, new Error('x'));
            ended.add(s.i);
            await clock.advance(0);
          }
          const open = granted.filter((_, i) => !ended.has(i)).length;
          expect(limiter.inflight).toBe(open);
          expect(limiter.inflight).toBeLessThanOrEqual(limit);
          expect(limiter.queued).toBeLessThanOrEqual(3);
        }
        // End everything: each round frees slots that queued requests may take.
        for (let round = 0; round < 6; round++) {
          for (let i = 0; i < granted.length; i++) {
            if (!ended.has(i)) {
              limiter.release(granted[i]);
              ended.add(i);
            }
          }
          await clock.advance(0);
        }
        await clock.runAll();
        expect(limiter.inflight).toBe(granted.length - ended.size);
        expect(limiter.inflight).toBe(0);
        expect(limiter.queued).toBe(0);
        expect(clock.pending).toBe(0);
      }),
      { numRuns: 200 },
    );
  });
});
