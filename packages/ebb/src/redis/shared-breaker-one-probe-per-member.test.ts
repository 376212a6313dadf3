// sharedCircuitBreaker half-open, one member with several callers at once: the fleet's probe lease
// lets one call through, once. A probe that has ended (its result on its way to Redis, or the lease
// handed back) admits no second call under the same lease while the member still reads the lease
// as its own from an older reply. Virtual time, against the model of Redis (breaker-model.ts)
// behind a connection per member whose replies come a few milliseconds later, in order.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type VirtualClock, virtualClock } from '../core/virtual-clock.js';
import { isBrokenCircuitError } from '../resilience/errors.js';
import { pipeline } from '../retry/pipeline.js';
import { breakerModel } from './breaker-model.js';
import { OPEN, settle } from './breaker-test-helpers.js';
import type { RedisScripts } from './client.js';
import { type SharedCircuitBreaker, sharedCircuitBreaker } from './shared-breaker.js';

/**
 * One member's connection to the model: the server runs each command when it is sent, and its
 * reply reaches the member `latency()` ms later, never before the reply of a command sent earlier.
 */
function connection(model: RedisScripts, clock: VirtualClock, latency: () => number): RedisScripts {
  let lastReplyAt = Number.NEGATIVE_INFINITY;
  const scripts: RedisScripts = {
    async evalSha(sha, keys, args) {
      const reply = model.evalSha(sha, keys, args);
      const at = Math.max(lastReplyAt, clock.now() + latency());
      lastReplyAt = at;
      await clock.sleep(at - clock.now());
      return reply;
    },
    eval: (_source, keys, args) => scripts.evalSha('', keys, args),
  };
  return scripts;
}

/** A service that is down: each call arrives (noted with its member and time), waits `ms`, and fails. */
function darkService(clock: VirtualClock) {
  const arrivals: { member: number; t: number }[] = [];
  return {
    arrivals,
    async call(member: number, ms: number): Promise<never> {
      arrivals.push({ member, t: clock.now() });
      if (ms > 0) await clock.sleep(ms);
      throw new Error('ECONNRESET');
    },
  };
}

/** One call through the member: 'failed' (it reached the service) or 'refused' (a BrokenCircuitError). */
async function call(b: SharedCircuitBreaker, reach: () => Promise<never>): Promise<'failed' | 'refused'> {
  try {
    await pipeline([b]).execute(reach);
    throw new Error('the dark service answered');
  } catch (e) {
    return isBrokenCircuitError(e) ? 'refused' : 'failed';
  }
}

/**
 * Two members whose calls all fail, until the fleet is open and both have heard it; then the
 * open period (1 s) passes: the fleet is half-open by both members' clocks, no lease taken.
 */
async function halfOpenFleet(latency: () => number) {
  const clock = virtualClock(1_000_000);
  const model = breakerModel(clock);
  const members = [0, 1].map(() =>
    sharedCircuitBreaker({
      client: connection(model, clock, latency),
      name: 'svc',
      clock,
      minCalls: 10,
      windowMs: 2000,
      reportMs: 100,
      probeTimeoutMs: 1500,
      openBackoff: OPEN,
    }),
  ) as [SharedCircuitBreaker, SharedCircuitBreaker];
  const fail = () => Promise.reject(new Error('ECONNRESET'));
  for (let t = 0; members.some((m) => m.stats.refusedByFleet === 0); t += 20) {
    expect(t).toBeLessThan(5000);
    await Promise.all(members.map((m) => call(m, fail)));
    await clock.advance(20);
    await settle();
  }
  await clock.advance(1100);
  await settle();
  expect(members.map((m) => m.stateOf())).toEqual(['half-open', 'half-open']);
  return { clock, model, members };
}

describe('sharedCircuitBreaker half-open: one call per probe lease, however many callers a member has', () => {
  it('a probe that failed at once: a second caller of the same member, before Redis answers the result, is refused', async () => {
    const { clock, members } = await halfOpenFleet(() => 2);
    const [a] = members;
    const service = darkService(clock);
    // The first caller claims the lease (reply in 2 ms), probes, and fails at once: the result
    // goes to Redis, its reply due 2 ms later.
    const first = call(a, () => service.call(0, 0));
    await clock.advance(2);
    await settle();
    expect(service.arrivals).toHaveLength(1);
    // 1 ms later, before that reply, another caller of the same member.
    await clock.advance(1);
    const second = call(a, () => service.call(0, 0));
    await clock.advance(10);
    await settle();
    expect(await first).toBe('failed');
    expect(await second).toBe('refused');
    expect(service.arrivals).toHaveLength(1);
    // The fleet reopened on the failed probe.
    expect(a.stateOf()).toBe('open');
  });

  it('a probe handed back unused: a caller before Redis takes the lease back claims a new one, not the old', async () => {
    const { clock, members } = await halfOpenFleet(() => 2);
    const [a] = members;
    const ticket = a.acquire();
    await clock.advance(2);
    await settle();
    const t1 = await ticket;
    a.release(t1);
    // Before the hand-back's reply: a new caller waits for its own claim, which Redis grants once
    // the old lease is back.
    const again = Promise.resolve(a.acquire());
    await clock.advance(10);
    await settle();
    const t2 = await again;
    // Its lease is a new one: its result is applied (the fleet closes on one success).
    a.record('success', t2);
    await clock.advance(10);
    await settle();
    expect(a.stateOf()).toBe('closed');
  });

  it('property: for any number of callers per member, service delays and Redis reply delays, one call reaches the service per half-open period', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 5 })),
        fc.array(fc.integer({ min: 0, max: 30 }), { minLength: 10, maxLength: 10 }),
        fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 16 }),
        fc.array(fc.integer({ min: 0, max: 8 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 60 }),
        async ([callersA, callersB], starts, latencies, serviceMs, refusedPauseMs) => {
          let n = 0;
          const latency = () => latencies[n++ % latencies.length] as number;
          const { clock, members } = await halfOpenFleet(latency);
          const service = darkService(clock);
          let s = 0;
          const end = clock.now() + 400;
          const loop = async (member: number, startMs: number) => {
            await clock.sleep(startMs);
            while (clock.now() < end) {
              const ms = serviceMs[s++ % serviceMs.length] as number;
              const r = await call(members[member] as SharedCircuitBreaker, () => service.call(member, ms));
              await clock.sleep(r === 'refused' ? refusedPauseMs : 1);
            }
          };
          const loops = [
            ...Array.from({ length: callersA }, (_, i) => loop(0, starts[i] as number)),
            ...Array.from({ length: callersB }, (_, i) => loop(1, starts[5 + i] as number)),
          ];
          while (clock.now() < end + 200) await clock.advance(1);
          await Promise.all(loops);
          // The probe fails and the next open period is 2 s: in these 400 ms one call reaches the
          // service for the whole fleet, so never two of one member at once.
          expect(service.arrivals).toHaveLength(1);
          for (const m of members) await m.close();
        },
      ),
      { numRuns: 40 },
    );
  }, 60_000);
});
