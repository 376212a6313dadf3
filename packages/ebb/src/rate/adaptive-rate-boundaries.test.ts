import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { VirtualClock } from '../core/virtual-clock.js';
import { type AdaptiveRateOptions, adaptiveRate as spreadRate } from './adaptive-rate.js';

// These tests specify the law's timing to the millisecond: a `random` that returns 0 draws no
// spread of the rises (law.ts, [spread]); rate/adaptive-rate-spread.test.ts specifies the spread.
const adaptiveRate = <T = unknown>(o?: AdaptiveRateOptions<T>) => spreadRate<T>({ random: () => 0, ...o });

import type { AdaptiveRateController } from './controller.js';
import { lateGrants, make, ok, throttle, turns } from './test-helpers.js';

/**
 * `n` loops that each acquire a turn and record a success, until `stop()`: the times of the
 * grants, and the ticket of the last one (for a throttle of the current round).
 */
function successLoops(rate: AdaptiveRateController, clock: VirtualClock, n: number) {
  const controller = new AbortController();
  const grants: number[] = [];
  let ticket: unknown;
  const loop = async () => {
    for (;;) {
      try {
        ticket = await rate.acquire(controller.signal);
      } catch {
        return;
      }
      grants.push(clock.now());
      rate.record('success', ticket);
    }
  };
  for (let i = 0; i < n; i++) loop();
  return { grants, last: () => ticket, stop: () => controller.abort() };
}

// Edges of adaptiveRate that the behaviour tests beside it leave open (what mutation testing found):
// the exact messages of bad options, the boundaries of each check, the server's hints read field
// by field, and the bookkeeping (pauses, paces, the delivered rate) seen through the public API.
// Every test is on virtual time.

/** The error `adaptiveRate(options)` throws: its class and its whole message. */
function thrown(options: unknown): [string, string] {
  try {
    adaptiveRate(options as AdaptiveRateOptions);
  } catch (error) {
    return [(error as Error).constructor.name, (error as Error).message];
  }
  throw new Error(`accepted ${JSON.stringify(options)}`);
}

/** Gaps between the grants of `n` requests queued at once, every sleep ending `lateMs` late. */
async function lateGaps(options: AdaptiveRateOptions, lateMs: number, n: number): Promise<number[]> {
  const times = await lateGrants(options, [lateMs], n);
  return times.slice(1).map((t, i) => t - (times[i] as number));
}

/** Grants one request at each of `times` (ms, ascending) on an unlimited controller. */
async function grantsAt(rate: AdaptiveRateController, clock: VirtualClock, times: readonly number[]): Promise<void> {
  for (const t of times) {
    await clock.advance(t - clock.now());
    expect(rate.acquire()).not.toBeInstanceOf(Promise);
  }
}

const every = (from: number, to: number, step: number): number[] =>
  Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);

const RATES = 'Rates are requests per second, such as 50.';

describe('adaptiveRate: options, exact messages', () => {
  it.each<[string, unknown, string, string]>([
    [
      'minRatePerSecond negative',
      { minRatePerSecond: -1 },
      'RangeError',
      `adaptiveRate(): expected \`minRatePerSecond\` to be a finite number >= 0, got -1. ${RATES}`,
    ],
    [
      'minRatePerSecond Infinity',
      { minRatePerSecond: Infinity },
      'RangeError',
      `adaptiveRate(): expected \`minRatePerSecond\` to be a finite number >= 0, got Infinity. ${RATES}`,
    ],
    [
      'minRatePerSecond 0',
      { minRatePerSecond: 0 },
      'RangeError',
      `adaptiveRate(): expected \`minRatePerSecond\` to be a number > 0, got 0. ${RATES}`,
    ],
    [
      'minRatePerSecond a string',
      { minRatePerSecond: '5' },
      'TypeError',
      `adaptiveRate(): expected \`minRatePerSecond\` to be a finite number >= 0, got "5". ${RATES}`,
    ],
    [
      'maxRatePerSecond negative',
      { maxRatePerSecond: -2 },
      'RangeError',
      `adaptiveRate(): expected \`maxRatePerSecond\` to be a number >= 0 (or Infinity for no limit), got -2. ${RATES}`,
    ],
    [
      'maxRatePerSecond 0',
      { maxRatePerSecond: 0 },
      'RangeError',
      `adaptiveRate(): expected \`maxRatePerSecond\` to be a number > 0, got 0. ${RATES}`,
    ],
    [
      'maxRatePerSecond below minRatePerSecond',
      { minRatePerSecond: 3, maxRatePerSecond: 2.5 },
      'RangeError',
      'adaptiveRate(): expected `maxRatePerSecond` to be a number >= minRatePerSecond (3), got 2.5.',
    ],
    [
      'initialRatePerSecond 0',
      { initialRatePerSecond: 0 },
      'RangeError',
      `adaptiveRate(): expected \`initialRatePerSecond\` to be a number > 0, got 0. ${RATES}`,
    ],
    [
      'initialRatePerSecond NaN',
      { initialRatePerSecond: Number.NaN },
      'RangeError',
      `adaptiveRate(): expected \`initialRatePerSecond\` to be a number >= 0 (or Infinity for no limit), got NaN. ${RATES}`,
    ],
    [
      'initialRatePerSecond below minRatePerSecond',
      { initialRatePerSecond: 1.5, minRatePerSecond: 2 },
      'RangeError',
      'adaptiveRate(): expected `initialRatePerSecond` to be a number from minRatePerSecond (2) to maxRatePerSecond (Infinity), got 1.5.',
    ],
    [
      'initialRatePerSecond above maxRatePerSecond',
      { initialRatePerSecond: 20.5, maxRatePerSecond: 20 },
      'RangeError',
      'adaptiveRate(): expected `initialRatePerSecond` to be a number from minRatePerSecond (1) to maxRatePerSecond (20), got 20.5.',
    ],
    [
      'decreaseFactor 1',
      { decreaseFactor: 1 },
      'RangeError',
      'adaptiveRate(): expected `decreaseFactor` to be a number between 0 and 1 (exclusive), got 1. For example 0.5 halves the rate.',
    ],
    [
      'decreaseFactor 0',
      { decreaseFactor: 0 },
      'RangeError',
      'adaptiveRate(): expected `decreaseFactor` to be a number between 0 and 1 (exclusive), got 0. For example 0.5 halves the rate.',
    ],
    [
      'decreaseFactor NaN',
      { decreaseFactor: Number.NaN },
      'RangeError',
      'adaptiveRate(): expected `decreaseFactor` to be a number between 0 and 1 (exclusive), got NaN. For example 0.5 halves the rate.',
    ],
    [
      'decreaseFactor a string',
      { decreaseFactor: '0.5' },
      'TypeError',
      'adaptiveRate(): expected `decreaseFactor` to be a number between 0 and 1 (exclusive), got "0.5". For example 0.5 halves the rate.',
    ],
    [
      'increase 0',
      { increase: 0 },
      'RangeError',
      'adaptiveRate(): expected `increase` to be a finite number > 0, got 0. For example 0.1 for +10 % a step.',
    ],
    [
      'increase Infinity',
      { increase: Infinity },
      'RangeError',
      'adaptiveRate(): expected `increase` to be a finite number > 0, got Infinity. For example 0.1 for +10 % a step.',
    ],
    [
      'increase a string',
      { increase: '0.1' },
      'TypeError',
      'adaptiveRate(): expected `increase` to be a finite number > 0, got "0.1". For example 0.1 for +10 % a step.',
    ],
    [
      // (1 + 0.1) × (1 / 1.1) is exactly 1 in doubles: the boundary itself is refused.
      'decreaseFactor at 1 / (1 + the default increase)',
      { decreaseFactor: 1 / 1.1 },
      'RangeError',
      'adaptiveRate(): expected `decreaseFactor` to be a number below 0.9090909090909091 with the default increase 0.1, got 0.9090909090909091. A rise must be smaller than a fall, or the rate oscillates: lower it, or pass a smaller `increase`.',
    ],
    [
      // 2 × 0.5 is exactly 1.
      'increase at 1 / decreaseFactor − 1',
      { increase: 1, decreaseFactor: 0.5 },
      'RangeError',
      'adaptiveRate(): expected `increase` to be a number below 1 with decreaseFactor 0.5, got 1. A rise must be smaller than a fall, or the rate oscillates.',
    ],
    [
      'coolOffMs 0',
      { coolOffMs: 0 },
      'RangeError',
      'adaptiveRate(): expected `coolOffMs` to be a number > 0, got 0. For example 1000.',
    ],
    [
      'coolOffMs negative',
      { coolOffMs: -1 },
      'RangeError',
      'adaptiveRate(): expected `coolOffMs` to be a finite number >= 0, got -1. Durations are milliseconds, such as 500.',
    ],
    [
      'maxCoolOffMs below coolOffMs',
      { coolOffMs: 2000, maxCoolOffMs: 1999 },
      'RangeError',
      'adaptiveRate(): expected `maxCoolOffMs` to be a number >= coolOffMs (2000), got 1999.',
    ],
    [
      'margin 0.5',
      { margin: 0.5 },
      'RangeError',
      'adaptiveRate(): expected `margin` to be a number from 0 up to (not including) 0.5, got 0.5. For example 0.05 to settle 5 % below the limit.',
    ],
    [
      'margin −0.01',
      { margin: -0.01 },
      'RangeError',
      'adaptiveRate(): expected `margin` to be a number from 0 up to (not including) 0.5, got -0.01. For example 0.05 to settle 5 % below the limit.',
    ],
    [
      'margin NaN',
      { margin: Number.NaN },
      'RangeError',
      'adaptiveRate(): expected `margin` to be a number from 0 up to (not including) 0.5, got NaN. For example 0.05 to settle 5 % below the limit.',
    ],
    [
      'margin a string',
      { margin: '0.1' },
      'TypeError',
      'adaptiveRate(): expected `margin` to be a number from 0 up to (not including) 0.5, got "0.1". For example 0.05 to settle 5 % below the limit.',
    ],
    [
      'priorities not an array',
      { priorities: 'high' },
      'TypeError',
      `adaptiveRate(): expected \`priorities\` to be a non-empty array of distinct names, got "high". For example ['high', 'low'].`,
    ],
    [
      'priorities empty',
      { priorities: [] },
      'TypeError',
      `adaptiveRate(): expected \`priorities\` to be a non-empty array of distinct names, got an array. For example ['high', 'low'].`,
    ],
    [
      'priorities with a number',
      { priorities: ['normal', 1] },
      'TypeError',
      `adaptiveRate(): expected \`priorities\` to be a non-empty array of distinct names, got an array. For example ['high', 'low'].`,
    ],
    [
      'priorities with an empty name',
      { priorities: ['normal', ''] },
      'TypeError',
      `adaptiveRate(): expected \`priorities\` to be a non-empty array of distinct names, got an array. For example ['high', 'low'].`,
    ],
    [
      'priorities with a duplicate',
      { priorities: ['normal', 'low', 'normal'] },
      'TypeError',
      `adaptiveRate(): expected \`priorities\` to be a non-empty array of distinct names, got an array. For example ['high', 'low'].`,
    ],
    [
      'defaultPriority left out, "normal" not a class',
      { priorities: ['a', 'b'] },
      'TypeError',
      'adaptiveRate(): expected `defaultPriority` to be one of the priorities ("a", "b"), got "normal". Name the class of requests made through the controller itself.',
    ],
    [
      'defaultPriority not a class',
      { defaultPriority: 'urgent' },
      'TypeError',
      'adaptiveRate(): expected `defaultPriority` to be one of the priorities ("high", "normal", "low"), got "urgent".',
    ],
    [
      'defaultPriority a number',
      { priorities: ['1', '2'], defaultPriority: 1 },
      'TypeError',
      'adaptiveRate(): expected `defaultPriority` to be one of the priorities ("1", "2"), got 1.',
    ],
    [
      'maxRetryAfterMs negative',
      { maxRetryAfterMs: -5 },
      'RangeError',
      'adaptiveRate(): expected `maxRetryAfterMs` to be a finite number >= 0, got -5. Durations are milliseconds, such as 500.',
    ],
    [
      'an unknown option',
      { coolOff: 5 },
      'TypeError',
      'adaptiveRate(): unknown option `coolOff`. Did you mean `coolOffMs`? Known options: initialRatePerSecond, decreaseFactor, coolOffMs, maxCoolOffMs, margin, increase, minRatePerSecond, maxRatePerSecond, priorities, defaultPriority, maxRetryAfterMs, isFailure, clock, random.',
    ],
  ])('%s', (_, options, type, message) => {
    expect(thrown(options)).toEqual([type, message]);
  });

  it('accepts each boundary that is inside: margin 0, initial = min = max, maxCoolOffMs = coolOffMs, maxRatePerSecond = minRatePerSecond', () => {
    expect(make({ margin: 0 }).rate.ratePerSecond).toBe(Infinity);
    expect(make({ minRatePerSecond: 7, maxRatePerSecond: 7, initialRatePerSecond: 7 }).rate.ratePerSecond).toBe(7);
    expect(make({ minRatePerSecond: 7, maxRatePerSecond: 9 }).rate.ratePerSecond).toBe(9);
    expect(make({ coolOffMs: 3000, maxCoolOffMs: 3000 }).rate.currentCoolOffMs).toBe(3000);
    // Without maxCoolOffMs, a coolOffMs above 8000 is its own maximum.
    expect(make({ coolOffMs: 12_000 }).rate.currentCoolOffMs).toBe(12_000);
    expect(make({ coolOffMs: 500 }).rate.currentCoolOffMs).toBe(500);
    expect(make().rate.currentCoolOffMs).toBe(1000);
    // Just inside the rise-versus-fall bound.
    expect(make({ decreaseFactor: 0.9, increase: 0.11 }).rate.ratePerSecond).toBe(Infinity);
  });

  it('priority(): a name not in priorities is a TypeError listing them', () => {
    const { rate } = make({ priorities: ['gold', 'silver'], defaultPriority: 'silver' });
    expect(() => rate.priority('bronze')).toThrow(
      new TypeError('adaptiveRate().priority(): expected `name` to be one of "gold", "silver", got "bronze".'),
    );
    expect(() => rate.priority('bronze')).toThrow(TypeError);
  });
});

