// The rate law, step by step, in its two languages: rate/law.ts (TypeScript) and RATE_LAW in
// redis/scripts.ts (Lua, run by a real redis-server). Both start from the same state and are fed
// the same generated events — a success, a request kept waiting, a throttle with what the meter
// measured, a tick — at the same times, with the same generated law options; after every event
// every field of the state (LAW_FIELDS) must be equal, to the last bit. A rule, a branch or a
// constant changed on one side only shows here on the first event that reaches it.
//
// The Lua runs inside a small harness script (below): the law's functions exactly as the fleet's
// RATE_SCRIPT holds them, called in the order adaptiveRate and RATE_SCRIPT call them, one EVALSHA
// per generated trace. Infinity is passed and returned as the script's BIG (1e300), booleans as 1/0.
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  initialState,
  type LawParams,
  type LawState,
  lawParams,
  rise,
  succeeded,
  throttled,
  waited,
} from '../../packages/ebb/src/rate/law.js';
import { LAW_OPTIONS } from '../../packages/ebb/src/rate/test-helpers.js';
import { LAW_FIELDS, RATE_LAW } from '../../packages/ebb/src/redis/scripts.js';
import { haveRedis, type RedisServer, startRedis } from './support/redis-server.js';

const enabled = haveRedis();
const BIG = 1e300;
const KEYS = Object.keys(LAW_FIELDS) as (keyof LawState)[];
const NAMES = KEYS.map((k) => LAW_FIELDS[k]);

/** The law's functions, fed the state and the events in ARGV; returns the state after each event. */
const HARNESS = `local now, span, rf = 0, 1000, 0
local m, dec, inc, maxStep = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local base, maxCo, lo, hi = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local FIELDS = { ${NAMES.map((n) => `'${n}'`).join(', ')} }
local s = {}
for i, f in ipairs(FIELDS) do s[f] = tonumber(ARGV[8 + i]) end
${RATE_LAW}
local out = {}
local k = 9 + #FIELDS
while k + 6 <= #ARGV do
  local kind = ARGV[k]
  now = tonumber(ARGV[k + 1])
  local sent, delivered, count = tonumber(ARGV[k + 2]), tonumber(ARGV[k + 3]), tonumber(ARGV[k + 4])
  span, rf = tonumber(ARGV[k + 5]), tonumber(ARGV[k + 6])
  if kind == 'success' then succeeded(); rise(0, 0)
  elseif kind == 'wait' then rise(0, 0); waited()
  elseif kind == 'throttle' then throttled(sent, 0, delivered, count)
  else rise(0, 0) end
  for _, f in ipairs(FIELDS) do out[#out + 1] = string.format('%.17g', s[f]) end
  k = k + 7
end
return out`;

type Kind = 'success' | 'wait' | 'throttle' | 'tick';

interface Event {
  kind: Kind;
  dtMs: number;
  /** The meter's readings, as multiples of the rate at the time (so that they stay near it). */
  sentFactor: number;
  /** Negative: the delivered rate is not measured. */
  deliveredFactor: number;
  count: number;
  spanMs: number;
  refused: boolean;
}

interface Options {
  decreaseFactor: number;
  increase: number;
  coolOffMs: number;
  maxCoolOffMs: number;
  margin: number;
  minRatePerSecond: number;
  maxRatePerSecond: number;
  initialRatePerSecond: number;
}

const toLua = (x: number | boolean): string => {
  if (typeof x === 'boolean') return x ? '1' : '0';
  if (x === Infinity) return String(BIG);
  if (x === -Infinity) return String(-BIG);
  return String(x);
};
const fromLua = (x: string): number => {
  const v = Number(x);
  return v >= BIG ? Infinity : v <= -BIG ? -Infinity : v;
};
const asNumber = (x: number | boolean): number => (typeof x === 'boolean' ? (x ? 1 : 0) : x);

/** One event through the TypeScript law, in the order adaptiveRate applies it. */
function step(s: LawState, p: LawParams, now: number, e: Event, sent: number, delivered: number): LawState {
  switch (e.kind) {
    case 'success':
      return rise(succeeded(s, now), p, now);
    case 'wait':
      return waited(rise(s, p, now), now);
    case 'throttle':
      return throttled(s, p, now, { sent, delivered, count: e.count, spanMs: e.spanMs, refused: e.refused });
    default:
      return rise(s, p, now);
  }
}

