// The rate law is a pure step (rate/law.ts): it reads no clock, starts no timer, does no I/O, and
// never changes the state it is given — every step returns a new record, or the same one when
// nothing changes. Its agreement with the fleet's Lua law is test/redis/rate-law-step.test.ts;
// its behaviour, through adaptiveRate, is adaptive-rate.test.ts.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { charge, fall, initialState, LAW, type LawState, lawParams, planRise, rise, succeeded, waited } from './law.js';

const DEFAULTS = {
  decreaseFactor: 0.5,
  increase: 0.1,
  coolOffMs: 1000,
  maxCoolOffMs: 8000,
  margin: 0.05,
  minRatePerSecond: 1,
  maxRatePerSecond: Infinity,
};

describe('the rate law is a pure step over an explicit state', () => {
  it('imports nothing: no clock, timer, Redis or other module can reach it', () => {
    const source = readFileSync(new URL('./law.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/^\s*import\b/m);
    expect(source).not.toMatch(/\b(Date\.now|performance\.now|setTimeout|setInterval|Math\.random)\b/);
  });

  it('never changes the state it is given, for any trace of successes, waits, throttles and ticks', () => {
    const p = lawParams(DEFAULTS);
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            kind: fc.constantFrom('success', 'wait', 'throttle', 'tick', 'read'),
            dtMs: fc.integer({ min: 0, max: 3000 }),
            delivered: fc.double({ min: -1, max: 200, noNaN: true }),
            count: fc.integer({ min: 0, max: 40 }),
          }),
          { maxLength: 200 },
        ),
        (events) => {
          let s: LawState = Object.freeze(initialState(p, 40, 0));
          let now = 0;
          for (const e of events) {
            now += e.dtMs;
            const copy = { ...s };
            let next: LawState = s;
            if (e.kind === 'success') next = rise(succeeded(s, now), p, now);
            else if (e.kind === 'wait') next = waited(rise(s, p, now), now);
            else if (e.kind === 'throttle') {
              const m = { sent: 40, delivered: e.delivered, count: e.count, spanMs: 1000, refused: false };
              next = fall(rise(charge(s, p, now, false), p, now), p, now, m);
            } else if (e.kind === 'read') planRise(s, p, now);
            else next = rise(s, p, now);
            // The frozen input is unchanged (a write to it would have thrown in strict mode).
            expect(s).toEqual(copy);
            s = Object.freeze(next);
          }
        },
      ),
    );
  });

  it('a step that changes nothing returns the same record (the caller can tell a rise by identity)', () => {
    const p = lawParams(DEFAULTS);
    const s = initialState(p, 40, 0);
    expect(rise(s, p, 0)).toBe(s);
    expect(charge(s, p, 0, false)).toBe(s);
    const ready = waited(succeeded(s, 0), 0);
    expect(succeeded(ready, 1)).toBe(ready);
    expect(waited(ready, 1)).toBe(ready);
    expect(rise(ready, p, 1000)).not.toBe(ready);
    expect(rise(ready, p, 1000).rate).toBe(44);
  });

  it('the constants are one table, and the derived parameters follow it', () => {
    expect(LAW).toEqual({
      additiveRate: 5,
      probeBudget: 0.02,
      probeSpread: 1,
      convexKeep: 0.75,
      tolerance: 1e-9,
      minDelivered: 10,
      slackRequests: 2,
      longEvent: 2,
    });
    const p = lawParams(DEFAULTS);
    // (1 − 0.05) / 0.75 − 1 = 26.7 %, above twice the base step (20 %), below 1 / 0.5 − 1.
    expect(p.convexStep).toBeCloseTo(0.95 / 0.75 - 1, 12);
    expect(p.maxStep).toBe(1);
    // 1 s doubled three times reaches 8 s.
    expect(p.maxRelapses).toBe(3);
    expect(lawParams({ ...DEFAULTS, maxCoolOffMs: 8001 }).maxRelapses).toBe(4);
    expect(lawParams({ ...DEFAULTS, maxCoolOffMs: 1000 }).maxRelapses).toBe(0);
  });
});
