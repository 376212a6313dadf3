import { describe, expect, it } from 'vitest';
import type { Clock } from '../core/clock.js';
import { type VirtualClock, virtualClock } from '../core/virtual-clock.js';
import { type AdaptiveRateOptions, adaptiveRate } from './adaptive-rate.js';
import type { AdaptiveRateController } from './controller.js';

// Edges of adaptiveRate that the behaviour tests beside it leave open (issue 10, mutation score):
// the exact messages of bad options, the boundaries of each check, the server's hints read field
// by field, and the bookkeeping (pauses, paces, the delivered rate) seen through the public API.
// Every test is on virtual time.

const make = (options: AdaptiveRateOptions = {}) => {
  const clock = virtualClock();
  return { clock, rate: adaptiveRate({ clock, ...options }) };
};

/** The error `adaptiveRate(options)` throws: its class and its whole message. */
function thrown(options: unknown): [string, string] {
  try {
    adaptiveRate(options as AdaptiveRateOptions);
  } catch (error) {
    return [(error as Error).constructor.name, (error as Error).message];
  }
  throw new Error(`accepted ${JSON.stringify(options)}`);
}

/** Asks for `n` turns at once; resolves with the virtual time of each grant, in call order. */
async function turns(rate: AdaptiveRateController, clock: VirtualClock, n: number): Promise<number[]> {
  const times: number[] = [];
  const all = Array.from({ length: n }, (_, i) =>
    Promise.resolve(rate.acquire()).then(() => {
      times[i] = clock.now();
    }),
  );
  await clock.runAll();
  await Promise.all(all);
  return times;
}

/** Gaps between the grants of `n` requests queued at once, every sleep ending `lateMs` late. */
async function lateGaps(options: AdaptiveRateOptions, lateMs: number, n: number): Promise<number[]> {
  const base = virtualClock();
  const late: Clock = { now: () => base.now(), sleep: (ms, signal) => base.sleep(ms + lateMs, signal) };
  const rate = adaptiveRate({ clock: late, ...options });
  const times: number[] = [];
  const all = Array.from({ length: n }, () =>
    Promise.resolve(rate.acquire()).then(() => {
      times.push(base.now());
    }),
  );
  await base.runAll();
  await Promise.all(all);
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

/** A 429 as `ebb/http` reports it: `retryAfterMs` and the response itself. */
const throttle = (retryAfterMs: number | undefined, headers: Record<string, string> = {}) => ({
  throttled: true,
  status: 429,
  retryAfterMs,
  response: new Response(null, { status: 429, headers }),
});
const ok = (headers: Record<string, string>) => new Response('ok', { status: 200, headers });

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
      'RangeError',
      'adaptiveRate(): expected `defaultPriority` to be one of the priorities ("1", "2"), got 1.',
    ],
    [
      'maxServerWaitMs negative',
      { maxServerWaitMs: -5 },
      'RangeError',
      'adaptiveRate(): expected `maxServerWaitMs` to be a finite number >= 0, got -5. Durations are milliseconds, such as 500.',
    ],
    [
      'an unknown option',
      { coolOff: 5 },
      'TypeError',
      'adaptiveRate(): unknown option `coolOff`. Did you mean `coolOffMs`? Known options: initialRatePerSecond, decreaseFactor, coolOffMs, maxCoolOffMs, margin, increase, minRatePerSecond, maxRatePerSecond, priorities, defaultPriority, maxServerWaitMs, clock.',
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

  it('a retryAfterMs of 2^53 is cut to maxServerWaitMs; a fraction of a ms is kept', async () => {
    const a = make({ maxServerWaitMs: 7000 });
    a.rate.record('throttled', undefined, throttle(2 ** 53));
    expect(a.rate.pausedForMs).toBe(7000);
    const b = make();
    b.rate.record('throttled', undefined, throttle(0.5));
    expect(b.rate.pausedForMs).toBe(0.5);
  });

  it('two exhausted policies pause for the longer window, whichever comes first; cut to maxServerWaitMs', () => {
    for (const field of ['"a";r=0;t=3, "b";r=0;t=1', '"b";r=0;t=1, "a";r=0;t=3', '"a";r=5;t=1, "b";r=0;t=3']) {
      const { rate } = make();
      rate.record('success', undefined, ok({ ratelimit: field }));
      expect(rate.pausedForMs, field).toBe(3000);
    }
    const { rate } = make({ maxServerWaitMs: 2500 });
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
