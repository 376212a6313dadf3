// Hostile options, rate/'s part: every option of ebb/rate's constructors fed
// fc.anything() and boundary numbers either throws a TypeError / RangeError whose message names
// the option, or gives a controller or budget that works: on a virtual clock, every acquire is
// granted after a finite, non-negative wait (no hang: the clock's wake-ups are bounded), and the
// state it reports stays finite. (awsRetryQuota: its constructor options only.)
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import type { Outcome } from '../retry/options.js';
import { adaptiveRate } from './adaptive-rate.js';
import { adaptiveThrottle, LocalThrottleError } from './adaptive-throttle.js';
import { awsAdaptiveRate } from './aws-adaptive-rate.js';
import { awsRetryQuota } from './aws-retry-quota.js';
import type { AdaptiveRateController } from './controller.js';
import { ratioBudget } from './ratio-budget.js';
import { tokenBudget } from './token-budget.js';

const boundary = fc.constantFrom(
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  -0,
  0,
  2 ** 53,
  1e308,
  -1,
  0.5,
  1.5,
  0.001,
  1000,
  '5',
  null,
  {},
  [],
  true,
  '9'.repeat(100_000),
);
const hostile = fc.oneof({ arbitrary: boundary, weight: 3 }, fc.anything(), fc.double(), fc.integer());

/** An options object holding some of `keys`, each with a hostile value (sometimes a sane one). */
const optionsOf = (keys: readonly string[], sane: Record<string, fc.Arbitrary<unknown>> = {}) =>
  fc.record(Object.fromEntries(keys.map((k) => [k, sane[k] ? fc.oneof(hostile, sane[k]) : hostile])), {
    requiredKeys: [],
  });

/** True if the thrown value is a TypeError / RangeError naming one of the options given. */
function namesAnOption(error: unknown, options: object): boolean {
  if (!(error instanceof TypeError || error instanceof RangeError)) return false;
  // A value is quoted in part, never whole (a 100,000-character string is among the values).
  if (error.message.length >= 1_000) return false;
  // `name`, `costs.transient`, or a nested object's own prefix ("awsRetryQuota() costs: …").
  return Object.keys(options).some((k) => error.message.includes(`\`${k}`) || error.message.includes(` ${k}: `));
}

/** Drives a controller through a scripted run on the virtual clock; checks every wait. */
async function drive(
  make: (clock: ReturnType<typeof virtualClock>) => AdaptiveRateController,
  script: readonly { outcome: Outcome; stepMs: number; burst: number }[],
): Promise<void> {
  const clock = virtualClock(1_000_000); // not 0: elapsed arithmetic must not rely on it
  const rate = make(clock);
  const waits: Promise<void>[] = [];
  for (const { outcome, stepMs, burst } of script) {
    for (let i = 0; i < burst; i++) {
      const asked = clock.now();
      let got: unknown;
      try {
        got = rate.acquire();
      } catch (error) {
        expect(error).toBeInstanceOf(LocalThrottleError);
        continue;
      }
      waits.push(
        Promise.resolve(got).then((ticket) => {
          const waited = clock.now() - asked;
          expect(Number.isFinite(waited) && waited >= 0).toBe(true);
          rate.record(outcome, ticket);
        }),
      );
    }
    const r = rate.ratePerSecond;
    expect(typeof r === 'number' && r > 0 && !Number.isNaN(r)).toBe(true);
    await clock.advance(stepMs);
  }
  await clock.runAll(100_000); // throws if the controller keeps the clock busy for ever
  await Promise.all(waits);
  expect(clock.pending).toBe(0);
}

const script = fc.array(
  fc.record({
    outcome: fc.constantFrom<Outcome>('success', 'throttled', 'failure'),
    stepMs: fc.integer({ min: 0, max: 1500 }),
    burst: fc.integer({ min: 0, max: 6 }),
  }),
  { maxLength: 25 },
);

const sanePositive = fc.double({ min: 0.01, max: 1e4, noNaN: true });

/** A script that surely reaches every branch of a controller: successes, then throttles among them. */
const thorough = script.map((tail) => [
  ...Array.from({ length: 30 }, () => ({ outcome: 'success' as Outcome, stepMs: 50, burst: 2 })),
  ...Array.from({ length: 6 }, (_, i) => ({
    outcome: (i % 2 ? 'throttled' : 'success') as Outcome,
    stepMs: 400,
    burst: 3,
  })),
  ...tail,
]);