describe('adaptiveRate: what the server says, field by field', () => {
  it('a success’s retryAfterMs and a success’s `response` property are not read; a failure’s own headers are not either', () => {
    const a = make();
    a.rate.record('success', undefined, { retryAfterMs: 4000 });
    a.rate.record('success', undefined, { response: ok({ ratelimit: '"a";r=0;t=4' }) });
    expect(a.rate.pausedForMs).toBe(0);
    expect(a.rate.ratePerSecond).toBe(Infinity);
    // A failure's detail is an error: its RateLimit is read from `error.response`, not from the
    // detail itself, even when that is a Response.
    a.rate.record('failure', undefined, ok({ ratelimit: '"a";r=0;t=4' }));
    expect(a.rate.pausedForMs).toBe(0);
    a.rate.record('failure', undefined, { response: ok({ ratelimit: '"a";r=0;t=4' }) });
    expect(a.rate.pausedForMs).toBe(4000);
  });

  it('Retry-After: 0 is a hint too: it takes precedence over r=0 (no pause at all)', () => {
    const { rate } = make();
    rate.record('throttled', undefined, throttle(0, { ratelimit: '"a";r=0;t=2' }));
    expect(rate.pausedForMs).toBe(0);
    // Without it, the same field pauses for t.
    rate.record('throttled', undefined, throttle(undefined, { ratelimit: '"a";r=0;t=2' }));
    expect(rate.pausedForMs).toBe(2000);
  });

  it('a retryAfterMs of 2^53 is cut to maxRetryAfterMs; a fraction of a ms is kept', async () => {
    const a = make({ maxRetryAfterMs: 7000 });
    a.rate.record('throttled', undefined, throttle(2 ** 53));
    expect(a.rate.pausedForMs).toBe(7000);
    const b = make();
    b.rate.record('throttled', undefined, throttle(0.5));
    expect(b.rate.pausedForMs).toBe(0.5);
  });

  it('two exhausted policies pause for the longer window, whichever comes first; cut to maxRetryAfterMs', () => {
    for (const field of ['"a";r=0;t=3, "b";r=0;t=1', '"b";r=0;t=1, "a";r=0;t=3', '"a";r=5;t=1, "b";r=0;t=3']) {
      const { rate } = make();
      rate.record('success', undefined, ok({ ratelimit: field }));
      expect(rate.pausedForMs, field).toBe(3000);
    }
    const { rate } = make({ maxRetryAfterMs: 2500 });
    rate.record('success', undefined, ok({ ratelimit: '"a";r=0;t=100' }));
    expect(rate.pausedForMs).toBe(2500);
  });

  it('of two policies with the same pace, the first one’s window holds; the pace ends exactly when it ends', async () => {
    const { clock, rate } = make();
    rate.record('success', undefined, ok({ ratelimit: '"long";r=10;t=2, "short";r=5;t=1' }));
    expect(rate.ratePerSecond).toBe(5);
    await clock.advance(1999);
    expect(rate.ratePerSecond).toBe(5);
    await clock.advance(1);
    expect(rate.ratePerSecond).toBe(Infinity);
    const b = make();
    b.rate.record('success', undefined, ok({ ratelimit: '"short";r=5;t=1, "long";r=10;t=2' }));
    await b.clock.advance(1000);
    expect(b.rate.ratePerSecond).toBe(Infinity);
  });

  it('a pace ends at its window also for waiting requests: then the law’s rate spaces them', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 10 });
    // On a failure's response (no success: no evidence for a rise), r = 2 within t = 1 s.
    rate.record('failure', undefined, { response: ok({ ratelimit: '"a";r=2;t=1' }) });
    // 2 r/s (500 ms apart) until t = 1000; the grant at 1000 is due at 600 under the law's
    // 10 r/s and is 5 ms (margin × 100 ms) made up for; then 100 ms apart.
    expect(await turns(rate, clock, 5)).toEqual([0, 500, 1000, 1095, 1195]);
  });

  it('an answer without a pace (Retry-After alone) leaves the last pace in place', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 20 });
    rate.record('success', undefined, ok({ ratelimit: '"a";r=8;t=2' })); // 4 r/s for 2 s
    await clock.advance(500);
    rate.record('failure', undefined, { retryAfterMs: 100 });
    expect(rate.ratePerSecond).toBe(4);
    rate.record('throttled', undefined, throttle(undefined, { ratelimit: '"a";r=0;t=1' }));
    expect(rate.pausedForMs).toBe(1000);
    expect(rate.ratePerSecond).toBe(4); // the throttle cut 20 to 10; the pace of 4 still holds
    await clock.advance(1500);
    expect(rate.ratePerSecond).toBe(10);
  });

  it('a new pace takes effect for a request already waiting under the old one', async () => {
    const { clock, rate } = make();
    rate.record('success', undefined, ok({ ratelimit: '"a";r=1;t=10' }));
    expect(rate.acquire()).not.toBeInstanceOf(Promise); // t = 0
    let at = -1;
    const waiting = Promise.resolve(rate.acquire()).then(() => {
      at = clock.now();
    });
    await clock.advance(50);
    rate.record('success', undefined, ok({ ratelimit: '"a";r=100;t=10' })); // 10 r/s
    await clock.runAll();
    await waiting;
    // Due 100 ms after the first grant under the new pace, not 1000 ms under the old one.
    expect(at).toBe(100);
  });

  it('a later, longer pause wins and is left out of the delivered rate; a shorter one changes nothing', async () => {
    const { clock, rate } = make();
    rate.record('failure', undefined, { retryAfterMs: 1000 });
    await clock.advance(200);
    rate.record('failure', undefined, { retryAfterMs: 500 });
    expect(rate.pausedForMs).toBe(800);
    rate.record('failure', undefined, { retryAfterMs: 900 });
    expect(rate.pausedForMs).toBe(900);
    expect(await turns(rate, clock, 2)).toEqual([1100, 1100]);
  });
});

