import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import type { Result } from '../retry/errors.js';
import { pipeline } from '../retry/pipeline.js';
import { adaptiveRate } from './adaptive-rate.js';
import { adaptiveThrottle } from './adaptive-throttle.js';
import { awsAdaptiveRate } from './aws-adaptive-rate.js';

/** A client that returns its responses: a 429 is a value, not an error, unless isFailure says so. */
const statusIs429 = (o: Result) =>
  o.ok ? ((o.value as { status: number }).status === 429 ? ('throttled' as const) : false) : true;
const tooMany = () => ({ status: 429 });
const throttledError = () => Promise.reject(Object.assign(new Error('429'), { throttled: true }));

/** Each controller of ebb/rate, built on a virtual clock with or without an isFailure, and what "it slowed down" reads as. */
const controllers = [
  {
    name: 'adaptiveRate',
    make: (isFailure?: typeof statusIs429) => {
      const c = adaptiveRate({ clock: virtualClock(), initialRatePerSecond: 100, ...(isFailure ? { isFailure } : {}) });
      return { mechanism: c, slowed: () => c.ratePerSecond < 100, unjudged: () => c.ratePerSecond === 100 };
    },
  },
  {
    name: 'awsAdaptiveRate',
    make: (isFailure?: typeof statusIs429) => {
      const c = awsAdaptiveRate({ clock: virtualClock(), ...(isFailure ? { isFailure } : {}) });
      // Its token bucket turns on at the first throttle: the rate becomes finite.
      return { mechanism: c, slowed: () => c.ratePerSecond < Infinity, unjudged: () => c.ratePerSecond === Infinity };
    },
  },
  {
    name: 'adaptiveThrottle',
    make: (isFailure?: typeof statusIs429) => {
      const c = adaptiveThrottle({ clock: virtualClock(), ...(isFailure ? { isFailure } : {}) });
      // A throttled request is not an accept (Google SRE's client-side throttling).
      // A request is counted when admitted; one whose verdict failed is never counted as accepted.
      return {
        mechanism: c,
        slowed: () => c.accepts < c.requests,
        unjudged: () => c.accepts === 0 && c.requests === 1,
      };
    },
  },
];

describe.each(controllers)('$name in a pipeline judges each outcome by its isFailure', ({ make }) => {
  it("a returned { status: 429 } that isFailure calls 'throttled' slows it down; the value is still the call's result", async () => {
    const { mechanism, slowed } = make(statusIs429);
    expect(await pipeline([mechanism]).execute(tooMany)).toEqual({ status: 429 });
    expect(slowed()).toBe(true);
  });

  it('without isFailure a returned value is no failure, whatever it holds: nothing slows down', async () => {
    const { mechanism, slowed } = make();
    expect(await pipeline([mechanism]).execute(tooMany)).toEqual({ status: 429 });
    expect(slowed()).toBe(false);
  });

  it('by default an error with throttled: true (ebb/http sets it on a 429) is a throttle', async () => {
    const { mechanism, slowed } = make();
    await expect(pipeline([mechanism]).execute(throttledError)).rejects.toThrow('429');
    expect(slowed()).toBe(true);
  });

  it('an async isFailure is awaited; what it throws fails only its call, and records no outcome', async () => {
    const asyncJudge = make((o) => Promise.resolve(statusIs429(o)) as never);
    await pipeline([asyncJudge.mechanism]).execute(tooMany);
    expect(asyncJudge.slowed()).toBe(true);
    const bug = new Error('isFailure broke');
    const broken = make(() => {
      throw bug;
    });
    await expect(pipeline([broken.mechanism]).execute(tooMany)).rejects.toBe(bug);
    expect(broken.unjudged()).toBe(true);
  });
});
