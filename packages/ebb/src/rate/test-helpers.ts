// Shared by the rate tests: an overloaded service simulated on a virtual clock, and a fleet of
// clients retrying against it through a shared controller. Not part of the package.
import fc from 'fast-check';
import { exponential } from '../backoff/exponential.js';
import { fullJitter } from '../backoff/jitter-full.js';
import type { Clock } from '../core/clock.js';
import { seeded } from '../core/random.js';
import { type VirtualClock, virtualClock } from '../core/virtual-clock.js';
import type { Mechanism } from '../retry/mechanism.js';
import { pipeline } from '../retry/pipeline.js';
import { retrying } from '../retry/retrying.js';
import { type AdaptiveRateOptions, adaptiveRate } from './adaptive-rate.js';
import type { AdaptiveRateController } from './controller.js';
import { initialState, type LawParams, type LawState, type Measurement } from './law.js';

/** A server-side token bucket: `capacity(t)` requests per second, bursts of up to `burst`. */
export function limiter(clock: VirtualClock, capacity: (nowMs: number) => number, burst: number) {
  let tokens = burst;
  let last = clock.now();
  const served: number[] = [];
  const rejected: number[] = [];
  return {
    served,
    rejected,
    /** One request arrives now: true if served, false if it gets a 429. */
    take(): boolean {
      const now = clock.now();
      tokens = Math.min(burst, tokens + ((now - last) / 1000) * capacity(now));
      last = now;
      const s = Math.floor(now / 1000);
      served[s] ??= 0;
      rejected[s] ??= 0;
      if (tokens >= 1) {
        tokens -= 1;
        served[s]++;
        return true;
      }
      rejected[s]++;
      return false;
    },
  };
}

export interface FleetOptions {
  readonly clock: VirtualClock;
  readonly rate: Mechanism | ((client: number) => Mechanism);
  readonly clients: number;
  readonly seconds: number;
  /** Serves one request at the current virtual time; false means throttled. */
  readonly serve: (client: number) => boolean;
  /** Virtual time each request spends in flight. Default 0. */
  readonly latencyMs?: number;
  /** Called every `sampleMs` (default 100) of virtual time. */
  readonly onSample?: (nowMs: number) => void;
  readonly sampleMs?: number;
}

/**
 * Runs `clients` loops that each call `retry()` back to back (up to 4 attempts, 50 ms × 2 full
 * jitter, seeded) against `serve` until `seconds` of virtual time have passed; a throttle is an
 * error with `throttled: true`. Returns the virtual times at which each client's requests
 * waited for and got their turn.
 */
export async function runFleet(o: FleetOptions): Promise<{ waits: number[][] }> {
  const { clock } = o;
  const end = o.seconds * 1000;
  const backoff = exponential({ initialDelayMs: 50, maxDelayMs: 2000, jitter: fullJitter, maxAttempts: 4 });
  const random = seeded(7);
  const waits: number[][] = Array.from({ length: o.clients }, () => []);
  const client = async (n: number) => {
    const rate = typeof o.rate === 'function' ? o.rate(n) : o.rate;
    const call = pipeline([retrying({ clock, backoff, random }), rate]);
    while (clock.now() < end) {
      const asked = clock.now();
      let first = true;
      await call
        .execute(async () => {
          if (first) {
            waits[n]?.push(clock.now() - asked);
            first = false;
          }
          if (o.latencyMs) await clock.sleep(o.latencyMs);
          if (!o.serve(n)) throw Object.assign(new Error('429 Too Many Requests'), { throttled: true });
        })
        .catch(() => {});
    }
  };
  const running = Array.from({ length: o.clients }, (_, n) => client(n));
  const step = o.sampleMs ?? 100;
  for (let t = 0; t < end; t += step) {
    await clock.advance(step);
    o.onSample?.(clock.now());
  }
  await clock.runAll();
  await Promise.all(running);
  return { waits };
}

/** Sum of a slice of per-second counts. */
export const total = (counts: number[], from: number, to: number): number => {
  let sum = 0;
  for (let s = from; s < to; s++) sum += counts[s] ?? 0;
  return sum;
};