describe('adaptiveRate: the first throttle of an unlimited controller starts from the rate granted over the last second', () => {
  it('counts the previous second’s share that overlaps the last second: 20 + 10 grants, 1.5 s in, read as 20 r/s', async () => {
    const { clock, rate } = make();
    await grantsAt(rate, clock, every(0, 1450, 50)); // 20 in second 0, 10 in the first half of second 1
    await clock.advance(1500 - clock.now());
    rate.record('throttled');
    expect(rate.ratePerSecond).toBe(10); // 0.5 × (20 × 0.5 + 10)
  });

  it('after a second with no grant, the last second holds only the overlapping share of the one before', async () => {
    const { clock, rate } = make();
    await grantsAt(rate, clock, every(0, 950, 50)); // 20 in second 0
    await clock.advance(1250 - clock.now());
    rate.record('throttled');
    expect(rate.ratePerSecond).toBe(7.5); // 0.5 × 20 × 0.75
  });

  it('a second with no grant between two busy ones counts for nothing', async () => {
    const { clock, rate } = make();
    await grantsAt(rate, clock, every(0, 950, 50)); // 20 in second 0, none in second 1
    await grantsAt(rate, clock, every(2000, 2350, 50)); // 8 in second 2
    await clock.advance(2500 - clock.now());
    rate.record('throttled');
    expect(rate.ratePerSecond).toBe(4); // 0.5 × 8: second 0 is not "the previous second"
  });

  it('long after the last grant, nothing was granted lately: the rate starts from minRatePerSecond', async () => {
    const { clock, rate } = make({ minRatePerSecond: 2 });
    await grantsAt(rate, clock, every(0, 950, 50));
    await clock.advance(5000);
    rate.record('throttled');
    expect(rate.ratePerSecond).toBe(2);
  });

  it('when traffic began less than a second ago, over the time it covers (at least 100 ms)', async () => {
    const a = make();
    await grantsAt(a.rate, a.clock, every(100, 300, 50)); // 5 grants from t = 100
    await a.clock.advance(500 - a.clock.now());
    a.rate.record('throttled');
    expect(a.rate.ratePerSecond).toBe(6.25); // 0.5 × 5 / 0.4 s
    const b = make();
    await grantsAt(b.rate, b.clock, every(0, 9, 1)); // a burst of 10 within 10 ms
    b.rate.record('throttled');
    expect(b.rate.ratePerSecond).toBe(50); // 0.5 × 10 / 0.1 s, not 0.5 × 10 / 0.009 s
  });
});

describe('adaptiveRate: the catch-up of late timers', () => {
  it('at 40 r/s (25 ms apart) it makes up the whole 25 ms: 20-ms-late timers keep the rate', async () => {
    // Slot 25 goes at 45; the next is due at 50, the timer fires at 70; and so on.
    expect(await lateGaps({ initialRatePerSecond: 40 }, 20, 6)).toEqual([45, 25, 25, 25, 25]);
  });

  it('just below 40 r/s, margin × the interval (5 % of 25.0025 ms)', async () => {
    const gaps = await lateGaps({ initialRatePerSecond: 39.996 }, 20, 4);
    const interval = 1000 / 39.996;
    expect(gaps[0]).toBeCloseTo(interval + 20, 9);
    expect(gaps[1]).toBeCloseTo(interval + 20 - 0.05 * interval, 9);
  });

  it('never more than 25 ms, even where margin × the interval is more', async () => {
    // 10 r/s, margin 0.3: 30 ms allowed by the margin, 25 made up; timers 40 ms late.
    expect(await lateGaps({ initialRatePerSecond: 10, margin: 0.3 }, 40, 4)).toEqual([140, 115, 115]);
  });
});

/**
 * Records `perSlot` successes in each 100-ms slot from now until `untilMs` (at 5, 15, … ms into
 * the slot), with no request: the delivered rate the controller measures is exactly
 * `10 × perSlot` a second. With `everySlots`, only in the slots whose number is `parity` modulo
 * it. Ends at `untilMs`.
 */
async function deliver(
  rate: AdaptiveRateController,
  clock: VirtualClock,
  perSlot: number,
  untilMs: number,
  everySlots = 1,
  parity = 0,
) {
  for (let slot = Math.floor(clock.now() / 100); slot * 100 < untilMs; slot++) {
    if (slot % everySlots !== parity) continue;
    for (let j = 0; j < perSlot; j++) {
      const t = slot * 100 + 5 + 10 * j;
      if (t < clock.now() || t >= untilMs) continue;
      await clock.advance(t - clock.now());
      rate.record('success');
    }
  }
  await clock.advance(untilMs - clock.now());
}

/**
 * As `deliver`, and in each 100-ms slot `refusedIn` picks, a throttle (at 50 ms into it) of a
 * request granted with `ticket` before the last cut: it moves no rate, but the service refused
 * then.
 */
async function deliverRefused(
  rate: AdaptiveRateController,
  clock: VirtualClock,
  perSlot: number,
  untilMs: number,
  ticket: unknown,
  refusedIn: (slot: number) => boolean,
) {
  for (let slot = Math.floor(clock.now() / 100); slot * 100 < untilMs; slot++) {
    for (let j = 0; j < perSlot; j++) {
      const t = slot * 100 + 5 + 10 * j;
      if (t < clock.now() || t >= untilMs) continue;
      await clock.advance(t - clock.now());
      rate.record('success');
    }
    const t = slot * 100 + 50;
    if (!refusedIn(slot) || t < clock.now() || t >= untilMs) continue;
    await clock.advance(t - clock.now());
    rate.record('throttled', ticket);
  }
  await clock.advance(untilMs - clock.now());
}

/**
 * A controller held at `rate` (maxRatePerSecond too, so that no rise comes), its first request
 * at t = 0; with `saturated`, a second request waits for its turn (demand reaches the rate).
 */
function held(perSecond: number, saturated: boolean, options: AdaptiveRateOptions = {}) {
  const { clock, rate } = make({ initialRatePerSecond: perSecond, maxRatePerSecond: perSecond, ...options });
  rate.acquire();
  if (saturated) expect(rate.acquire()).toBeInstanceOf(Promise);
  return { clock, rate };
}

