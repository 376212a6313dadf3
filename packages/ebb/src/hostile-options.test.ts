import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Backoff } from './backoff/backoff.js';
import { chain } from './backoff/chain.js';
import { constant } from './backoff/constant.js';
import { decorrelatedJitter } from './backoff/decorrelated.js';
import { describePolicy, describeRow } from './backoff/describe.js';
import { exponential } from './backoff/exponential.js';
import { additiveJitter } from './backoff/jitter-additive.js';
import { equalJitter } from './backoff/jitter-equal.js';
import { fullJitter } from './backoff/jitter-full.js';
import { noJitter } from './backoff/jitter-none.js';
import { proportionalJitter } from './backoff/jitter-proportional.js';
import { linear } from './backoff/linear.js';
import { presets } from './backoff/presets.js';
import { sample } from './backoff/sample.js';
import { sequence } from './backoff/sequence.js';
import { slotted } from './backoff/slotted.js';
import { withOptions } from './backoff/with-options.js';
import { seeded } from './core/random.js';
import { virtualClock } from './core/virtual-clock.js';
import { parseRetryAfter } from './http/retry-after.js';
import { shed } from './http/shed.js';
import { shedFetch } from './http/shed-fetch.js';
import { withRetry } from './http/with-retry.js';
import { delayDistribution } from './sim/delays.js';
import { simulateEthernet } from './sim/ethernet.js';
import { simulateOverload } from './sim/overload.js';
import { simulateWifi } from './sim/wifi.js';

/*
 * The policy, HTTP and simulator half of the hostile-input specification: every option of the
 * public API fed hostile values — fc.anything() and the boundary numbers — either throws a
 * TypeError or RangeError whose message names an option it was given (or a required one it
 * lacks) in under 1,000 characters, or works: the value it builds never yields a non-finite or negative delay, and nothing
 * hangs.
 */

const BOUNDARY: unknown[] = [
  Number.NaN,
  Infinity,
  -Infinity,
  -0,
  0,
  2 ** 53,
  2 ** 53 - 1,
  1e308,
  -1,
  -1e-300,
  0.5,
  1.5,
  1,
  2,
  3,
  100,
  '5',
  '',
  null,
  undefined,
  {},
  [],
  [1, 2],
  true,
  () => 1,
  10n,
  Symbol('hostile'),
  { valueOf: () => 5 },
  '9'.repeat(100_000),
];

/** A hostile value: a boundary value, any number, or anything at all. */
const hostile: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...BOUNDARY) },
  { weight: 2, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.integer({ min: -10, max: 40 }) },
  { weight: 2, arbitrary: fc.anything() },
);

/** A value a caller might well pass: small whole numbers, fractions, 0, Infinity. */
const plausible: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 20 }) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 5_000 }) },
  { weight: 1, arbitrary: fc.double({ min: 0, max: 2, noNaN: true }) },
  { weight: 1, arbitrary: fc.constantFrom(0, Infinity) },
);

/**
 * An options object: some of `keys`, each plausible or hostile (so that both outcomes are common),
 * now and then no object at all.
 */
function hostileOptions(
  keys: readonly string[],
  own: Record<string, fc.Arbitrary<unknown>> = {},
): fc.Arbitrary<unknown> {
  const value = fc.oneof({ weight: 6, arbitrary: plausible }, { weight: 1, arbitrary: hostile });
  const record = fc.record(Object.fromEntries(keys.map((k) => [k, own[k] ?? value])), {
    requiredKeys: Object.keys(own),
  });
  return fc.oneof({ weight: 12, arbitrary: record }, { weight: 1, arbitrary: hostile });
}

/** How often `outcome` built something and how often it threw: a property must see both. */
const seen = { built: 0, refused: 0 };
function expectBoth(before: { built: number; refused: number }): void {
  expect(seen.built - before.built, 'runs that built a value').toBeGreaterThan(10);
  expect(seen.refused - before.refused, 'runs that were refused').toBeGreaterThan(10);
}

/**
 * Runs `build`; a throw must be a TypeError/RangeError naming one of `names` (the options given
 * or required), or saying the options object itself is wrong. Returns the built value, or undefined.
 */
function outcome<T>(build: () => T, names: readonly string[]): T | undefined {
  try {
    const value = build();
    seen.built++;
    return value;
  } catch (error) {
    seen.refused++;
    expect(error instanceof TypeError || error instanceof RangeError, String(error)).toBe(true);
    const message = (error as Error).message;
    const named =
      names.some((n) => message.includes(`\`${n}\``) || message.includes(`\`${n}.`) || message.includes(n)) ||
      /options object|unknown option/.test(message);
    expect(named, message).toBe(true);
    // A value is quoted in part, never whole (a 100,000-character string is among the values).
    expect(message.length, message.slice(0, 200)).toBeLessThan(1_000);
    return undefined;
  }
}