const options: fc.Arbitrary<Options> = fc
  .record({
    decreaseFactor: fc.double({ min: 0.2, max: 0.9, noNaN: true }),
    increaseShare: fc.double({ min: 0.02, max: 0.95, noNaN: true }),
    coolOffMs: fc.integer({ min: 50, max: 3000 }),
    coolOffTimes: fc.oneof(fc.constantFrom(1, 2, 8, 16), fc.double({ min: 1, max: 40, noNaN: true })),
    margin: fc.oneof(fc.constant(0.05), fc.double({ min: 0, max: 0.45, noNaN: true })),
    minRatePerSecond: fc.oneof(fc.constant(1), fc.double({ min: 0.1, max: 20, noNaN: true })),
    maxTimes: fc.option(fc.double({ min: 1, max: 1000, noNaN: true }), { nil: undefined, freq: 2 }),
    initialShare: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined, freq: 2 }),
  })
  .map((o) => {
    const max = o.maxTimes === undefined ? Infinity : o.minRatePerSecond * o.maxTimes;
    const top = max === Infinity ? o.minRatePerSecond * 500 : max;
    return {
      decreaseFactor: o.decreaseFactor,
      // A rise smaller than a fall: (1 + increase) · decreaseFactor < 1, as adaptiveRate requires.
      increase: o.increaseShare * (1 / o.decreaseFactor - 1),
      coolOffMs: o.coolOffMs,
      maxCoolOffMs: o.coolOffMs * o.coolOffTimes,
      margin: o.margin,
      minRatePerSecond: o.minRatePerSecond,
      maxRatePerSecond: max,
      initialRatePerSecond:
        o.initialShare === undefined ? max : o.minRatePerSecond + o.initialShare * (top - o.minRatePerSecond),
    };
  });

const event: fc.Arbitrary<Event> = fc.record({
  kind: fc.constantFrom<Kind>('success', 'success', 'success', 'wait', 'wait', 'throttle', 'throttle', 'tick'),
  dtMs: fc.oneof(
    fc.integer({ min: 0, max: 60 }),
    fc.integer({ min: 0, max: 2500 }),
    fc.integer({ min: 0, max: 12000 }),
  ),
  sentFactor: fc.double({ min: 0, max: 3, noNaN: true }),
  deliveredFactor: fc.oneof(fc.constant(-1), fc.constant(1), fc.double({ min: 0, max: 1.5, noNaN: true })),
  count: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 60 })),
  spanMs: fc.oneof(fc.constant(1000), fc.integer({ min: 100, max: 3000 })),
  refused: fc.boolean(),
});