describe('adaptiveRate: a throttle at a rate that held (the decrease, branch by branch)', () => {
  it('requests kept waiting, the service delivering 20 r/s of 100: down to 0.95 × 20, past decreaseFactor', async () => {
    const { clock, rate } = held(100, true);
    await deliver(rate, clock, 2, 2000);
    rate.record('throttled');
    expect(rate.ratePerSecond).toBeCloseTo(19, 12);
    expect(rate.currentCoolOffMs).toBe(1000);
  });

  it('nobody kept waiting (the client sent less than its rate): decreaseFactor bounds the cut', async () => {
    const { clock, rate } = held(100, false);
    await deliver(rate, clock, 2, 2000);
    rate.record('throttled');
    expect(rate.ratePerSecond).toBe(50);
  });

  it('delivered exactly (1 − 2 × margin) × the rate (90 of 100): the same level, noted, three base steps given back', async () => {
    const { clock, rate } = held(100, true);
    await deliver(rate, clock, 9, 2000);
    rate.record('throttled');
    // Noted, not cut by the margin or more: only the three base steps of [collision.yield], 3 × 0.1 × 5 r/s.
    expect(rate.ratePerSecond).toBe(98.5);
    // A throttle noted is no rise for a cool-off, and a new round: tickets from before are stale.
    const a = held(100, true);
    await deliver(a.rate, a.clock, 8, 2000);
    a.rate.record('throttled');
    expect(a.rate.ratePerSecond).toBeCloseTo(76, 12); // 80 < 90: 0.95 × 80
  });

  it('throttles noted keep coming: one a cool-off or more after the last note is noted again; sooner, a cut by the margin', async () => {
    const { clock, rate } = held(100, true);
    await deliver(rate, clock, 10, 2000);
    rate.record('throttled'); // noted at 2000
    await deliver(rate, clock, 10, 3000);
    rate.record('throttled'); // 1000 ms later: noted again
    // Each note gives back three base steps ([collision.yield]): 100 → 98.5 → 97.
    expect(rate.ratePerSecond).toBe(97);
    await deliver(rate, clock, 10, 3999);
    rate.record('throttled'); // 999 ms after the last note: 0.95 × the 97 (below the delivered 100)
    expect(rate.ratePerSecond).toBeCloseTo(0.95 * 97, 12);
  });

  it('a throttle with a stale ticket (from before the last change) moves nothing, not even a note', async () => {
    const { clock, rate } = held(100, true);
    await deliver(rate, clock, 10, 2000);
    const stale = rate.acquire();
    rate.record('throttled'); // noted: a new round
    await deliver(rate, clock, 10, 2500);
    rate.record('throttled', stale);
    expect(rate.ratePerSecond).toBe(98.5); // the note's base steps given back, nothing more
    // Were it taken as current, it would have cut: 500 ms after a note.
    rate.record('throttled', rate.acquire());
    expect(rate.ratePerSecond).toBeCloseTo(0.95 * 98.5, 12);
  });
});