/** Every delay a policy yields is finite and >= 0 (or -1, "stop"), and inside describePolicy()'s bounds. */
function expectSaneDelays(b: Backoff, seed: number): void {
  const rows = describePolicy(b, 30).rows;
  for (const r of rows) {
    for (const v of [r.delayMs, r.minDelayMs, r.maxDelayMs, r.meanDelayMs]) {
      expect(Number.isFinite(v) && v >= 0, JSON.stringify(r)).toBe(true);
    }
    expect(r.minDelayMs).toBeLessThanOrEqual(r.maxDelayMs);
  }
  const run = b.start(seeded(seed));
  for (let n = 1; n <= 30; n++) {
    const d = run.next();
    if (d === -1) break;
    expect(Number.isFinite(d) && d >= 0, `row ${n}: ${d}`).toBe(true);
    const row = rows[n - 1];
    if (row) expect(d).toBeLessThanOrEqual(row.maxDelayMs);
  }
  let far: ReturnType<typeof describeRow> | undefined;
  try {
    far = describeRow(b, 2 ** 53 - 1);
  } catch (error) {
    // Documented (decorrelated.ts): a decorrelated chain whose mean has not settled within the work
    // budget — an initial delay of 5e-324 ms under a cap of 2^53 ms takes ~1,700 rows to reach
    // the cap — refuses rows past the computed ones rather than guess. Nothing else may throw.
    expect(error instanceof RangeError && /has not settled after \d+ rows/.test(error.message), String(error)).toBe(
      true,
    );
  }
  if (far) expect(Number.isFinite(far.maxDelayMs) && far.minDelayMs >= 0).toBe(true);
}

const LIMIT_KEYS = ['ceiling', 'maxIntervalMs', 'maxDelayMs', 'maxAttempts', 'maxElapsedMs'];
/** The parameters of the jitter factories, which their own messages name. */
const JITTER_KEYS = ['factor', 'maxMs'];

/**
 * A jitter option, made inside the property's check (a factory fed a hostile number throws there,
 * naming its parameter): a jitter value, sometimes built from hostile numbers; a 0.x string or
 * object form; or anything at all.
 */
const hostileJitter: fc.Arbitrary<() => unknown> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom<unknown>(noJitter, fullJitter, equalJitter, decorrelatedJitter).map((j) => () => j),
  },
  { weight: 2, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }).map((f) => () => proportionalJitter(f)) },
  { weight: 2, arbitrary: fc.nat(5_000).map((ms) => () => additiveJitter(ms)) },
  { weight: 1, arbitrary: fc.constantFrom('none', 'full', 'equal', 'decorrelated').map((j) => () => j) },
  { weight: 1, arbitrary: hostile.map((j) => () => j) },
  { weight: 1, arbitrary: hostile.map((f) => () => proportionalJitter(f as number)) },
  { weight: 1, arbitrary: hostile.map((ms) => () => additiveJitter(ms as number)) },
);

/** Required options: present in every generated object, plausible or hostile. */
const mostlyPlausible = fc.oneof({ weight: 4, arbitrary: plausible }, { weight: 1, arbitrary: hostile });
const delayTable = fc.oneof(
  { weight: 4, arbitrary: fc.array(mostlyPlausible, { minLength: 1, maxLength: 5 }) },
  { weight: 1, arbitrary: hostile },
);

const curves: [
  name: string,
  build: (o: never) => Backoff,
  keys: string[],
  required: Record<string, fc.Arbitrary<unknown>>,
][] = [
  ['exponential', exponential, ['initialDelayMs', 'multiplier'], {}],
  ['linear', linear, ['initialDelayMs', 'incrementMs'], {}],
  ['constant', constant, ['delayMs'], {}],
  ['sequence', sequence, ['delaysMs'], { delaysMs: delayTable }],
  ['slotted', slotted, ['slotMs', 'cwMin', 'cwMax'], { slotMs: mostlyPlausible }],
];

