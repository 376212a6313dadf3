import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { virtualClock } from '../core/virtual-clock.js';
import { RetryError } from '../retry/errors.js';
import { pipeline } from '../retry/pipeline.js';
import { retrying } from '../retry/retrying.js';
import { type AdaptiveThrottleOptions, adaptiveThrottle, LocalThrottleError } from './adaptive-throttle.js';

/** A Random that returns the scripted draws in turn and logs how many were taken. */
const scripted = (...draws: number[]) => {
  const r = () => {
    r.calls++;
    return draws.shift() ?? 0.999;
  };
  r.calls = 0;
  return r;
};

const make = (options: AdaptiveThrottleOptions = {}, draws: number[] = []) => {
  const clock = virtualClock();
  const random = scripted(...draws);
  return { clock, random, throttle: adaptiveThrottle({ clock, random, ...options }) };
};

/** `n` requests let through (draws permitting), each recorded with `outcome`. */
const send = (t: ReturnType<typeof adaptiveThrottle>, n: number, outcome: 'success' | 'throttled' | 'failure') => {
  for (let i = 0; i < n; i++) {
    t.acquire();
    t.record(outcome);
  }
};

describe('adaptiveThrottle: the SRE book formula, max(0, (requests − K·accepts) / (requests + 1))', () => {
  it('rejects nothing, and draws no random number, while the backend accepts everything', () => {
    const { throttle, random } = make();
    send(throttle, 500, 'success');
    expect(throttle.requests).toBe(500);
    expect(throttle.accepts).toBe(500);
    expect(throttle.rejectionProbability).toBe(0);
    expect(random.calls).toBe(0);
  });

  it('gives the exact probability over a scripted window, K = 2 by default', () => {
    const { throttle } = make();
    send(throttle, 3, 'success'); // requests 3, accepts 3: (3 − 6) / 4 < 0 → 0
    expect(throttle.rejectionProbability).toBe(0);
    send(throttle, 3, 'throttled'); // 6, 3: (6 − 6) / 7 = 0
    expect(throttle.rejectionProbability).toBe(0);
    // From here every request is drawn against p; the scripted Random returns 0.999 (no rejection).
    send(throttle, 4, 'throttled'); // 10, 3: 4 / 11
    expect(throttle.rejectionProbability).toBe(4 / 11);
    send(throttle, 1, 'failure'); // a 500 was accepted: 11, 4: 3 / 12
    expect(throttle.rejectionProbability).toBe(3 / 12);
  });

  it('uses K: K = 1.5 over 20 requests with 8 accepted gives 8 / 21; K = 1 over 10 with 9 gives 1 / 11', () => {
    const a = make({ k: 1.5 });
    send(a.throttle, 8, 'success');
    send(a.throttle, 12, 'throttled');
    expect(a.throttle.rejectionProbability).toBe((20 - 1.5 * 8) / 21);
    const b = make({ k: 1 });
    send(b.throttle, 9, 'success');
    send(b.throttle, 1, 'throttled');
    expect(b.throttle.rejectionProbability).toBe(1 / 11);
  });

  it('rejects exactly when the draw is below the probability, and counts the rejected request', () => {
    // 10 requests, none accepted: p = 10 / 11 for the 11th.
    const p = 10 / 11;
    // The first request draws nothing (p = 0 with nothing counted); the next nine draw 0.999.
    const { throttle, random } = make({}, [...Array.from({ length: 9 }, () => 0.999), p, p - 2 ** -53]);
    send(throttle, 10, 'throttled');
    expect(throttle.rejectionProbability).toBe(p);
    expect(throttle.acquire()).toBeUndefined(); // draw = p: let through
    throttle.record('throttled');
    // 11 requests, 0 accepts: p = 11 / 12; the draw 10/11 − 2^-53 is below it.
    let thrown: unknown;
    try {
      throttle.acquire();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(LocalThrottleError);
    expect((thrown as LocalThrottleError).probability).toBe(11 / 12);
    expect((thrown as LocalThrottleError).code).toBe('EBB_LOCAL_THROTTLE');
    expect(throttle.requests).toBe(12); // the rejected one counts, as in the book
    expect(throttle.rejectionProbability).toBe(12 / 13);
    expect(random.calls).toBe(11);
  });

  it('forgets a bucket at a time: the window is 60 buckets of windowMs / 60', async () => {
    const { clock, throttle } = make({ windowMs: 60_000 });
    send(throttle, 6, 'throttled'); // bucket 0 (t = 0)
    await clock.advance(30_000);
    send(throttle, 4, 'success'); // bucket 30
    expect([throttle.requests, throttle.accepts]).toEqual([10, 4]);
    expect(throttle.rejectionProbability).toBe(2 / 11);
    await clock.advance(29_999); // t = 59 999: bucket 59, the window still holds bucket 0
    expect([throttle.requests, throttle.accepts]).toEqual([10, 4]);
    await clock.advance(1); // t = 60 000: bucket 60, bucket 0 is out
    expect([throttle.requests, throttle.accepts]).toEqual([4, 4]);
    expect(throttle.rejectionProbability).toBe(0);
    await clock.advance(30_000);
    expect([throttle.requests, throttle.accepts]).toEqual([0, 0]);
  });

  it('matches the formula over any script of requests, outcomes and time steps', async () => {
    const event = fc.oneof(
      fc.constantFrom('success', 'throttled', 'failure') as fc.Arbitrary<'success' | 'throttled' | 'failure'>,
      fc.integer({ min: 1, max: 5000 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(event, { maxLength: 200 }),
        fc.double({ min: 1, max: 4, noNaN: true }),
        async (script, k) => {
          const clock = virtualClock();
          const throttle = adaptiveThrottle({ clock, k, windowMs: 6000, random: () => 0.999_999 });
          const log: { t: number; accepted: boolean }[] = [];
          let now = 0;
          for (const e of script) {
            if (typeof e === 'number') {
              now += e;
              await clock.advance(e);
              continue;
            }
            try {
              throttle.acquire();
            } catch {
              // Rejected: counted as a request all the same.
            }
            throttle.record(e);
            log.push({ t: now, accepted: e !== 'throttled' });
          }
          const bucket = (t: number) => Math.floor(t / 100);
          const inWindow = log.filter((r) => bucket(r.t) > bucket(now) - 60);
          const requests = inWindow.length;
          const accepts = inWindow.filter((r) => r.accepted).length;
          expect(throttle.requests).toBe(requests);
          expect(throttle.accepts).toBe(accepts);
          expect(throttle.rejectionProbability).toBe(Math.max(0, (requests - k * accepts) / (requests + 1)));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('adaptiveThrottle in a pipeline', () => {
  it('a locally rejected attempt is a failed attempt (a throttle) without calling the operation', async () => {
    const { clock, throttle } = make({}, [0.999, 0.999, 0]);
    send(throttle, 3, 'throttled'); // p = 3 / 4 for the next; the draw 0 rejects it
    let calls = 0;
    const result = pipeline([
      retrying({ clock, backoff: constant({ delayMs: 10, maxAttempts: 1, jitter: noJitter }) }),
      throttle,
    ])
      .execute(() => {
        calls++;
        return 'sent';
      })
      .catch((e: unknown) => e);
    await clock.runAll();
    const error = (await result) as RetryError;
    expect(error).toBeInstanceOf(RetryError);
    expect(error.cause).toBeInstanceOf(LocalThrottleError);
    expect(error.cause).toMatchObject({ throttled: true, code: 'EBB_LOCAL_THROTTLE' });
    expect(calls).toBe(0);
    expect(throttle.ratePerSecond).toBe(Infinity);
    // Alone, the throttle refuses at once with its own error.
    const { throttle: alone } = make({}, [0.999, 0.999, 0]);
    send(alone, 3, 'throttled');
    await expect(pipeline([alone]).execute(() => 'sent')).rejects.toBeInstanceOf(LocalThrottleError);
  });
});

describe('adaptiveThrottle: options', () => {
  it('rejects bad options at construction, naming them', () => {
    const bad: [unknown, RegExp][] = [
      [{ k: 0.5 }, /`k` to be a finite number >= 1, got 0.5/],
      [{ k: Number.NaN }, /`k`/],
      [{ k: Infinity }, /`k`/],
      [{ k: null }, /`k`.*got null/],
      [{ k: '2' }, /`k`/],
      [{ windowMs: 0 }, /`windowMs` to be a finite number > 0/],
      [{ windowMs: -1 }, /`windowMs`/],
      [{ windowMs: Infinity }, /`windowMs`/],
      [{ random: 0.5 }, /`random` to be a function/],
      [{ clock: {} }, /`clock`/],
      [{ K: 2 }, /unknown option `K`/],
    ];
    for (const [options, message] of bad) {
      expect(() => adaptiveThrottle(options as AdaptiveThrottleOptions), JSON.stringify(options)).toThrow(message);
    }
  });

  it('names a Random that leaves [0, 1)', () => {
    const bad = adaptiveThrottle({ random: () => Number.NaN });
    bad.acquire(); // p = 0: no draw
    bad.record('throttled');
    expect(() => bad.acquire()).toThrow(/`random` returned NaN/);
    const one = adaptiveThrottle({ random: () => 1 });
    one.acquire();
    one.record('throttled');
    expect(() => one.acquire()).toThrow(RangeError);
  });
});

/** What `f` throws (failing the test if it returns). */
const thrown = (f: () => unknown): unknown => {
  try {
    f();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
};

/** A throttle one throttled request into its window: the next acquire draws against p = 1 / 2. */
const primed = (random: () => unknown) => {
  const clock = virtualClock();
  const throttle = adaptiveThrottle({ clock, random: random as () => number });
  throttle.acquire();
  throttle.record('throttled');
  return { clock, throttle };
};

describe('adaptiveThrottle: its error, an aborted signal and a Random out of range', () => {
  it('rejects with a LocalThrottleError that names itself, is a throttle, and says the probability', () => {
    const { throttle } = primed(() => 0.25);
    const error = thrown(() => throttle.acquire()) as LocalThrottleError;
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('LocalThrottleError');
    expect(String(error).startsWith('LocalThrottleError: ')).toBe(true);
    expect(error.code).toBe('EBB_LOCAL_THROTTLE');
    expect(error.throttled).toBe(true);
    expect(error.probability).toBe(0.5);
    expect(error.message).toBe(
      'Rejected locally by adaptiveThrottle (probability 0.500): the backend accepted too few of the recent requests.',
    );
    expect(new LocalThrottleError(2 / 3).message).toContain('(probability 0.667)');
  });

  it('throws an aborted signal’s reason at once, without counting the request or drawing', () => {
    const draws: number[] = [];
    const { throttle } = primed(() => {
      draws.push(1);
      return 0.9;
    });
    const controller = new AbortController();
    const reason = new Error('stop');
    controller.abort(reason);
    expect(thrown(() => throttle.acquire(controller.signal))).toBe(reason);
    expect(throttle.requests).toBe(1);
    expect(draws).toEqual([]);
    // A live signal changes nothing.
    expect(throttle.acquire(new AbortController().signal)).toBeUndefined();
    expect(throttle.requests).toBe(2);
    expect(draws).toEqual([1]);
  });

  it('names a Random that returns anything but a number in [0, 1), exactly', () => {
    const cases: [unknown, string][] = [
      ['0.25', '"0.25"'],
      [-0.5, '-0.5'],
      [-Number.MIN_VALUE, '-5e-324'],
      [1, '1'],
      [Number.NaN, 'NaN'],
      [Infinity, 'Infinity'],
      [-Infinity, '-Infinity'],
      [null, 'null'],
      [undefined, 'undefined'],
      [0n, '0n'],
      [{ valueOf: () => 0.25 }, 'an object'],
    ];
    for (const [draw, shown] of cases) {
      const { throttle } = primed(() => draw);
      const error = thrown(() => throttle.acquire());
      expect(error, shown).toBeInstanceOf(RangeError);
      expect((error as Error).message).toBe(
        `adaptiveThrottle(): \`random\` returned ${shown}; it must return a number in [0, 1).`,
      );
    }
    // The edges of [0, 1) are draws like any other: 0 rejects (0 < 1/2), -0 too, 1 − 2^-53 lets through.
    for (const [draw, rejected] of [
      [0, true],
      [-0, true],
      [1 - 2 ** -53, false],
    ] as const) {
      const { throttle } = primed(() => draw);
      if (rejected) expect(thrown(() => throttle.acquire())).toBeInstanceOf(LocalThrottleError);
      else expect(throttle.acquire()).toBeUndefined();
    }
  });

  it('any value from a Random is either a draw in [0, 1) or a RangeError naming `random`', () => {
    fc.assert(
      fc.property(fc.anything(), (draw) => {
        const { throttle } = primed(() => draw);
        const inRange = typeof draw === 'number' && draw >= 0 && draw < 1;
        let error: unknown;
        try {
          throttle.acquire();
        } catch (e) {
          error = e;
        }
        if (inRange) expect(error === undefined || error instanceof LocalThrottleError).toBe(true);
        else {
          expect(error).toBeInstanceOf(RangeError);
          expect((error as Error).message).toMatch(/^adaptiveThrottle\(\): `random` returned /);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('reads a custom clock set back as no time passing: the window keeps its counts, and time goes on from there', async () => {
    let now = 30_000;
    const clock = { now: () => now, sleep: () => Promise.resolve() };
    const throttle = adaptiveThrottle({ clock, random: () => 0.999 });
    send(throttle, 3, 'throttled');
    expect([throttle.requests, throttle.accepts]).toEqual([3, 0]);
    now = 10_000; // set back 20 s: read as 30 s still
    expect([throttle.requests, throttle.accepts]).toEqual([3, 0]);
    send(throttle, 2, 'success');
    expect([throttle.requests, throttle.accepts]).toEqual([5, 2]);
    now = 10_000 + 120_000; // two minutes on, on the new timeline: the window has moved past all five
    expect([throttle.requests, throttle.accepts]).toEqual([0, 0]);
  });
});

describe('adaptiveThrottle: option messages', () => {
  it('name the constructor, the option, the value and a fix', () => {
    const cases: [unknown, ErrorConstructor, string][] = [
      [{ k: 0.5 }, RangeError, 'expected `k` to be a finite number >= 1, got 0.5. For example 2, as in the SRE book.'],
      [{ k: '2' }, TypeError, 'expected `k` to be a finite number >= 1, got "2". For example 2, as in the SRE book.'],
      [
        { windowMs: 0 },
        RangeError,
        'expected `windowMs` to be a finite number > 0, got 0. For example 60000 (one minute).',
      ],
      [
        { windowMs: -1 },
        RangeError,
        'expected `windowMs` to be a finite number > 0, got -1. For example 60000 (one minute).',
      ],
      [
        { windowMs: Infinity },
        RangeError,
        'expected `windowMs` to be a finite number > 0, got Infinity. For example 60000 (one minute).',
      ],
      [
        { windowMs: '60000' },
        TypeError,
        'expected `windowMs` to be a finite number > 0, got "60000". For example 60000 (one minute).',
      ],
      [
        { windowMs: null },
        TypeError,
        'expected `windowMs` to be a finite number > 0, got null. For example 60000 (one minute).',
      ],
      [
        { random: 0.5 },
        TypeError,
        'expected `random` to be a function returning a number in [0, 1), got 0.5. Leave it out for Math.random, or pass seeded(1) from ebb for a repeatable run.',
      ],
      [
        { random: 'x' },
        TypeError,
        'expected `random` to be a function returning a number in [0, 1), got "x". Leave it out for Math.random, or pass seeded(1) from ebb for a repeatable run.',
      ],
    ];
    for (const [options, type, message] of cases) {
      const error = thrown(() => adaptiveThrottle(options as AdaptiveThrottleOptions));
      expect(error, message).toBeInstanceOf(type);
      expect((error as Error).message).toBe(`adaptiveThrottle(): ${message}`);
    }
    expect((thrown(() => adaptiveThrottle(null as never)) as Error).message).toBe(
      'adaptiveThrottle(): expected an options object, got null.',
    );
  });
});