describe('adaptiveRate: throttles of one congestion event (within a cool-off of a cut)', () => {
  it('after a cut made knowing the delivered rate, a lower one measured within the cool-off is only noted', async () => {
    const { clock, rate } = held(100, true);
    await deliver(rate, clock, 4, 2000);
    rate.record('throttled');
    expect(rate.ratePerSecond).toBeCloseTo(38, 12); // 0.95 × 40, informed
    await deliver(rate, clock, 1, 2500); // the last second: 20 + 5
    rate.record('throttled');
    expect(rate.ratePerSecond).toBeCloseTo(38, 12);
  });

  it('after a blind cut, a delivered rate measured within the cool-off and lower cuts again, once', async () => {
    const { clock, rate } = held(100, false, { coolOffMs: 2000 });
    rate.record('throttled'); // t = 0, nothing measured: blind, to 50
    expect(rate.ratePerSecond).toBe(50);
    await deliver(rate, clock, 2, 1500); // 20 r/s over the last second: known now
    rate.record('throttled');
    expect(rate.ratePerSecond).toBe(25); // to 0.95 × 20 = 19, but no more than decreaseFactor
    await deliver(rate, clock, 1, 1900);
    rate.record('throttled');
    expect(rate.ratePerSecond).toBe(25); // that cut was informed: the rest of the event is noted
  });

  it('the blind first cut of an unlimited controller starts an event of two cool-offs: a throttle 1 s later, still unmeasured, is noted', async () => {
    /** A cold burst: a grant every 2 ms for 100 ms, the first 9 answered with a success, a throttle at 20 ms. */
    const cold = async () => {
      const { clock, rate } = make();
      for (let t = 0; t < 100; t += 2) {
        await clock.advance(t - clock.now());
        const ticket = rate.acquire();
        if (t < 18) rate.record('success', ticket);
        if (t === 20) rate.record('throttled', ticket);
      }
      // Blind (9 successes, under a second): half of 11 grants over the 100 ms they cover.
      expect(rate.ratePerSecond).toBe(55);
      return { clock, rate };
    };
    /** A request granted at once now (the burst's waiters went long ago), throttled. */
    const throttledNow = (rate: AdaptiveRateController) => {
      const ticket = rate.acquire();
      expect(ticket).not.toBeInstanceOf(Promise);
      rate.record('throttled', ticket);
    };
    const a = await cold();
    await a.clock.advance(1020 - a.clock.now());
    throttledNow(a.rate);
    expect(a.rate.ratePerSecond).toBe(55); // 1 s after the cut, nothing measured: noted (the law before: 27.5)
    const b = await cold();
    await b.clock.advance(2020 - b.clock.now());
    throttledNow(b.rate);
    expect(b.rate.ratePerSecond).toBe(27.5); // 2 s after it: a new event, blind again, by half
    // An informed first cut keeps an event of one cool-off (the test above, 'the event lasts one base cool-off').
  });

  it('for any decreaseFactor and coolOffMs, throttles within two cool-offs of a blind first cut, still unmeasured, are noted; the first after them halves blind', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          decreaseFactor: fc.double({ min: 0.05, max: 0.9, noNaN: true }),
          coolOffMs: fc.integer({ min: 50, max: 5000 }),
          margin: fc.double({ min: 0, max: 0.49, noNaN: true }),
        }),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        fc.double({ min: 0, max: 3, noNaN: true }),
        async (o, within, past) => {
          /** A cold burst: 11 grants 2 ms apart, 9 of them successes, the last one throttled. */
          const cold = async () => {
            const { clock, rate } = make(o);
            for (let t = 0; t <= 20; t += 2) {
              await clock.advance(t - clock.now());
              const ticket = rate.acquire();
              if (t < 18) rate.record('success', ticket);
              if (t === 20) rate.record('throttled', ticket);
            }
            // Blind: 11 grants over the 100 ms they are counted over, times decreaseFactor.
            expect(rate.ratePerSecond).toBeCloseTo(Math.max(1, 110 * o.decreaseFactor), 9);
            return { clock, rate, blind: rate.ratePerSecond };
          };
          const at = async (ms: number) => {
            const c = await cold();
            await c.clock.advance(ms);
            const ticket = c.rate.acquire();
            expect(ticket).not.toBeInstanceOf(Promise);
            c.rate.record('throttled', ticket);
            return { blind: c.blind, now: c.rate.ratePerSecond };
          };
          const a = await at(o.coolOffMs * (1 + within));
          expect(a.now).toBe(a.blind);
          const b = await at(o.coolOffMs * (2 + past));
          expect(b.now).toBeCloseTo(Math.max(1, b.blind * o.decreaseFactor), 9);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('after a blind cut corrected down to 0.95 × the delivered rate, the rate last throttled is the delivered rate: the next probe is the additive step', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 100, maxRatePerSecond: 100, coolOffMs: 2000 });
    const before = rate.acquire(); // a request of the round before the cut
    rate.record('throttled'); // blind, to 50
    // 20 r/s, and refused in every slot: a cut may go past half.
    await deliverRefused(rate, clock, 2, 1500, before, () => true);
    rate.record('throttled');
    expect(rate.ratePerSecond).toBeCloseTo(19, 12);
    rate.acquire();
    expect(rate.acquire()).toBeInstanceOf(Promise);
    await deliver(rate, clock, 2, 3600);
    // +0.5 (10 % of 5 r/s, 1 r/s below 20), not +1.9 (10 % of the rate, 31 r/s below the blind 50).
    expect(rate.ratePerSecond).toBeCloseTo(19.5, 12);
  });

  it('a blind cut is corrected past decreaseFactor when a throttle came in at least half the slots measured, whether or not requests were kept waiting', async () => {
    /** Blind from 100 to 50 at 0; 20 r/s delivered; a throttle of the round before the cut in the slots `refusedIn` picks; the correction at 1.5 s. */
    const correction = async (refusedIn: (slot: number) => boolean, keptWaiting: boolean) => {
      const { clock, rate } = make({ initialRatePerSecond: 100, maxRatePerSecond: 100, coolOffMs: 2000 });
      const before = rate.acquire();
      rate.record('throttled');
      expect(rate.ratePerSecond).toBe(50);
      if (keptWaiting) {
        rate.acquire();
        expect(rate.acquire()).toBeInstanceOf(Promise); // kept waiting at 50 since the cut
      }
      await deliverRefused(rate, clock, 2, 1500, before, refusedIn);
      rate.record('throttled');
      return rate.ratePerSecond;
    };
    // The span measured: slots 5 to 15 (1.5 s is slot 15's start, refused by the correction's own
    // throttle), 11 slots; refused in 5 of slots 5–14 more, 6 of 11: past half, to 0.95 × 20.
    expect(await correction((slot) => slot >= 10, false)).toBeCloseTo(19, 12);
    // Refused in 4 of them (5 of 11): bounded, as the law before bounded every correction of a
    // client not kept waiting — HAProxy's cold burst refused in 10 of 11 slots and was cut to
    // half, 445 → 222.5 r/s, in 2 runs of 5.
    expect(await correction((slot) => slot >= 11, false)).toBe(25);
    // Kept waiting since the cut, but refused only in the slots of the burst before the span
    // (a client that slept through the second): bounded — the law before cut it to 19, 0.95 ×
    // its own silence (a deaf fleet at nginx 50 r/s: 14.9 r/s).
    expect(await correction((slot) => slot < 5, true)).toBe(25);
    // Exactly half: 10 successes in slots 0–4, none after, the correction at 1.95 s — the span
    // goes back to the first request, slots 0 to 19, 20 slots; refused in slot 0 (the blind cut),
    // in slot 19 (the correction), and in 8 (half) or 7 of the slots between.
    const half = async (refusedIn: (slot: number) => boolean) => {
      const { clock, rate } = make({ initialRatePerSecond: 100, maxRatePerSecond: 100, coolOffMs: 2000 });
      const before = rate.acquire();
      rate.record('throttled');
      await deliverRefused(rate, clock, 2, 500, before, refusedIn);
      await deliverRefused(rate, clock, 0, 1950, before, refusedIn);
      rate.record('throttled');
      return rate.ratePerSecond;
    };
    expect(await half((slot) => slot % 2 === 1 && slot < 17)).toBeCloseTo((0.95 * 10) / 1.95, 12);
    expect(await half((slot) => slot % 2 === 1 && slot < 15)).toBe(25); // 9 of 20
  });

  it('for any decreaseFactor, margin and slots refused, a blind cut corrected down goes past decreaseFactor exactly when at least half the slots measured were refused', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          decreaseFactor: fc.double({ min: 0.3, max: 0.9, noNaN: true }),
          margin: fc.double({ min: 0, max: 0.49, noNaN: true }),
        }),
        fc.array(fc.boolean(), { minLength: 15, maxLength: 15 }),
        fc.boolean(),
        async (o, refused, keptWaiting) => {
          const { clock, rate } = make({ ...o, initialRatePerSecond: 100, maxRatePerSecond: 100, coolOffMs: 2000 });
          const before = rate.acquire();
          rate.record('throttled');
          expect(rate.ratePerSecond).toBeCloseTo(100 * o.decreaseFactor, 9);
          if (keptWaiting) {
            rate.acquire();
            expect(rate.acquire()).toBeInstanceOf(Promise);
          }
          await deliverRefused(rate, clock, 2, 1500, before, (slot) => refused[slot] === true);
          rate.record('throttled');
          // Slots 5–14 as drawn, and slot 15 (the correction's own throttle): 11 slots.
          const marked = refused.slice(5, 15).filter(Boolean).length + 1;
          const bound = 2 * marked >= 11 ? 1 : 100 * o.decreaseFactor * o.decreaseFactor;
          expect(rate.ratePerSecond).toBeCloseTo(Math.max(bound, 20 * (1 - o.margin)), 9);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('after a blind cut, a delivered rate above the new rate, now measured, raises it to 0.95 × it', async () => {
    const { clock, rate } = held(40, false, { coolOffMs: 2000 });
    rate.record('throttled'); // blind, to 20
    await deliver(rate, clock, 3, 1500); // 30 r/s: 0.95 × 30 = 28.5 > 20
    rate.record('throttled');
    expect(rate.ratePerSecond).toBeCloseTo(28.5, 12);
    await deliver(rate, clock, 3, 2000);
    rate.record('throttled'); // informed now: noted
    expect(rate.ratePerSecond).toBeCloseTo(28.5, 12);
    // The rate last throttled is the delivered rate (30), not the blind rate (20): 28.5 is
    // below it, so the next probe is the additive step near it (+0.5), not a convex one past
    // it (+10 %, to 31.35, above what the service delivered).
    rate.acquire();
    expect(rate.acquire()).toBeInstanceOf(Promise);
    await deliver(rate, clock, 3, 4100);
    expect(rate.ratePerSecond).toBeCloseTo(29, 12);
  });

  it('after a blind cut corrected to a delivered rate, a probe just past that rate is no evidence that the limit moved: the convex region starts a whole base step past it', async () => {
    const { clock, rate } = held(60, false, { coolOffMs: 2000, maxRatePerSecond: 1000 });
    rate.record('throttled'); // blind, to 30
    await deliver(rate, clock, 7, 1500, 2); // 35 r/s: 0.95 × 35 = 33.25 > 30
    rate.record('throttled');
    expect(rate.ratePerSecond).toBeCloseTo(33.25, 12);
    // The rate last throttled is 35, a measured rate. Probes (+0.5, then doubled, but never
    // across 35): 33.75, 34.75, then the base step, 35.25 — past 35 by less than a base step,
    // not convex: +0.5 → 35.75, a whole base step past it; then convex, +20 % → 42.9.
    // Past a rate a request was throttled at, 35.25 would have been enough (+20 % → 42.3: the
    // rule that finds a doubled limit a probe sooner).
    const seen: number[] = [];
    for (let t = 1600; t < 12_000; t += 100) {
      if (rate.waiting === 0) {
        rate.acquire();
        rate.acquire();
      }
      await deliver(rate, clock, 7, t, 2);
      const now = Number(rate.ratePerSecond.toFixed(4));
      if (now !== seen.at(-1)) seen.push(now);
    }
    expect(seen.slice(0, 6)).toEqual([33.25, 33.75, 34.75, 35.25, 35.75, 42.9]);
  });

  it('the event lasts one base cool-off from the cut: at exactly coolOffMs, a new event', async () => {
    const { clock, rate } = held(100, true);
    await deliver(rate, clock, 6, 2000);
    rate.record('throttled'); // 57, informed (no deeper than decreaseFactor: a one-cool-off event)
    await deliver(rate, clock, 1, 2999);
    rate.record('throttled');
    expect(rate.ratePerSecond).toBeCloseTo(57, 12); // same event: noted
    const b = held(100, true);
    await deliver(b.rate, b.clock, 6, 2000);
    b.rate.record('throttled');
    await deliver(b.rate, b.clock, 1, 3000); // 10 successes over the last second
    b.rate.record('throttled');
    // A new event at a rate that held: 10 < 0.9 × 57, so to 0.95 × 10 — but nobody waited
    // since the cut, so no lower than decreaseFactor × 57.
    expect(b.rate.ratePerSecond).toBeCloseTo(28.5, 12);
  });

  it('after a cut deeper than decreaseFactor, throttles for two base cool-offs belong to its event (a window the client overfilled keeps refusing)', async () => {
    const a = held(100, true);
    await deliver(a.rate, a.clock, 4, 2000);
    a.rate.record('throttled'); // to 38: deeper than 0.5 × 100
    await deliver(a.rate, a.clock, 1, 3999);
    a.rate.record('throttled');
    expect(a.rate.ratePerSecond).toBeCloseTo(38, 12); // 1.999 s after the cut: noted
    const b = held(100, true);
    await deliver(b.rate, b.clock, 4, 2000);
    b.rate.record('throttled');
    await deliver(b.rate, b.clock, 1, 4000);
    b.rate.record('throttled');
    // 2 s after: a new event, 10 r/s delivered, well below: 0.95 × 10, no lower than 0.5 × 38.
    expect(b.rate.ratePerSecond).toBe(19);
  });
});

describe('adaptiveRate: the first throttle of an unlimited controller, knowing the delivered rate', () => {
  it('goes to 0.95 × the delivered rate, not to half the rate granted', async () => {
    const { clock, rate } = make();
    for (let t = 5; t < 2000; t += 25) {
      await clock.advance(t - clock.now());
      rate.record('success', rate.acquire()); // 40 r/s granted and delivered
    }
    await clock.advance(2000 - clock.now());
    rate.record('throttled');
    expect(rate.ratePerSecond).toBeCloseTo(38, 12);
  });

  it('with fewer than 10 successes over the last second, blind: half the rate granted', async () => {
    const { clock, rate } = make();
    for (let t = 5; t < 2000; t += 25) {
      await clock.advance(t - clock.now());
      const ticket = rate.acquire();
      if (t % 200 === 5) rate.record('success', ticket); // 5 r/s delivered of 40 granted
    }
    await clock.advance(2000 - clock.now());
    rate.record('throttled');
    expect(rate.ratePerSecond).toBe(20);
  });
});