describe.skipIf(!enabled)('the rate law step by step: TypeScript (rate/law.ts) and Lua (RATE_LAW) agree', () => {
  let server: RedisServer;
  let c: Redis;
  let sha: string;
  let steps = 0;
  /** What the generated throttles and rises did on the TypeScript side: each kind must occur. */
  const seen = new Map<string, number>();
  const tally = (prev: LawState, next: LawState, p: LawParams, kind: Kind, now: number) => {
    let what: string | undefined;
    if (kind === 'throttle' && next.epoch > prev.epoch) {
      if (prev.rate === Infinity) what = 'first cut';
      else if (next.notedAt === now && next.rate === prev.rate) what = 'note';
      else if (next.throttledProbe || next.gateRate !== prev.gateRate) what = 'relapse';
      else if (next.throttledAt !== prev.rate) what = 'blind cut corrected';
      else what = 'cut';
    } else if (next.rate > prev.rate) what = next.step > p.increase ? 'doubled rise' : 'base rise';
    if (what) seen.set(what, (seen.get(what) ?? 0) + 1);
    // A throttle within a failed probe's event adds to what it costs.
    if (what === 'note' && next.paidAt > prev.paidAt) seen.set('charge', (seen.get('charge') ?? 0) + 1);
  };

  beforeAll(async () => {
    server = await startRedis();
    c = new Redis(server.url, { maxRetriesPerRequest: 0 });
    sha = (await c.script('LOAD', HARNESS)) as string;
  });
  afterAll(async () => {
    c?.disconnect();
    await server?.stop();
  });

  /** Runs one trace through both laws; returns the first step where a field differs, if any. */
  async function compare(o: Options, events: Event[]): Promise<string | undefined> {
    const p = lawParams(o);
    // The fleet's parameters: its one controller neither spreads its rises nor charges throttles
    // at a rate that held, nor gives a step back for them (rate/law.ts, [spread], [charge.collision]
    // and [collision.yield]; RATE_LAW has none of them).
    expect([p.spreadMs, p.collisionCharge, p.collisionYield]).toEqual([0, 0, 0]);
    let s = initialState(p, o.initialRatePerSecond, 1_000_000);
    const args: string[] = [
      String(o.margin),
      String(o.decreaseFactor),
      String(o.increase),
      String(p.maxStep),
      String(o.coolOffMs),
      String(o.maxCoolOffMs),
      String(o.minRatePerSecond),
      toLua(o.maxRatePerSecond),
      ...KEYS.map((k) => toLua(s[k])),
    ];
    const expected: LawState[] = [];
    let now = 1_000_000;
    for (const e of events) {
      now += e.dtMs;
      const base = s.rate === Infinity ? 50 : s.rate;
      const sent = e.sentFactor * base;
      const delivered = e.deliveredFactor < 0 ? -1 : e.deliveredFactor * base;
      const prev = s;
      s = step(s, p, now, e, sent, delivered);
      tally(prev, s, p, e.kind, now);
      expected.push(s);
      args.push(
        e.kind,
        String(now),
        String(sent),
        String(delivered),
        String(e.count),
        String(e.spanMs),
        toLua(e.refused),
      );
    }
    const out = (await c.evalsha(sha, 0, ...args)) as string[];
    expect(out.length).toBe(events.length * KEYS.length);
    for (let i = 0; i < events.length; i++) {
      steps++;
      const want = expected[i] as LawState;
      for (let j = 0; j < KEYS.length; j++) {
        const key = KEYS[j] as keyof LawState;
        const got = fromLua(out[i * KEYS.length + j] as string);
        if (!Object.is(got, asNumber(want[key]))) {
          return `step ${i} (${events[i]?.kind}): ${key} (${LAW_FIELDS[key]}) is ${got} in Lua, ${asNumber(want[key])} in TypeScript`;
        }
      }
    }
    return undefined;
  }

  it('every field equal after every event, for generated law options and traces (tens of thousands of steps)', async () => {
    await fc.assert(
      fc.asyncProperty(options, fc.array(event, { minLength: 50, maxLength: 400 }), async (o, events) => {
        expect(await compare(o, events)).toBeUndefined();
      }),
      { numRuns: 300 },
    );
    // The traces are long and reach the law's branches: not a run of no-ops.
    expect(steps).toBeGreaterThan(20_000);
    for (const what of [
      'first cut',
      'note',
      'relapse',
      'blind cut corrected',
      'cut',
      'doubled rise',
      'base rise',
      'charge',
    ]) {
      expect(seen.get(what) ?? 0, what).toBeGreaterThan(5);
    }
  });

  it('the defaults, a trace that relapses, is charged and released, and probes convexly past a limit that rose', async () => {
    const o: Options = { ...LAW_OPTIONS, initialRatePerSecond: 20 };
    const ev = (kind: Kind, dtMs: number, deliveredFactor = 1): Event => ({
      kind,
      dtMs,
      sentFactor: 1,
      deliveredFactor,
      count: 20,
      spanMs: 1000,
      refused: false,
    });
    // Waits and successes each cool-off raise the rate; a throttle right after a rise relapses; a
    // long quiet climb passes the rate last throttled into the convex region.
    const trace: Event[] = [];
    for (let i = 0; i < 6; i++) trace.push(ev('wait', 10), ev('success', 1100));
    trace.push(ev('throttle', 50, 0.9));
    for (let i = 0; i < 40; i++) trace.push(ev('wait', 10), ev('success', 600));
    expect(await compare(o, trace)).toBeUndefined();
    // The trace does move the law: the TypeScript side rose, relapsed and rose again.
    const p = lawParams(o);
    let s = initialState(p, 20, 1_000_000);
    let now = 1_000_000;
    const rates = new Set<number>();
    let relapsed = false;
    for (const e of trace) {
      now += e.dtMs;
      s = step(s, p, now, e, s.rate, s.rate * e.deliveredFactor);
      rates.add(s.rate);
      relapsed ||= s.throttledProbe;
    }
    expect(rates.size).toBeGreaterThan(10);
    expect(relapsed).toBe(true);
  });

  it('a throttle that comes as a rise falls due, while a failed probe is still charged: the rise first, so the throttle relapses it', async () => {
    // The defaults from 40 r/s: a rise to 44 and a throttle relapse it to 40, charged until 1.25 s
    // later (50 requests at 40 r/s) within an event of 2 s. The next rise (to 40.5, under the gate
    // of 41.8) falls due at 1.25 s; the throttle comes at 1.5 s with no event between. Applied
    // first, the rise is judged by the throttle: a second relapse, to 0.95 × the 40 r/s delivered.
    // Charged first, the throttle would put the payment at 2.5 s, the rise off, and only be noted.
    const o: Options = { ...LAW_OPTIONS, initialRatePerSecond: 40 };
    const ev = (kind: Kind, dtMs: number): Event => ({
      kind,
      dtMs,
      sentFactor: 1,
      deliveredFactor: 1,
      count: 20,
      spanMs: 1000,
      refused: false,
    });
    const trace = [ev('wait', 10), ev('success', 1100), ev('throttle', 50)];
    trace.push(ev('wait', 100), ev('success', 100), ev('throttle', 1300));
    expect(await compare(o, trace)).toBeUndefined();
    const p = lawParams(o);
    let s = initialState(p, 40, 1_000_000);
    let now = 1_000_000;
    const rates: number[] = [];
    for (const e of trace) {
      now += e.dtMs;
      s = step(s, p, now, e, s.rate, s.rate * e.deliveredFactor);
      rates.push(s.rate);
    }
    expect(rates).toEqual([40, 44, 40, 40, 40, 0.95 * 40]);
    expect(s.relapses).toBe(2);
  });
});