describe('ebb/rate constructors against hostile options', () => {
  it('adaptiveRate: throws naming the option, or paces with finite, non-negative waits', async () => {
    const keys = [
      'initialRatePerSecond',
      'decreaseFactor',
      'coolOffMs',
      'maxCoolOffMs',
      'margin',
      'increase',
      'minRatePerSecond',
      'maxRatePerSecond',
      'priorities',
      'defaultPriority',
      'maxRetryAfterMs',
    ];
    await fc.assert(
      fc.asyncProperty(
        optionsOf(keys, {
          initialRatePerSecond: sanePositive,
          decreaseFactor: fc.double({ min: 0.01, max: 0.99, noNaN: true }),
          coolOffMs: sanePositive,
          margin: fc.double({ min: 0, max: 0.49, noNaN: true }),
          increase: fc.double({ min: 0.001, max: 0.5, noNaN: true }),
          minRatePerSecond: sanePositive,
          maxRatePerSecond: sanePositive,
        }),
        script,
        async (options, steps) => {
          try {
            adaptiveRate(options as never);
          } catch (error) {
            expect(namesAnOption(error, options), String(error)).toBe(true);
            return;
          }
          await drive((clock) => adaptiveRate({ ...(options as object), clock }), steps);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('adaptiveRate: one hostile option at a time, through successes and throttles', async () => {
    for (const key of [
      'initialRatePerSecond',
      'decreaseFactor',
      'coolOffMs',
      'maxCoolOffMs',
      'margin',
      'increase',
      'minRatePerSecond',
      'maxRatePerSecond',
      'maxRetryAfterMs',
    ]) {
      await fc.assert(
        fc.asyncProperty(hostile, thorough, async (value, steps) => {
          const options = { [key]: value };
          try {
            adaptiveRate(options as never);
          } catch (error) {
            expect(namesAnOption(error, options), String(error)).toBe(true);
            return;
          }
          await drive((clock) => adaptiveRate({ ...options, clock }), steps);
        }),
        { numRuns: 100 },
      );
    }
  });

  it('awsAdaptiveRate and adaptiveThrottle: the same', async () => {
    await fc.assert(
      fc.asyncProperty(optionsOf(['clock']), script, async (options, steps) => {
        if (options.clock !== undefined) expect(() => awsAdaptiveRate(options as never)).toThrow(/`clock`/);
        else awsAdaptiveRate(options);
        await drive((clock) => awsAdaptiveRate({ clock }), steps);
      }),
      { numRuns: 100 },
    );
    await fc.assert(
      fc.asyncProperty(
        optionsOf(['k', 'windowMs', 'random'], {
          k: fc.double({ min: 1, max: 10, noNaN: true }),
          windowMs: sanePositive,
          random: fc.constant(() => 0.5),
        }),
        script,
        async (options, steps) => {
          try {
            adaptiveThrottle(options as never);
          } catch (error) {
            expect(namesAnOption(error, options), String(error)).toBe(true);
            return;
          }
          const random = (options as { random?: unknown }).random;
          // A Random that leaves [0, 1) is named when it is used: drive only sane ones.
          if (random !== undefined && random !== null) return;
          await drive((clock) => adaptiveThrottle({ ...(options as object), clock }), steps);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('tokenBudget, ratioBudget, awsRetryQuota: throw naming the option, or keep a finite, non-negative balance', () => {
    const ops = fc.array(fc.constantFrom('failure', 'retry', 'success', 'request'), { maxLength: 60 });
    fc.assert(
      fc.property(
        optionsOf(['maxTokens', 'tokenRatio'], { maxTokens: fc.integer({ min: 1, max: 100 }) }),
        ops,
        (options, steps) => {
          let budget: ReturnType<typeof tokenBudget>;
          try {
            budget = tokenBudget(options as never);
          } catch (error) {
            expect(namesAnOption(error, options), String(error)).toBe(true);
            return;
          }
          for (const op of steps) {
            if (op === 'failure') budget.recordFailure();
            else if (op === 'retry') budget.tryAcquireRetry();
            else budget.recordSuccess();
            expect(Number.isFinite(budget.tokens) && budget.tokens >= 0).toBe(true);
          }
        },
      ),
      { numRuns: 400 },
    );
    fc.assert(
      fc.property(optionsOf(['percentCanRetry', 'minRetriesPerSecond', 'ttlMs']), ops, (options, steps) => {
        const clock = virtualClock(5_000);
        let budget: ReturnType<typeof ratioBudget>;
        try {
          budget = ratioBudget({ ...(options as object), clock });
        } catch (error) {
          expect(namesAnOption(error, options), String(error)).toBe(true);
          return;
        }
        for (const op of steps) {
          if (op === 'request') budget.recordRequest();
          else if (op === 'retry') budget.tryAcquireRetry();
          expect(Number.isFinite(budget.balance) && budget.balance >= 0).toBe(true);
        }
      }),
      { numRuns: 400 },
    );
    fc.assert(
      fc.property(optionsOf(['capacity', 'costs', 'noRetryIncrement']), (options) => {
        try {
          const quota = awsRetryQuota(options as never);
          expect(Number.isFinite(quota.available) && quota.available >= 0).toBe(true);
        } catch (error) {
          expect(namesAnOption(error, options), String(error)).toBe(true);
        }
      }),
      { numRuns: 400 },
    );
  });
});