describe('adaptiveRate: the delivered rate, slot by slot', () => {
  it('exactly 10 successes over the last second are enough to know it', async () => {
    const { clock, rate } = held(100, true);
    await deliver(rate, clock, 1, 2000);
    rate.record('throttled');
    expect(rate.ratePerSecond).toBeCloseTo(9.5, 12);
  });

  it('with fewer than 10 in the last second, the span grows until it holds 10: 2 s at 5 r/s, not 3 s', async () => {
    const { clock, rate } = held(100, true);
    await deliver(rate, clock, 2, 1000); // 20 r/s in the first second
    await deliver(rate, clock, 1, 3000, 2); // then 5 r/s
    rate.record('throttled');
    expect(rate.ratePerSecond).toBeCloseTo(4.75, 12); // 0.95 × 10 / 2 s; over 3 s it would be 0.95 × 10
  });

  it('fewer than 10 within 3 s: not known, a blind cut', async () => {
    const { clock, rate } = held(100, true);
    await deliver(rate, clock, 1, 3000, 10); // 3 r/s
    rate.record('throttled');
    expect(rate.ratePerSecond).toBe(50);
  });

  it('never over less than a whole second: 30 successes in the first 500 ms are not a rate yet', async () => {
    const { clock, rate } = held(100, true);
    await deliver(rate, clock, 6, 500);
    rate.record('throttled');
    expect(rate.ratePerSecond).toBe(50);
  });

  it('nor over time before the first request: 10 successes in the second after it are known', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 100, maxRatePerSecond: 100 });
    await clock.advance(5000);
    rate.acquire(); // the first request, at 5000
    expect(rate.acquire()).toBeInstanceOf(Promise);
    await deliver(rate, clock, 1, 6000);
    rate.record('throttled');
    expect(rate.ratePerSecond).toBeCloseTo(9.5, 12);
  });

  it('slots older than 3 s are not counted when their place in the ring comes round again', async () => {
    const { clock, rate } = held(100, true);
    await deliver(rate, clock, 10, 600); // 60 successes in slots 0–5
    await clock.advance(3000 - clock.now());
    await deliver(rate, clock, 1, 4000, 2, 1); // 5 in the odd slots 31–39: places 1–9 of the ring
    rate.record('throttled');
    // 5 over the last 3 s (slots 10–39): not known, a blind cut. Read stale, slots 30, 32, 34
    // (places 0, 2, 4) would add 30 of the first ones.
    expect(rate.ratePerSecond).toBe(50);
  });

  it('time a server paused the client is left out of the span (two pauses, the older one kept)', async () => {
    const { clock, rate } = held(100, true);
    await deliver(rate, clock, 2, 1000); // 20 in [0, 1000)
    rate.record('failure', undefined, { retryAfterMs: 500 }); // paused [1000, 1500)
    await clock.advance(1000); // none in [1500, 2000)
    rate.record('failure', undefined, { retryAfterMs: 500 }); // paused [2000, 2500)
    await clock.advance(500);
    await deliver(rate, clock, 1, 3000); // 5 in [2500, 3000)
    rate.record('throttled');
    // Back from 3000 until the span holds 10: to 700 (11 successes), 2300 ms of which 1000
    // paused: 11 over 1.3 s. (Counting the older pause as time, 11 over 1.8 s.)
    expect(rate.ratePerSecond).toBeCloseTo((0.95 * 11) / 1.3, 12);
  });

  it('a pause that ended before the span takes nothing from it', async () => {
    const { clock, rate } = held(100, true);
    await clock.advance(1000);
    rate.record('failure', undefined, { retryAfterMs: 500 }); // paused [1000, 1500)
    await clock.advance(500);
    await deliver(rate, clock, 2, 3000); // 20 r/s over [1500, 3000)
    rate.record('throttled');
    expect(rate.ratePerSecond).toBeCloseTo(19, 12);
  });

  it('successes recorded before the first request are not counted', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 100, maxRatePerSecond: 100 });
    await deliver(rate, clock, 5, 1000); // 50 successes of requests made elsewhere
    rate.acquire(); // the first request, at 1000
    expect(rate.acquire()).toBeInstanceOf(Promise);
    await deliver(rate, clock, 1, 2000, 2); // 5 since
    rate.record('throttled');
    // 5 successes: not known, a blind cut (reading the slot before the first request too, 10:
    // known, a cut to 0.95 × 10).
    expect(rate.ratePerSecond).toBe(50);
  });
});

/**
 * Keeps 10 requests queued on `rate`; every `successEvery`-th one granted records a success, the
 * others a plain failure (which moves nothing). Returns a stop.
 */
/** Advances 10 ms at a time until the rate rises (at most a minute). */
async function untilRise(rate: AdaptiveRateController, clock: VirtualClock): Promise<void> {
  const before = rate.ratePerSecond;
  const end = clock.now() + 60_000;
  while (rate.ratePerSecond <= before && clock.now() < end) await clock.advance(10);
}

function busy(rate: AdaptiveRateController, successEvery = 1): () => void {
  const controller = new AbortController();
  let n = 0;
  const loop = async () => {
    for (;;) {
      let ticket: unknown;
      try {
        ticket = await rate.acquire(controller.signal);
      } catch {
        return;
      }
      rate.record(n++ % successEvery === 0 ? 'success' : 'failure', ticket);
    }
  };
  for (let i = 0; i < 10; i++) loop();
  return () => controller.abort();
}

describe('adaptiveRate: what a rise waits for (not the size of the step)', () => {
  it('a server’s pause holds the next rise until a whole cool-off after it ends', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 10 });
    const stop = busy(rate);
    rate.record('failure', undefined, { retryAfterMs: 500 }); // paused until 500
    await clock.advance(1499);
    expect(rate.ratePerSecond).toBe(10);
    await clock.advance(1);
    expect(rate.ratePerSecond).toBeGreaterThan(10);
    stop();
    await clock.runAll();
  });

  it('Retry-After: 0 is no pause: the rise comes after the cool-off as without it', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 10 });
    const stop = busy(rate);
    await clock.advance(500);
    rate.record('failure', undefined, { retryAfterMs: 0 });
    expect(rate.pausedForMs).toBe(0);
    await clock.advance(499);
    expect(rate.ratePerSecond).toBe(10);
    await clock.advance(1);
    expect(rate.ratePerSecond).toBeGreaterThan(10);
    stop();
    await clock.runAll();
  });

  it('requests that each come exactly on their slot never wait: no rise, however many successes', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 10 });
    for (let t = 0; t <= 3000; t += 100) {
      await clock.advance(t - clock.now());
      const ticket = rate.acquire();
      expect(ticket).not.toBeInstanceOf(Promise);
      rate.record('success', ticket);
    }
    expect(rate.ratePerSecond).toBe(10);
  });

  it('requests kept waiting by a server’s pace, not by the law’s rate, are no reason to rise', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 10 });
    rate.record('failure', undefined, { response: ok({ ratelimit: '"a";r=20;t=10' }) }); // 2 r/s for 10 s
    const stop = busy(rate);
    await clock.advance(9999);
    expect(rate.ratePerSecond).toBe(2);
    stop(); // before the pace ends (then the law's rate would keep them waiting)
    await clock.advance(1);
    expect(rate.ratePerSecond).toBe(10);
    await clock.runAll();
  });

  it('a server’s pace equal to the law’s rate: waits are the law’s own, and the law may rise under it', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 10 });
    rate.record('failure', undefined, { response: ok({ ratelimit: '"a";r=50;t=5' }) }); // 10 r/s for 5 s
    const stop = busy(rate);
    await clock.advance(4999);
    expect(rate.ratePerSecond).toBe(10); // the pace caps what the law rose to
    stop();
    await clock.advance(1);
    expect(rate.ratePerSecond).toBeGreaterThan(10);
    await clock.runAll();
  });

  it('no rise without demand: successes for 3 s, then the first request kept waiting makes the evidence complete', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 10 });
    for (let t = 0; t < 3000; t += 200) {
      await clock.advance(t - clock.now());
      rate.record('success', rate.acquire());
    }
    await clock.advance(3000 - clock.now());
    expect(rate.ratePerSecond).toBe(10);
    rate.acquire();
    rate.acquire(); // waits: demand reaches the rate, and the cool-off is long over
    expect(rate.ratePerSecond).toBeGreaterThan(10);
    await clock.runAll();
  });

  it('a rise that a success applies re-arms the wake-up of a waiting request: it goes at the new spacing', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 1, coolOffMs: 100 });
    rate.acquire(); // t = 0
    let at = -1;
    const waiting = Promise.resolve(rate.acquire()).then(() => {
      at = clock.now();
    }); // due at 1000
    await clock.advance(500);
    rate.record('success'); // evidence complete, cool-off over: the rate rises now
    const risen = rate.ratePerSecond;
    expect(risen).toBeGreaterThan(1);
    await clock.runAll();
    await waiting;
    expect(at).toBeCloseTo(1000 / risen, 9);
  });
});

describe('adaptiveRate: the schedule', () => {
  it('a request let through at once starts a new schedule: the next one is a whole interval later', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 10 });
    rate.acquire();
    await clock.advance(1000);
    expect(rate.acquire()).not.toBeInstanceOf(Promise); // at 1000, long after its slot
    expect(await turns(rate, clock, 1)).toEqual([1100]);
  });

  it('unlimited, nothing is scheduled: after the first throttle the next request goes at once', async () => {
    const { clock, rate } = make();
    await grantsAt(rate, clock, every(0, 950, 50));
    await clock.advance(1000 - clock.now());
    rate.record('throttled');
    expect(rate.ratePerSecond).toBe(10);
    expect(rate.acquire()).not.toBeInstanceOf(Promise);
    expect(await turns(rate, clock, 1)).toEqual([1100]);
  });

  it('unlimited, a pause holds every request until it ends, then lets them all go', async () => {
    const { clock, rate } = make();
    rate.record('throttled', undefined, throttle(800)); // the first throttle also sets a rate (1 r/s)
    const b = make();
    b.rate.record('failure', undefined, { retryAfterMs: 800 });
    expect(b.rate.ratePerSecond).toBe(Infinity);
    expect(await turns(b.rate, b.clock, 3)).toEqual([800, 800, 800]);
    expect(await turns(rate, clock, 2)).toEqual([800, 1800]);
  });
});

