import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import type { AttemptContext } from '../retry/options.js';
import { hedging } from './hedging.js';

const always = { tryAcquireRetry: () => true, recordSuccess() {} };

/** An operation whose n-th call (0-based) takes `times[n]` ms of virtual time and resolves with n; records aborts. */
function scripted(clock: ReturnType<typeof virtualClock>, times: number[]) {
  const aborted: number[] = [];
  let n = 0;
  const op = ({ signal }: AttemptContext) => {
    const i = n++;
    signal.addEventListener('abort', () => aborted.push(i));
    return clock.sleep(times[i] as number, signal).then(() => i);
  };
  return { op, aborted, calls: () => n };
}

describe('hedging', () => {
  it('a call faster than the delay is not hedged', async () => {
    const clock = virtualClock();
    const h = hedging({ delayMs: 50, clock, budget: always });
    const s = scripted(clock, [40]);
    const p = h.run(s.op);
    await clock.runAll();
    expect(await p).toBe(0);
    expect(s.calls()).toBe(1);
    expect(h.stats).toEqual({ calls: 1, hedges: 0 });
  });

  it('a slow call is hedged after the delay; the first success wins and the loser is aborted', async () => {
    const clock = virtualClock();
    const h = hedging({ delayMs: 50, clock, budget: always });
    const s = scripted(clock, [1_000, 30]);
    const p = h.run(s.op);
    await clock.runAll();
    expect(await p).toBe(1);
    expect(clock.now()).toBe(80);
    expect(s.aborted).toEqual([0]);
    expect(h.stats.hedges).toBe(1);
  });

  it('each attempt gets retry()’s context: attempt, elapsedMs, and a signal made when first read, aborted for a loser', async () => {
    const clock = virtualClock();
    const h = hedging({ delayMs: 50, clock, budget: always });
    const seen: { attempt: number; elapsedMs: number }[] = [];
    const contexts: AttemptContext[] = [];
    const p = h.run((context) => {
      seen.push({ attempt: context.attempt, elapsedMs: context.elapsedMs });
      contexts.push(context);
      // Neither attempt reads its signal while it runs.
      return clock.sleep(context.attempt === 1 ? 1_000 : 30).then(() => context.attempt);
    });
    await clock.advance(80);
    expect(await p).toBe(2);
    expect(seen).toEqual([
      { attempt: 1, elapsedMs: 0 },
      { attempt: 2, elapsedMs: 50 },
    ]);
    // Read after the call settled: the loser's signal is born aborted, the winner's is not.
    const [first, second] = contexts as [AttemptContext, AttemptContext];
    expect(first.signal.aborted).toBe(true);
    expect(first.signal.reason).toMatchObject({ name: 'AbortError', message: 'Another hedged attempt won.' });
    expect(second.signal.aborted).toBe(false);
    expect(first.signal).toBe(first.signal); // made once
    await clock.runAll();
  });

  it('the primary can still win; then the hedge is aborted', async () => {
    const clock = virtualClock();
    const h = hedging({ delayMs: 50, clock, budget: always });
    const s = scripted(clock, [60, 1_000]);
    const p = h.run(s.op);
    await clock.runAll();
    expect(await p).toBe(0);
    expect(s.aborted).toEqual([1]);
  });

  it('never hedges a non-idempotent call', async () => {
    const clock = virtualClock();
    const h = hedging({ delayMs: 10, clock, budget: always });
    for (const call of [{ method: 'POST' }, { method: 'patch' }, { idempotent: false }]) {
      const s = scripted(clock, [1_000, 1]);
      const p = h.run(s.op, call);
      await clock.runAll();
      expect(await p).toBe(0);
      expect(s.calls()).toBe(1);
    }
    const s = scripted(clock, [1_000, 1]);
    const p = h.run(s.op, { method: 'get' });
    await clock.runAll();
    expect(await p).toBe(1);
  });

  it('the default budget holds hedges to its share when every call is slow (5 %, or 1/s over 10 s if more)', async () => {
    const clock = virtualClock();
    const h = hedging({ delayMs: 10, clock });
    const calls = 2_000;
    const all = Array.from({ length: calls }, () => h.run(({ signal }) => clock.sleep(100, signal)));
    await clock.runAll();
    await Promise.all(all);
    expect(h.stats.calls).toBe(calls);
    expect(h.stats.hedges).toBeGreaterThan(0);
    expect(h.stats.hedges).toBe(0.05 * calls); // all 2,000 arrive at once, inside one window
    const few = hedging({ delayMs: 10, clock });
    const quiet = Array.from({ length: 40 }, () => few.run(({ signal }) => clock.sleep(100, signal)));
    await clock.runAll();
    await Promise.all(quiet);
    expect(few.stats.hedges).toBe(10); // the floor: 1 a second over the 10-s window
    const refused = hedging({ delayMs: 10, clock, budget: { tryAcquireRetry: () => false, recordSuccess() {} } });
    const s = scripted(clock, [100, 1]);
    const p = refused.run(s.op);
    await clock.runAll();
    expect(await p).toBe(0);
    expect(s.calls()).toBe(1);
  });

  it('learns the delay: the percentile of recent successes once minSamples are in', async () => {
    const clock = virtualClock();
    const h = hedging({ percentile: 0.9, minSamples: 10, initialDelayMs: 500, clock, budget: always });
    expect(h.delayMs).toBe(500);
    for (let ms = 10; ms >= 1; ms--) {
      const p = h.run(({ signal }) => clock.sleep(ms, signal));
      await clock.runAll();
      await p;
    }
    // Latencies 1…10 ms: the 0.9 quantile (index ⌊0.9·10⌋ = 9 of the sorted samples) is 10 ms.
    expect(h.delayMs).toBe(10);
    const q = hedging({ percentile: 0.5, minSamples: 10, clock, budget: always });
    for (let ms = 1; ms <= 10; ms++) {
      const p = q.run(({ signal }) => clock.sleep(ms * 3, signal));
      await clock.runAll();
      await p;
    }
    expect(q.delayMs).toBe(18); // sorted 3, 6, …, 30: index 5
  });

  it('learns each call’s latency from its first attempt’s start, also when a hedge won', async () => {
    const clock = virtualClock();
    // percentile 1: the delay is the largest latency learned, so each step shows what was learned.
    const h = hedging({ percentile: 1, minSamples: 1, initialDelayMs: 50, clock, budget: always });
    const s = scripted(clock, [1_000, 30, 95, 1_000, 1_000, 1_000]);
    const learned: number[] = [];
    for (let call = 0; call < 3; call++) {
      const p = h.run(s.op);
      await clock.runAll();
      await p;
      learned.push(h.delayMs);
    }
    // Call 1: the hedge starts at 50 and wins at 80 — the call took 80 ms, its winner 30.
    // Call 2: the first attempt wins at 95, its hedge (started at 80) aborted. Call 3: the hedge
    // starts at 95; the first attempt wins at 1,000, before the hedge's 1,095.
    expect(learned).toEqual([80, 95, 1_000]);
    expect(s.aborted).toEqual([0, 3, 5]);
  });

  it('property: the learned delay is the percentile of the last 1,000 successes, across the ring’s wrap-around', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.integer({ min: 0, max: 3_000 }), fc.constantFrom(0, 1, 2)), {
          minLength: 1,
          maxLength: 2_600,
          size: 'max',
        }),
        fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0.5, 0.9, 0.95, 0.99)),
        fc.integer({ min: 1, max: 1_000 }),
        async (latencies, percentile, minSamples) => {
          const clock = virtualClock();
          const h = hedging({ percentile, minSamples, initialDelayMs: 7, maxHedges: 0, clock, budget: always });
          for (const [i, ms] of latencies.entries()) {
            const p = h.run(({ signal }) => clock.sleep(ms, signal));
            await clock.runAll();
            await p;
            // The reference: sort the window the way the first version did, on every call.
            const window = latencies.slice(Math.max(0, i + 1 - 1_000), i + 1).sort((a, b) => a - b);
            const expected =
              window.length < minSamples
                ? 7
                : window[Math.min(window.length - 1, Math.floor(percentile * window.length))];
            if (i % 97 === 0 || i === latencies.length - 1) expect(h.delayMs).toBe(expected);
          }
        },
      ),
      { numRuns: 12, endOnFailure: true }, // no shrinking: a counterexample is thousands of calls
    );
  }, 60_000);

  it('an abort aborts every attempt; when all attempts fail, the last failure rejects', async () => {
    const clock = virtualClock();
    const h = hedging({ delayMs: 10, clock, budget: always });
    const s = scripted(clock, [1_000, 1_000]);
    const controller = new AbortController();
    const p = h.run(s.op, { signal: controller.signal }).catch((e: unknown) => e);
    await clock.advance(20);
    controller.abort(new Error('stop'));
    expect(await p).toMatchObject({ message: 'stop' });
    expect(s.aborted.sort()).toEqual([0, 1]);
    let n = 0;
    const failing = h
      .run(({ signal }) => clock.sleep(n++ === 0 ? 30 : 40, signal).then(() => Promise.reject(new Error(`e${n}`))))
      .catch((e: unknown) => e);
    await clock.runAll();
    expect(await failing).toMatchObject({ message: 'e2' });
    expect(clock.pending).toBe(0);
  });

  it('rejects bad options naming them', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('delayMs', 'percentile', 'minSamples', 'initialDelayMs', 'maxHedges', 'budget', 'clock'),
        fc.oneof(fc.anything(), fc.constantFrom(Number.NaN, Infinity, -Infinity, -0, 2 ** 53, 1e308, -1)),
        (name, value) => {
          try {
            hedging({ [name]: value });
          } catch (error) {
            expect(error instanceof TypeError || error instanceof RangeError).toBe(true);
            expect((error as Error).message).toContain(`\`${name}`);
          }
        },
      ),
      { numRuns: 1_000 },
    );
  });
});

describe('hedging(): options', () => {
  it('a fixed delayMs beside an option of the learned delay is refused: the other would be ignored', () => {
    expect(() => hedging({ delayMs: 50, percentile: 0.95 })).toThrow(
      new TypeError('hedging(): `percentile` is for a learned delay, and `delayMs` fixes it. Give one or the other.'),
    );
    expect(() => hedging({ delayMs: 50, minSamples: 10 })).toThrow(/`minSamples` is for a learned delay/);
    expect(() => hedging({ delayMs: 50, initialDelayMs: 10 })).toThrow(/`initialDelayMs` is for a learned delay/);
    expect(() => hedging({ percentile: 0.9, minSamples: 10, initialDelayMs: 10 })).not.toThrow();
    expect(() => hedging({ delayMs: 50 })).not.toThrow();
  });
});