describe('hostile options: a named TypeError or RangeError, or a value that works', () => {
  for (const [name, build, keys, required] of curves) {
    it(`${name}(): every option hostile — a named TypeError/RangeError, or a policy with sane delays`, () => {
      const before = { ...seen };
      const withJitter = fc.tuple(hostileOptions([...keys, ...LIMIT_KEYS], required), hostileJitter, fc.boolean());
      fc.assert(
        fc.property(withJitter, fc.nat(), ([options, jitter, useJitter], seed) => {
          const withJitter =
            useJitter &&
            name !== 'slotted' &&
            typeof options === 'object' &&
            options !== null &&
            !Array.isArray(options);
          const given = typeof options === 'object' && options !== null ? Object.keys(options) : [];
          if (withJitter) given.push('jitter');
          const b = outcome(
            () => build((withJitter ? { ...options, jitter: jitter() } : options) as never),
            [...given, ...Object.keys(required), ...JITTER_KEYS],
          );
          if (b) expectSaneDelays(b, seed);
        }),
        { numRuns: 400 },
      );
      expectBoth(before);
    });
  }

  it('withOptions() on every preset, each option fed hostile values', () => {
    const names = Object.keys(presets) as (keyof typeof presets)[];
    const before = { ...seen };
    fc.assert(
      fc.property(
        fc.constantFrom(...names),
        fc.constantFrom('jitter', ...LIMIT_KEYS),
        fc.oneof(
          hostile.map((v) => () => v),
          hostileJitter,
        ),
        fc.nat(),
        (preset, option, value, seed) => {
          const b = outcome(() => withOptions(presets[preset], { [option]: value() }), [option, ...JITTER_KEYS]);
          if (b) expectSaneDelays(b, seed);
        },
      ),
      { numRuns: 1_500 },
    );
    expectBoth(before);
  });

  it('chain(), describePolicy(), describeRow() and sample(), fed hostile arguments', () => {
    const real = fc.constantFrom<unknown>(
      constant({ delayMs: 0, maxAttempts: 2 }),
      exponential({ maxAttempts: 3 }),
      presets.default,
      presets.grpcConnect,
      presets.sip,
    );
    fc.assert(
      fc.property(
        fc.oneof(real, hostile),
        fc.oneof(real, hostile),
        hostile,
        hostileOptions(['count', 'random']),
        (a, b, n, opts) => {
          const c = outcome(
            () => chain(a as Backoff, b as Backoff),
            ['first', 'second', 'maxAttempts', 'maxElapsedMs'],
          );
          if (c) expectSaneDelays(c, 1);
          const policy = c ?? presets.default;
          const rows = outcome(() => describePolicy(policy, n as number), ['count']);
          if (rows)
            expect(rows.rows.length).toBeLessThanOrEqual(
              Math.min(typeof n === 'number' ? n : 0, policy.maxAttempts - 1),
            );
          outcome(() => describeRow(policy, n as number), ['attempt']);
          const drawn = outcome(() => sample(policy, opts as never), ['count', 'random']);
          for (const d of drawn ?? []) expect(Number.isFinite(d) && d >= 0).toBe(true);
        },
      ),
      { numRuns: 600 },
    );
  });

  it('withRetry(): hostile options are refused at construction, or a request settles on the virtual clock', async () => {
    const keys = [
      'backoff',
      'maxRetryAfterMs',
      'random',
      'unref',
      'isFailure',
      'methods',
      'onRetry',
      'use',
      'serverHintMs',
      'budget',
    ];
    await fc.assert(
      fc.asyncProperty(
        hostileOptions(keys),
        fc.oneof(hostile, fc.constantFrom('1', '86400', '9'.repeat(400))),
        async (options, retryAfter) => {
          const clock = virtualClock(1_000);
          let calls = 0;
          const fetchImpl = async (_input: string) => {
            calls++;
            return new Response('busy', { status: 503, headers: { 'retry-after': String(retryAfter) } });
          };
          const given = typeof options === 'object' && options !== null ? Object.keys(options) : [];
          const f = outcome(() => withRetry(fetchImpl, { ...(options as object), clock } as never), given);
          if (!f) return;
          const done = f('http://127.0.0.1/x').then(
            (r) => r.status,
            (e: unknown) => e,
          );
          await clock.runAll(50);
          const result = await Promise.race([done, new Promise((r) => setImmediate(() => r('pending')))]);
          // Settled: the last 503, or an error (a hostile random/hook is the caller's own).
          expect(result).not.toBe('pending');
          expect(calls).toBeGreaterThanOrEqual(1);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('shed() and shedFetch(): hostile options are refused, naming them; a shed answer carries delay-seconds', async () => {
    const before = { ...seen };
    fc.assert(
      fc.property(hostileOptions(['maxConcurrent', 'maxQueue', 'retryAfterMs']), (options) => {
        const given = typeof options === 'object' && options !== null ? Object.keys(options) : [];
        const names = [...given, 'maxConcurrent'];
        const listener = outcome(() => shed(() => {}, options as never), names);
        const handler = outcome(() => shedFetch(() => new Response('ok'), options as never), names);
        expect(listener === undefined).toBe(handler === undefined);
      }),
      { numRuns: 1_000 },
    );
    expectBoth(before);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(plausible, hostile, fc.double({ min: 0, max: 1e25, noNaN: true })),
        async (retryAfterMs) => {
          const f = outcome(
            () => shedFetch(() => new Promise<Response>(() => {}), { maxConcurrent: 1, retryAfterMs } as never),
            ['retryAfterMs'],
          );
          if (!f) return;
          void f(new Request('http://127.0.0.1/held'));
          const header = (await f(new Request('http://127.0.0.1/shed'))).headers.get('retry-after');
          expect(header).toMatch(/^\d+$/);
          expect(parseRetryAfter(header)).toBeGreaterThanOrEqual((retryAfterMs ?? 1000) as number);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('the simulators: hostile options are refused, naming them, or the run ends with finite figures', async () => {
    // Valid sizes are kept small so that every run ends quickly; their validation is what is fuzzed.
    const small = (v: unknown, max: number) => (typeof v === 'number' && Number.isSafeInteger(v) && v > max ? max : v);
    const finite = (value: unknown): void => {
      JSON.stringify(value, (_k, v) => {
        if (typeof v === 'number') expect(Number.isFinite(v) && !Object.is(v, -0) ? true : v).toBe(true);
        return v;
      });
    };
    fc.assert(
      fc.property(
        hostileOptions(['stations', 'slots', 'frameSlots', 'thinkSlots', 'ceiling', 'maxAttempts', 'seed']),
        (o) => {
          const options = typeof o === 'object' && o !== null && !Array.isArray(o) ? { ...o } : o;
          if (typeof options === 'object' && options !== null) {
            const r = options as Record<string, unknown>;
            r.stations = small(r.stations, 8);
            r.slots = small(r.slots ?? 2_000, 2_000);
            r.frameSlots = small(r.frameSlots, 4);
            r.thinkSlots = small(r.thinkSlots, 50);
          }
          const given = typeof options === 'object' && options !== null ? Object.keys(options) : [];
          const result = outcome(() => simulateEthernet(options as never), given);
          if (result) finite(result);
        },
      ),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(hostileOptions(['stations', 'slots', 'cwMin', 'stages', 'retryLimit', 'seed']), (o) => {
        const options = typeof o === 'object' && o !== null && !Array.isArray(o) ? { ...o } : o;
        if (typeof options === 'object' && options !== null) {
          const r = options as Record<string, unknown>;
          r.stations = small(r.stations, 8);
          r.slots = small(r.slots ?? 2_000, 2_000);
          r.cwMin = small(r.cwMin, 1023);
          r.stages = small(r.stages, 10);
        }
        const given = typeof options === 'object' && options !== null ? Object.keys(options) : [];
        const result = outcome(() => simulateWifi(options as never), given);
        if (result) finite(result);
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(
        fc.oneof(hostile, fc.constant(presets.default)),
        hostileOptions(['runs', 'rows', 'seed']),
        (backoff, o) => {
          const options = typeof o === 'object' && o !== null && !Array.isArray(o) ? { ...o } : o;
          if (typeof options === 'object' && options !== null) {
            const r = options as Record<string, unknown>;
            r.runs = small(r.runs ?? 100, 100);
            r.rows = small(r.rows, 12);
          }
          const given = typeof options === 'object' && options !== null ? Object.keys(options) : [];
          const rows = outcome(() => delayDistribution(backoff as Backoff, options as never), [...given, 'backoff']);
          if (rows) finite(rows);
        },
      ),
      { numRuns: 300 },
    );
    const keys = [
      'clients',
      'startWindowMs',
      'capacityPerSecond',
      'queueLimit',
      'outageMs',
      'retryAfterMs',
      'binMs',
      'horizonMs',
      'seed',
      'attemptTimeoutMs',
      'backoff',
    ];
    await fc.assert(
      fc.asyncProperty(hostileOptions(keys), async (o) => {
        const options = typeof o === 'object' && o !== null && !Array.isArray(o) ? { ...o } : o;
        if (typeof options === 'object' && options !== null) {
          const r = options as Record<string, unknown>;
          r.clients = small(r.clients ?? 20, 20);
          r.horizonMs = typeof r.horizonMs === 'number' && r.horizonMs > 60_000 ? 60_000 : (r.horizonMs ?? 60_000);
          r.binMs = typeof r.binMs === 'number' && r.binMs > 0 && r.binMs < 100 ? 100 : r.binMs;
        }
        const given = typeof options === 'object' && options !== null ? Object.keys(options) : [];
        let result: unknown;
        try {
          result = await simulateOverload(options as never);
        } catch (error) {
          outcome(() => {
            throw error;
          }, given);
          return;
        }
        finite(result);
      }),
      { numRuns: 150 },
    );
  }, 120_000);
});