describe('adaptiveRate: a relapse (a throttle right after a rise)', () => {
  /** 100 r/s with requests kept waiting, 20 r/s delivered; the first rise comes at 1000. */
  async function risen(options: AdaptiveRateOptions = {}) {
    const { clock, rate } = make({ initialRatePerSecond: 100, ...options });
    const stop = busy(rate, 5);
    await clock.advance(1000);
    expect(rate.ratePerSecond).toBeGreaterThan(100);
    return { clock, rate, stop };
  }

  it('lands margin below the rate before the rise at the lowest, whatever the service delivered', async () => {
    const { clock, rate, stop } = await risen();
    rate.record('throttled');
    expect(rate.ratePerSecond).toBeCloseTo(95, 12); // not 0.95 × 20
    expect(rate.currentCoolOffMs).toBe(2000);
    stop();
    await clock.runAll();
  });

  it('the next request waits two spacings at the new rate, not one (a window that counts refusals drains); a cut that is no relapse, one', async () => {
    /** 10 loops at 10 r/s, every request a success; the rise to 11 comes at 1000. */
    const at = async (relapse: boolean) => {
      const { clock, rate } = make({ initialRatePerSecond: 10 });
      const { grants, last, stop } = successLoops(rate, clock, 10);
      await clock.advance(relapse ? 1050 : 950);
      expect(rate.ratePerSecond).toBe(relapse ? 11 : 10);
      const cutAt = clock.now();
      rate.record('throttled', last());
      const after = rate.ratePerSecond;
      expect(after).toBeLessThan(relapse ? 11 : 10);
      await clock.advance(1000);
      stop();
      await clock.runAll();
      return { cutAt, after, next: grants.find((g) => g > cutAt) as number };
    };
    const r = await at(true);
    expect(r.next).toBeCloseTo(r.cutAt + 2000 / r.after, 9);
    // A cut at a rate that held (here to 0.95 × the 10 r/s delivered) keeps the schedule: the next
    // request goes one spacing at the new rate after the last one.
    const c = await at(false);
    expect(c.next).toBeLessThanOrEqual(c.cutAt + 1000 / c.after);
  });

  it('for any law options and rate, the first grant after a relapse comes exactly two spacings at the new rate after it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          initialRatePerSecond: fc.double({ min: 2, max: 200, noNaN: true }),
          coolOffMs: fc.integer({ min: 100, max: 3000 }),
          margin: fc.double({ min: 0, max: 0.49, noNaN: true }),
          decreaseFactor: fc.double({ min: 0.05, max: 0.9, noNaN: true }),
        }),
        async (o) => {
          const { clock, rate } = make(o);
          const { grants, last, stop } = successLoops(rate, clock, 10);
          await clock.advance(o.coolOffMs + 10);
          expect(rate.ratePerSecond).toBeGreaterThan(o.initialRatePerSecond);
          const cutAt = clock.now();
          rate.record('throttled', last());
          const after = rate.ratePerSecond;
          expect(after).toBeLessThanOrEqual(o.initialRatePerSecond);
          await clock.advance(4000 / after);
          stop();
          await clock.runAll();
          const next = grants.find((g) => g > cutAt) as number;
          expect(Math.abs(next - (cutAt + 2000 / after))).toBeLessThan(1e-6);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('with maxCoolOffMs = coolOffMs the cool-off never backs off', async () => {
    const { clock, rate, stop } = await risen({ maxCoolOffMs: 1000 });
    rate.record('throttled');
    expect(rate.currentCoolOffMs).toBe(1000);
    stop();
    await clock.runAll();
  });

  it('a later cut to a delivered rate well below (conditions changed) brings the cool-off back to coolOffMs', async () => {
    const { clock, rate, stop } = await risen();
    rate.record('throttled'); // relapse: 95, cool-off 2000; the event lasts two base cool-offs
    const relapsedAt = clock.now();
    // Four more rounds throttled within its event: five 429s charged to the failed probe, paid for
    // by 250 requests at 95 r/s (2.6 s), so that its backoff still holds 2.1 s after it.
    for (let i = 0; i < 4; i++) rate.record('throttled');
    stop(); // no request kept waiting from here on: no rise is due
    await clock.runAll();
    // 2.1 s after the relapse: a new event, and the last 3 s still hold more than 10 successes.
    await clock.advance(relapsedAt + 2100 - clock.now());
    expect(rate.ratePerSecond).toBeCloseTo(95, 12);
    expect(rate.currentCoolOffMs).toBe(2000);
    rate.record('throttled');
    // The successes of the last 3 s (19 r/s for 0.9 s), far below 95 r/s: conditions changed —
    // the relapses reset, and the charge of the failed probe is void. Nothing was kept
    // waiting since the relapse, so decreaseFactor bounds the cut: 0.5 × 95.
    expect(rate.ratePerSecond).toBeCloseTo(47.5, 12);
    expect(rate.currentCoolOffMs).toBe(1000);
  });
});

describe('adaptiveRate: priority views', () => {
  it('a view’s acquire takes a signal; its record hears the server; its class is its own', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 10 });
    const low = rate.priority('low');
    const high = rate.priority('high');
    expect(rate.priority('low')).toBe(low);
    low.acquire();
    const controller = new AbortController();
    const aborted = low.acquire(controller.signal) as Promise<unknown>;
    const reason = new Error('gone');
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    expect(rate.waiting).toBe(0);
    low.record('failure', undefined, { retryAfterMs: 300 });
    expect(rate.pausedForMs).toBe(300);
    const order: string[] = [];
    const all = [
      Promise.resolve(low.acquire()).then(() => order.push('low')),
      Promise.resolve(rate.acquire()).then(() => order.push('normal')),
      Promise.resolve(high.acquire()).then(() => order.push('high')),
    ];
    expect(rate.waiting).toBe(3);
    await clock.runAll();
    await Promise.all(all);
    expect(order).toEqual(['high', 'normal', 'low']);
    expect(clock.now()).toBe(500);
  });
});

describe('adaptiveRate: details of the hints', () => {
  it('an error that is a function is read like an object', () => {
    const { rate } = make();
    rate.record(
      'failure',
      undefined,
      Object.assign(() => {}, { retryAfterMs: 700 }),
    );
    expect(rate.pausedForMs).toBe(700);
  });

  it('a pause that extends one still running counts its time once', async () => {
    const { clock, rate } = held(100, true);
    await deliver(rate, clock, 2, 1000); // 20 in [0, 1000)
    rate.record('failure', undefined, { retryAfterMs: 1000 }); // paused [1000, 2000)
    await clock.advance(500);
    rate.record('failure', undefined, { retryAfterMs: 1000 }); // now until 2500: [2000, 2500) more
    await clock.advance(1000);
    await deliver(rate, clock, 1, 3500, 2); // 5 in [2500, 3500)
    rate.record('throttled');
    // Back from 3500 until the span holds 10: to 700 (11 successes), 2800 ms, 1500 of them
    // paused: 11 over 1.3 s. (The overlap counted twice would leave less than a second of
    // span within the 3-s window: not known, a blind cut to 50.)
    expect(rate.ratePerSecond).toBeCloseTo((0.95 * 11) / 1.3, 12);
  });
});

describe('adaptiveRate: a note or a cut starts the evidence for a rise afresh', () => {
  /** 100 r/s, maxRatePerSecond 200; 100 r/s delivered for 2 s with nobody kept waiting; a throttle: noted. */
  async function noted() {
    const { clock, rate } = make({ initialRatePerSecond: 100, maxRatePerSecond: 200 });
    rate.acquire();
    await deliver(rate, clock, 10, 2000);
    rate.record('throttled');
    expect(rate.ratePerSecond).toBe(98.5); // three base steps given back ([collision.yield])
    return { clock, rate };
  }

  it('after a note, requests kept waiting but no success: no rise', async () => {
    const { clock, rate } = await noted();
    for (let i = 0; i < 30; i++) rate.acquire();
    await clock.advance(1500);
    expect(rate.ratePerSecond).toBe(98.5);
    await clock.runAll();
  });

  it('after a note, successes but nobody kept waiting: no rise', async () => {
    const { clock, rate } = await noted();
    await deliver(rate, clock, 10, 3500);
    expect(rate.ratePerSecond).toBe(98.5);
  });

  it('after a cut, the same: successes alone, or demand alone, are no reason to rise', async () => {
    const a = make({ initialRatePerSecond: 100 });
    a.rate.record('throttled');
    await deliver(a.rate, a.clock, 10, 2000);
    expect(a.rate.ratePerSecond).toBe(50);
    const b = make({ initialRatePerSecond: 100 });
    b.rate.record('success');
    b.rate.record('throttled');
    for (let i = 0; i < 30; i++) b.rate.acquire();
    await b.clock.advance(1500);
    expect(b.rate.ratePerSecond).toBe(50);
    await b.clock.runAll();
  });
});