/**
 * An adaptiveRate on a fresh virtual clock at 0. Its `random` returns 0 (unless given): no spread
 * of the rises (law.ts, [spread]), so that tests can specify the law's timing to the millisecond.
 */
export const make = (options: AdaptiveRateOptions = {}) => {
  const clock = virtualClock();
  return { clock, rate: adaptiveRate({ clock, random: () => 0, ...options }) };
};

/** Asks for `n` turns at once; resolves with the virtual time of each grant, in call order. */
export async function turns(rate: AdaptiveRateController, clock: VirtualClock, n: number): Promise<number[]> {
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

/** Grant times of `n` requests queued at once, every sleep ending late by the next of `lateness`. */
export async function lateGrants(
  options: AdaptiveRateOptions,
  lateness: readonly number[],
  n: number,
): Promise<number[]> {
  const base = virtualClock();
  let k = 0;
  const late: Clock = {
    now: () => base.now(),
    sleep: (ms, signal) => base.sleep(ms + (lateness[k++ % lateness.length] as number), signal),
  };
  const rate = adaptiveRate({ clock: late, random: () => 0, ...options });
  const times: number[] = [];
  const all = Array.from({ length: n }, () =>
    Promise.resolve(rate.acquire()).then(() => {
      times.push(base.now());
    }),
  );
  await base.runAll();
  await Promise.all(all);
  return times;
}
/** A 429 as `ebb/http` reports it: `retryAfterMs` and the response itself. */
export const throttle = (retryAfterMs: number | undefined, headers: Record<string, string> = {}) => ({
  throttled: true,
  status: 429,
  retryAfterMs,
  response: new Response(null, { status: 429, headers }),
});
/** A 200 with `headers`. */
export const ok = (headers: Record<string, string>) => new Response('ok', { status: 200, headers });

/**
 * The law's eight options at adaptiveRate's defaults (docs/rate-control.md, "Options"), written out
 * for the law's own tests, which call its pure steps without a controller.
 */
export const LAW_OPTIONS = {
  decreaseFactor: 0.5,
  increase: 0.1,
  coolOffMs: 1000,
  maxCoolOffMs: 8000,
  margin: 0.05,
  minRatePerSecond: 1,
  maxRatePerSecond: Infinity,
};

/**
 * Any state of the rate law and a throttle against it, as fast-check draws them: `s` with every
 * field a throttle reads drawn (times, what is owed, the gate, the last throttled rate), `now` up
 * to 5 s after its latest event, and `m` a measurement with or without a delivered rate. For the
 * properties of one rule of `fall()` (rate/law.ts), compared with and without the rule.
 */
export function lawThrottleCase(params: LawParams): fc.Arbitrary<{ s: LawState; now: number; m: Measurement }> {
  return fc
    .tuple(
      fc.record({
        rate: fc.double({ min: 1, max: 500, noNaN: true }),
        rose: fc.boolean(),
        changedAt: fc.integer({ min: 0, max: 10_000 }),
        eventAt: fc.oneof(fc.constant(-Infinity), fc.integer({ min: 0, max: 10_000 })),
        notedAt: fc.oneof(fc.constant(-Infinity), fc.integer({ min: 0, max: 10_000 })),
        paidAt: fc.oneof(fc.constant(-Infinity), fc.integer({ min: 0, max: 30_000 })),
        costUntil: fc.oneof(fc.constant(-Infinity), fc.integer({ min: 0, max: 12_000 })),
        gateRate: fc.oneof(fc.constant(Infinity), fc.double({ min: 1, max: 500, noNaN: true })),
        throttledAt: fc.oneof(fc.constant(Infinity), fc.double({ min: 1, max: 500, noNaN: true })),
        informed: fc.boolean(),
        eventLong: fc.boolean(),
      }),
      fc.integer({ min: 0, max: 5000 }),
      fc.oneof(fc.constant(-1), fc.double({ min: 0, max: 600, noNaN: true })),
      fc.integer({ min: 0, max: 40 }),
    )
    .map(([fields, dt, delivered, count]) => ({
      s: { ...initialState(params, fields.rate, 0), ...fields, before: fields.rate },
      now: Math.max(fields.changedAt, fields.eventAt, fields.notedAt) + dt,
      m: { sent: fields.rate, delivered, count, spanMs: 1000, refused: false },
    }));
}
