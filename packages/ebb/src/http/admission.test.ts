import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seeded } from '../core/random.js';
import { Admission, Entry, MAX_RETRY_AFTER_MS } from './admission.js';
import { parseRetryAfter } from './retry-after.js';

describe('Admission', () => {
  it('runs up to maxConcurrent, queues up to maxQueue in order, refuses the rest', () => {
    const gate = new Admission('t', { maxConcurrent: 2, maxQueue: 2 });
    const started: number[] = [];
    const entries = Array.from({ length: 6 }, (_, i) => new Entry(() => started.push(i)));
    expect(entries.map((e) => gate.admit(e))).toEqual([true, true, true, true, false, false]);
    expect(started).toEqual([0, 1]);
    gate.release(entries[1] as Entry);
    expect(started).toEqual([0, 1, 2]);
    gate.release(entries[0] as Entry);
    expect(started).toEqual([0, 1, 2, 3]);
    expect(gate.stats()).toEqual({
      running: 2,
      queued: 0,
      admitted: 4,
      shed: 2,
      left: 0,
      peakRunning: 2,
      peakQueued: 2,
    });
  });

  it('an entry that leaves the queue is never started, and frees its place at once', () => {
    const gate = new Admission('t', { maxConcurrent: 1, maxQueue: 1 });
    const started: string[] = [];
    const a = new Entry(() => started.push('a'));
    const b = new Entry(() => started.push('b'));
    const c = new Entry(() => started.push('c'));
    gate.admit(a);
    gate.admit(b);
    gate.release(b); // b's client went away
    expect(gate.admit(c)).toBe(true); // b's place in the queue is free again
    gate.release(a);
    expect(started).toEqual(['a', 'c']);
    expect(gate.stats().left).toBe(1);
  });

  it('releasing twice, or releasing a finished entry, changes nothing', () => {
    const gate = new Admission('t', { maxConcurrent: 1, maxQueue: 0 });
    const a = new Entry(() => {});
    gate.admit(a);
    gate.release(a);
    gate.release(a);
    expect(gate.stats().running).toBe(0);
    expect(gate.admit(new Entry(() => {}))).toBe(true);
    expect(gate.stats().running).toBe(1);
  });

  it('a handler that throws while being started from the queue does not stall the entries behind it', async () => {
    const gate = new Admission('t', { maxConcurrent: 1, maxQueue: 2 });
    const started: string[] = [];
    const thrown: unknown[] = [];
    const first = new Entry(() => started.push('first'));
    const bad = new Entry(() => {
      throw new Error('handler bug');
    });
    const after = new Entry(() => started.push('after'));
    gate.admit(first);
    gate.admit(bad);
    gate.admit(after);
    // queueMicrotask rethrows where nothing catches it: observe it as the process would.
    const onUncaught = (e: unknown) => thrown.push(e);
    const listeners = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    process.on('uncaughtException', onUncaught);
    try {
      gate.release(first); // starts `bad`, which throws; its slot stays taken until it is released
      expect(gate.stats().running).toBe(1);
      gate.release(bad);
      expect(started).toEqual(['first', 'after']);
      await new Promise((r) => setImmediate(r));
      expect((thrown[0] as Error).message).toBe('handler bug');
    } finally {
      process.removeAllListeners('uncaughtException');
      for (const l of listeners) process.on('uncaughtException', l);
    }
  });

  it('never exceeds its limits and loses nothing, over random arrivals, releases and departures (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 0, max: 5 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        (maxConcurrent, maxQueue, seed) => {
          const random = seeded(seed);
          const gate = new Admission('t', { maxConcurrent, maxQueue });
          const live: { entry: Entry; id: number }[] = [];
          const startedOrder: number[] = [];
          const queuedOrder: number[] = [];
          let refused = 0;
          let left = 0;
          for (let id = 0; id < 200; id++) {
            const r = random();
            if (r < 0.5 || live.length === 0) {
              const entry = new Entry(() => startedOrder.push(id));
              const wasFull = gate.running === maxConcurrent;
              if (gate.admit(entry)) {
                live.push({ entry, id });
                if (wasFull) queuedOrder.push(id);
              } else refused++;
            } else {
              const k = Math.floor(random() * live.length);
              const { entry } = live.splice(k, 1)[0] as { entry: Entry };
              if (entry.state === 'queued') left++;
              gate.release(entry);
            }
            if (gate.running > maxConcurrent) throw new Error(`running ${gate.running} > ${maxConcurrent}`);
            if (gate.queued > maxQueue) throw new Error(`queued ${gate.queued} > ${maxQueue}`);
            // No idle slot while someone waits.
            if (gate.queued > 0 && gate.running !== maxConcurrent)
              throw new Error('a slot idles while a request waits');
          }
          const s = gate.stats();
          expect(s.shed).toBe(refused);
          expect(s.left).toBe(left);
          // Started exactly once each, and queued entries in arrival order.
          expect(new Set(startedOrder).size).toBe(startedOrder.length);
          const startedFromQueue = startedOrder.filter((id) => queuedOrder.includes(id));
          expect(startedFromQueue).toEqual([...startedFromQueue].sort((a, b) => a - b));
          expect(s.admitted).toBe(startedOrder.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('checks its options, naming the option, the value and the fix', () => {
    expect(() => new Admission('shed()', {} as never)).toThrow(
      'shed(): expected `maxConcurrent` to be a whole number >= 1, got undefined. It is how many requests run at once, such as 8.',
    );
    expect(() => new Admission('shed()', { maxConcurrent: 0 })).toThrow(RangeError);
    expect(() => new Admission('shed()', { maxConcurrent: 1.5 })).toThrow(RangeError);
    expect(() => new Admission('shed()', { maxConcurrent: 1, maxQueue: -1 })).toThrow(RangeError);
    expect(() => new Admission('shed()', { maxConcurrent: 1, retryAfterMs: -5 })).toThrow(RangeError);
    expect(() => new Admission('shed()', { maxConcurrent: 1, maxQeue: 1 } as never)).toThrow(
      'Did you mean `maxQueue`?',
    );
    expect(new Admission('shed()', { maxConcurrent: 1, maxQueue: Infinity }).maxQueue).toBe(Infinity);
  });

  it('writes every accepted retryAfterMs as delay-seconds digits, and refuses what cannot be', () => {
    const gate = (retryAfterMs: number) => new Admission('shed()', { maxConcurrent: 1, retryAfterMs });
    expect(String(gate(MAX_RETRY_AFTER_MS).retryAfterSeconds)).toBe('2147483647');
    expect(() => gate(MAX_RETRY_AFTER_MS + 1)).toThrow(RangeError);
    expect(() => gate(1e24)).toThrow(
      'shed(): expected `retryAfterMs` to be at most 2147483647000 (2^31 − 1 seconds), got 1e+24.',
    );
    expect(() => gate(Infinity)).toThrow(RangeError);
    expect(() => gate(Number.NaN)).toThrow(RangeError);
    fc.assert(
      fc.property(fc.double({ min: 0, max: MAX_RETRY_AFTER_MS, noNaN: true }), (ms) => {
        const header = String(gate(ms).retryAfterSeconds);
        expect(header).toMatch(/^\d+$/);
        // The client reads back at least the wait asked for, never less (rounded up to the second).
        expect(parseRetryAfter(header)).toBeGreaterThanOrEqual(ms);
        expect(parseRetryAfter(header)).toBeLessThanOrEqual(ms + 1000);
      }),
      { numRuns: 2_000 },
    );
  });

  it('rounds retryAfterMs up to whole seconds, the unit of Retry-After', () => {
    expect(new Admission('t', { maxConcurrent: 1 }).retryAfterSeconds).toBe(1);
    expect(new Admission('t', { maxConcurrent: 1, retryAfterMs: 0 }).retryAfterSeconds).toBe(0);
    expect(new Admission('t', { maxConcurrent: 1, retryAfterMs: 1 }).retryAfterSeconds).toBe(1);
    expect(new Admission('t', { maxConcurrent: 1, retryAfterMs: 2500 }).retryAfterSeconds).toBe(3);
  });
});