describe('adaptiveRate: tickets', () => {
  it('every note and every cut starts a new round: a ticket from two changes ago stays stale', async () => {
    const { clock, rate } = held(100, true);
    const pending = rate.acquire();
    await clock.advance(100);
    const first = await pending; // granted in round 0
    expect(first).not.toBeInstanceOf(Promise);
    await deliver(rate, clock, 6, 2000);
    rate.record('throttled'); // a cut to 57 (round 1)
    rate.record('throttled'); // within its cool-off: noted (round 2)
    expect(rate.ratePerSecond).toBeCloseTo(57, 12);
    await deliver(rate, clock, 1, 3500);
    rate.record('throttled', first); // stale: nothing
    expect(rate.ratePerSecond).toBeCloseTo(57, 12);
    rate.record('throttled'); // current: 10 r/s delivered, well below; nobody waited since the cut
    expect(rate.ratePerSecond).toBeCloseTo(28.5, 12);
  });
});

describe('adaptiveRate: more edges of the hints', () => {
  it('a negative retryAfterMs is no Retry-After: an exhausted RateLimit policy still pauses', () => {
    const { rate } = make();
    rate.record('throttled', undefined, throttle(-1, { ratelimit: '"a";r=0;t=2' }));
    expect(rate.pausedForMs).toBe(2000);
  });

  it('a policy without t before an exhausted one does not spoil its pause', () => {
    const { rate } = make();
    rate.record('success', undefined, ok({ ratelimit: '"a";r=0, "b";r=0;t=3' }));
    expect(rate.pausedForMs).toBe(3000);
    const b = make();
    b.rate.record('success', undefined, ok({ ratelimit: '"a";r=5, "b";r=4;t=2' }));
    expect(b.rate.ratePerSecond).toBe(2);
  });

  it('the most restrictive policy is the lowest r / t, not the lowest r × t', () => {
    const { rate } = make();
    rate.record('success', undefined, ok({ ratelimit: '"b";r=3;t=1, "a";r=8;t=4' }));
    expect(rate.ratePerSecond).toBe(2);
  });
});

describe('adaptiveRate: more edges of the measured and delivered rates', () => {
  it('two seconds or more after the last grant, nothing of it counts as the last second', async () => {
    const { clock, rate } = make();
    await grantsAt(rate, clock, every(0, 950, 50)); // 20 in second 0
    await clock.advance(3000 - clock.now());
    rate.record('throttled');
    expect(rate.ratePerSecond).toBe(1); // from minRatePerSecond, not from 20
  });

  it('the span is 30 slots, the current one included: a slot that began more than 2.9 s ago is not read', async () => {
    const { clock, rate } = held(100, true);
    await clock.advance(500);
    await deliver(rate, clock, 10, 600); // 10 successes in slot 5, [500, 600)
    await clock.advance(3550 - clock.now());
    rate.record('throttled');
    // Slots 35 back to 6: nothing delivered; a blind cut (reading slot 5 too, 10 successes:
    // known, a cut to 0.95 × 10 / 3).
    expect(rate.ratePerSecond).toBe(50);
  });
});

describe('adaptiveRate: more edges of the decrease', () => {
  it('a relapse lands at 0.95 × the delivered rate when that is within margin of the rate before the rise', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 100 });
    const stop = busy(rate); // every grant a success: about 100 r/s delivered
    await clock.advance(1000);
    expect(rate.ratePerSecond).toBeGreaterThan(100);
    rate.record('throttled');
    expect(rate.ratePerSecond).toBeGreaterThanOrEqual(95);
    expect(rate.ratePerSecond).toBeLessThan(96); // 0.95 × ~100, not the 100 before the rise
    stop();
    await clock.runAll();
  });

  it('after a blind cut, a delivered rate whose 0.95 share is just below the new rate cuts to that share', async () => {
    const { clock, rate } = held(40, false, { coolOffMs: 2000 });
    rate.record('throttled'); // blind, to 20
    await deliver(rate, clock, 2, 1500); // 20 r/s: 0.95 × 20 < 20
    rate.record('throttled');
    expect(rate.ratePerSecond).toBeCloseTo(19, 12);
  });

  it('margin 0: a delivered rate equal to the rate after a blind cut is a note, so the event still dates from the cut', async () => {
    const { clock, rate } = held(40, false, { coolOffMs: 2000, margin: 0 });
    rate.record('throttled'); // blind, to 20, at 0
    await deliver(rate, clock, 2, 1500);
    rate.record('throttled'); // delivered 20 = the rate: noted
    expect(rate.ratePerSecond).toBe(20);
    await deliver(rate, clock, 1, 2500);
    rate.record('throttled'); // 2500: a new event (the cut was at 0); 10 r/s over the last second
    expect(rate.ratePerSecond).toBe(10); // (had the note been a cut, this would be the same event: noted, 20)
  });
});

describe('adaptiveRate: relapses beyond what maxCoolOffMs needs', () => {
  /** After `n` relapses, the wait before the first probe, and the time that probe holds. */
  async function after(n: number, options: AdaptiveRateOptions = {}) {
    const { clock, rate } = make({ initialRatePerSecond: 10, ...options });
    const stop = busy(rate);
    for (let i = 0; i < n; i++) {
      await untilRise(rate, clock);
      rate.record('throttled'); // right after a rise: a relapse
    }
    const first = rate.currentCoolOffMs;
    // The probe after the last relapse, once its 429 is paid for (5 s at 10 r/s): the backoff is
    // then released whatever it was — the hold is the base cool-off after 3 relapses and after 5.
    await untilRise(rate, clock);
    const hold = rate.currentCoolOffMs;
    stop();
    await clock.runAll();
    return [first, hold];
  }

  it('are not counted: after 5 relapses (3 reach 8 s), the backoff is the same as after 3', async () => {
    expect(await after(3)).toEqual([8000, 1000]);
    expect(await after(5)).toEqual([8000, 1000]);
    expect(await after(3, { maxCoolOffMs: 1000 })).toEqual([1000, 1000]);
  });
});

describe('adaptiveRate: a rise applied late', () => {
  /**
   * A controller at 10 r/s whose rise falls due at 1000 (demand reached the rate at 100, a success
   * at 50), applied by a success at `at`, then given the evidence for the next: a success and a
   * request kept waiting. Returns the rate after the first rise and the controller.
   */
  async function riseAppliedAt(at: number) {
    const { clock, rate } = make({ initialRatePerSecond: 10 });
    rate.acquire();
    const waiting = rate.acquire(); // kept waiting until 100: demand reaches the rate
    await clock.advance(50);
    rate.record('success'); // the evidence is complete; the rise falls due at 1000
    await clock.advance(at - clock.now());
    await waiting;
    rate.record('success'); // applies it
    const first = rate.ratePerSecond;
    expect(first).toBeGreaterThan(10);
    rate.record('success');
    rate.acquire();
    const more = rate.acquire();
    return { clock, rate, first, more };
  }

  it('50 ms late: counts from when it fell due, so the next one comes a cool-off after that, not after the success that applied it', async () => {
    const { clock, rate, first, more } = await riseAppliedAt(1050);
    await clock.advance(1000 + rate.currentCoolOffMs - 1 - clock.now());
    expect(rate.ratePerSecond).toBe(first);
    await clock.advance(1);
    expect(rate.ratePerSecond).toBeGreaterThan(first);
    await clock.runAll();
    await more;
  });

  it('5 s late (no call from 100 to 6050): one rise, and the next a cool-off after it was applied, not a second at once', async () => {
    const { clock, rate, first, more } = await riseAppliedAt(6050);
    // The evidence that came with it was gathered at the old rate: counted from 1000, the next
    // rise would have been due at 2000, long past.
    expect(rate.ratePerSecond).toBe(first);
    await clock.advance(rate.currentCoolOffMs - 1);
    expect(rate.ratePerSecond).toBe(first);
    await clock.advance(1);
    expect(rate.ratePerSecond).toBeGreaterThan(first);
    await clock.runAll();
    await more;
  });
});

describe('adaptiveRate: at maxRatePerSecond', () => {
  it('no rise is planned, so a throttle there is no relapse: noted (three base steps given back), the cool-off kept', async () => {
    const { clock, rate } = make({ initialRatePerSecond: 10, maxRatePerSecond: 10 });
    const stop = busy(rate); // successes, requests kept waiting: a rise would be due from 1000
    await clock.advance(2000);
    rate.record('throttled');
    // The note's base steps given back ([collision.yield]), 3 × 0.1 × 5 r/s; a relapse would double the cool-off.
    expect(rate.ratePerSecond).toBe(8.5);
    expect(rate.currentCoolOffMs).toBe(1000);
    stop();
    await clock.runAll();
  });
});
