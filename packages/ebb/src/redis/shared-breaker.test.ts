// sharedCircuitBreaker's members in virtual time against a model of Redis running the fleet rule
// (breaker-model.ts; the Lua itself is held equal to it on a real redis-server by
// test/redis/fleet-breaker-law.test.ts): opening on evidence from several members, one fleet
// probe, a partitioned member stopping alone, and a store that fails, hangs, forgets or lies.
import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import { isBrokenCircuitError } from '../resilience/errors.js';
import { pipeline } from '../retry/pipeline.js';
import { breakerModel } from './breaker-model.js';
import { OPEN, settle } from './breaker-test-helpers.js';
import type { RedisScripts } from './client.js';
import type { SharedEvent } from './protocol.js';
import { type SharedCircuitBreaker, type SharedCircuitBreakerOptions, sharedCircuitBreaker } from './shared-breaker.js';

function fleet(
  n: number,
  client: unknown,
  clock: ReturnType<typeof virtualClock>,
  more: Partial<SharedCircuitBreakerOptions> = {},
) {
  return Array.from({ length: n }, () =>
    sharedCircuitBreaker({
      client,
      name: 'svc',
      clock,
      minCalls: 10,
      windowMs: 2000,
      reportMs: 100,
      openBackoff: OPEN,
      ...more,
    }),
  );
}

/** One call through the member's guard: 'ok', 'failed' (the service's error) or 'refused' (a BrokenCircuitError). */
async function call(b: SharedCircuitBreaker, serviceUp: boolean, key?: string): Promise<'ok' | 'failed' | 'refused'> {
  const g = key === undefined ? b : b.forKey(key);
  try {
    await pipeline([g]).execute(async () => {
      if (!serviceUp) throw new Error('ECONNREFUSED');
      return 1;
    });
    return 'ok';
  } catch (e) {
    return isBrokenCircuitError(e) ? 'refused' : 'failed';
  }
}

/** Every member calls once per `stepMs` for `ms`; `up(i)` says whether member i reaches the service. */
async function run(
  members: SharedCircuitBreaker[],
  clock: ReturnType<typeof virtualClock>,
  ms: number,
  up: (i: number) => boolean,
  stepMs = 20,
) {
  const tally = members.map(() => ({ ok: 0, failed: 0, refused: 0 }));
  for (let t = 0; t < ms; t += stepMs) {
    const results = await Promise.all(members.map((m, i) => call(m, up(i))));
    results.forEach((r, i) => {
      const x = tally[i] as Record<string, number>;
      x[r] = (x[r] ?? 0) + 1;
    });
    await clock.advance(stepMs);
    await settle();
  }
  return tally;
}

describe('sharedCircuitBreaker: the fleet opens on evidence from several members', () => {
  it('five members in an outage: the fleet opens, then lets at most one probe a period through for all of them', async () => {
    const clock = virtualClock(1_000_000);
    const model = breakerModel(clock);
    const members = fleet(5, model, clock);
    await run(members, clock, 500, () => true);
    // Until the fleet opens: each member's calls until half its window failed, plus a report period.
    let before = 0;
    for (let t = 0; members.some((m) => m.stateOf() === 'closed'); t += 20) {
      expect(t).toBeLessThan(3000);
      before += (await run(members, clock, 20, () => false)).reduce((s, x) => s + x.failed, 0);
    }
    expect(before).toBeLessThanOrEqual(5 * (25 + 5));
    // Open: periods of 1, 2 and 4 s; in the next 6 s one probe per period for the whole fleet.
    const outage = await run(members, clock, 6000, () => false);
    expect(outage.reduce((s, t) => s + t.failed, 0)).toBeLessThanOrEqual(2);
    expect(outage.reduce((s, t) => s + t.refused, 0)).toBeGreaterThan(5 * 290);
    const after = await run(members, clock, 10_000, () => true);
    expect(members.every((m) => m.stateOf() === 'closed')).toBe(true);
    expect(after.reduce((s, t) => s + t.ok, 0)).toBeGreaterThan(0);
  });

  it('one partitioned member (its calls fail, the service is fine): the fleet stays closed, its own local breaker opens', async () => {
    const clock = virtualClock(1_000_000);
    const model = breakerModel(clock);
    // failureRate 0.15: one member of five is enough calls to meet it, so minMembers decides.
    const members = fleet(5, model, clock, { failureRate: 0.15 });
    const tally = await run(members, clock, 4000, (i) => i !== 0);
    expect(members[0]?.stateOf()).not.toBe('closed');
    for (const m of members.slice(1)) expect(m.stateOf()).toBe('closed');
    for (const t of tally.slice(1)) expect(t).toEqual({ ok: 200, failed: 0, refused: 0 });
    // With minMembers 1, memberFailureRate (one member of five is not half) still stops it; with
    // both at their loosest the same partition opens the fleet for everyone: each option counts.
    const clock2 = virtualClock(1_000_000);
    const one = fleet(5, breakerModel(clock2), clock2, { minMembers: 1, failureRate: 0.15 });
    const t2 = await run(one, clock2, 4000, (i) => i !== 0);
    for (const t of t2.slice(1)) expect(t).toEqual({ ok: 200, failed: 0, refused: 0 });
    const clock3 = virtualClock(1_000_000);
    const naive = fleet(5, breakerModel(clock3), clock3, { minMembers: 1, memberFailureRate: 0, failureRate: 0.15 });
    const t3 = await run(naive, clock3, 4000, (i) => i !== 0);
    expect(t3.slice(1).reduce((s, t) => s + t.refused, 0)).toBeGreaterThan(0);
  });

  it('each key is its own breaker: one dead route does not stop another', async () => {
    const clock = virtualClock(1_000_000);
    const members = fleet(3, breakerModel(clock), clock);
    for (let t = 0; t < 3000; t += 20) {
      await Promise.all(members.map((m) => call(m, false, 'dead')));
      const live = await Promise.all(members.map((m) => call(m, true, 'live')));
      expect(live).toEqual(['ok', 'ok', 'ok']);
      await clock.advance(20);
      await settle();
    }
    expect(members.map((m) => m.stateOf('dead'))).not.toContain('closed');
  });
});

describe('sharedCircuitBreaker: Redis failing never fails a call', () => {
  const hostile = (reply: () => unknown): RedisScripts => ({
    evalSha: async (_s, _k, _a) => reply(),
    eval: async (_s, _k, _a) => reply(),
  });

  for (const [what, client] of [
    ['refuses every connection', hostile(() => Promise.reject(new Error('ECONNREFUSED')))],
    ['never answers (the timeout cuts it short)', hostile(() => new Promise(() => {}))],
    ['answers garbage', hostile(() => ['1', 'x'])],
    ['answers a count out of its domain', hostile(() => [...'1,1,5,5,1,0,7,-1,0,0,10,11,2,1'.split(','), '', '', ''])],
  ] as const) {
    it(`a store that ${what}: members follow their local breakers, and a healthy service is called`, async () => {
      const clock = virtualClock(1_000_000);
      const events: SharedEvent[] = [];
      const members = fleet(2, client, clock, { onEvent: (e) => events.push(e) });
      const tally = await run(members, clock, 1000, () => true);
      for (const t of tally) expect(t).toEqual({ ok: 50, failed: 0, refused: 0 });
      expect(members.every((m) => m.mode === 'local')).toBe(true);
      expect(events.some((e) => e.type === 'fallback')).toBe(true);
      // In an outage the local breakers still stop the calls.
      const outage = await run(members, clock, 3000, () => false);
      expect(outage.every((t) => t.refused > 0)).toBe(true);
    });
  }

  it('the store goes down mid-outage and comes back empty: members fall back open, then rejoin and recreate the state', async () => {
    const clock = virtualClock(1_000_000);
    const model = breakerModel(clock);
    const events: SharedEvent[] = [];
    const members = fleet(3, model, clock, { onEvent: (e) => events.push(e) });
    await run(members, clock, 300, () => true);
    await run(members, clock, 1500, () => false);
    expect(members.every((m) => m.stateOf() !== 'closed')).toBe(true);
    model.down = true;
    model.flush();
    await run(members, clock, 300, () => false);
    // Fallen back while the fleet was open: the local breakers are open too (never closed in an outage).
    expect(members.every((m) => m.mode === 'local' && m.stateOf() !== 'closed')).toBe(true);
    model.down = false;
    await run(members, clock, 3000, () => true);
    expect(members.every((m) => m.mode === 'shared')).toBe(true);
    expect(events.filter((e) => e.type === 'resync').length).toBeGreaterThanOrEqual(3);
    expect(members.every((m) => m.stateOf() === 'closed')).toBe(true);
  });

  it('a member that heard the fleet open falls back open, though its own few calls never showed it the outage', async () => {
    const clock = virtualClock(1_000_000);
    const model = breakerModel(clock);
    const [quiet, ...busy] = fleet(4, model, clock) as [SharedCircuitBreaker, ...SharedCircuitBreaker[]];
    let quietReached = 0;
    for (let t = 0; t < 2000; t += 20) {
      await Promise.all(busy.map((m) => call(m, false)));
      // The quiet member calls every 300 ms: never minCalls in its window.
      if (t % 300 === 0 && (await call(quiet, false)) === 'failed') quietReached++;
      await clock.advance(20);
      await settle();
    }
    expect(quiet.stateOf()).not.toBe('closed');
    model.down = true;
    for (let t = 0; t < 600; t += 20) {
      if ((await call(quiet, false)) === 'failed') quietReached++;
      await clock.advance(20);
      await settle();
    }
    expect(quiet.mode).toBe('local');
    // Its calls before the fleet opened (a handful), none after: the local breaker took the fleet's state.
    expect(quietReached).toBeLessThanOrEqual(7);
    expect(quiet.stateOf()).not.toBe('closed');
  });

  it('a closed fleet at steady state costs one command per member per report period', async () => {
    const clock = virtualClock(1_000_000);
    const model = breakerModel(clock);
    const members = fleet(4, model, clock, { reportMs: 1000 });
    await run(members, clock, 10_000, () => true, 10);
    const calls = members.reduce((s, m) => s + m.stats.calls, 0);
    const commands = members.reduce((s, m) => s + m.stats.commands, 0);
    expect(calls).toBe(4000);
    // One report a second per member (and the first one at once): about 0.01 here, against a target of 0.05.
    expect(commands / calls).toBeLessThanOrEqual(0.02);
  });
});

describe('sharedCircuitBreaker: a command the server ran but whose reply was lost is not applied twice', () => {
  /** The model, but the next call's reply is lost after the server applied it (the member times out). */
  function lossy(model: ReturnType<typeof breakerModel>) {
    const state = { loseNext: false };
    const scripts: RedisScripts = {
      evalSha: async (sha, k, a) => {
        const reply = await model.evalSha(sha, k, a);
        if (state.loseNext) {
          state.loseNext = false;
          return new Promise(() => {});
        }
        return reply;
      },
      eval: async (src, k, a) => scripts.evalSha(src, k, a),
    };
    return { scripts, state };
  }

  it('a probe success sent again after its reply was lost counts once: with successesToClose 2 the fleet stays half-open', async () => {
    const clock = virtualClock(1_000_000);
    const model = breakerModel(clock);
    const { scripts, state } = lossy(model);
    const more = { successesToClose: 2, probeTimeoutMs: 60_000 };
    const [a] = fleet(1, scripts, clock, more) as [SharedCircuitBreaker];
    const [b] = fleet(1, model, clock, more) as [SharedCircuitBreaker];
    await run([a, b], clock, 300, () => true);
    // Until the fleet has opened and both members have heard it.
    for (let t = 0; t < 5000 && (a.stats.refusedByFleet === 0 || b.stats.refusedByFleet === 0); t += 20) {
      await run([a, b], clock, 20, () => false);
    }
    expect(a.stats.refusedByFleet).toBeGreaterThan(0);
    // Wait out the open period; a claims the probe lease.
    await clock.advance(1100);
    await settle();
    expect(a.stateOf()).toBe('half-open');
    const ticket = await a.acquire();
    // Its success reaches the server, the reply is lost: a times out and sends it again with its next report.
    state.loseNext = true;
    a.record('success', ticket);
    await settle();
    expect(model.peek('ebb:{svc}:breaker')?.state.ps).toBe(1);
    await clock.advance(150);
    await settle();
    // The lost reply timed out; the result went again with a's next report.
    expect(a.stats.errors).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 50 && a.mode !== 'shared'; i++) {
      await clock.advance(100);
      await settle();
    }
    expect(a.mode).toBe('shared');
    // One success of two: still half-open (the resend found its lease gone and changed nothing).
    const st = model.peek('ebb:{svc}:breaker')?.state;
    expect(st?.ps).toBe(1);
    expect(st?.s).toBe(1);
  });

  it('a claim whose reply was lost hands the lease back with the next report: another member probes without waiting for it to lapse', async () => {
    const clock = virtualClock(1_000_000);
    const model = breakerModel(clock);
    const { scripts, state } = lossy(model);
    const [a] = fleet(1, scripts, clock, { probeTimeoutMs: 60_000 }) as [SharedCircuitBreaker];
    const [b] = fleet(1, model, clock, { probeTimeoutMs: 60_000 }) as [SharedCircuitBreaker];
    await run([a, b], clock, 300, () => true);
    // Until the fleet has opened and both members have heard it.
    for (let t = 0; t < 5000 && (a.stats.refusedByFleet === 0 || b.stats.refusedByFleet === 0); t += 20) {
      await run([a, b], clock, 20, () => false);
    }
    await clock.advance(1100);
    await settle();
    // a's claim is granted by the server, its reply lost: a falls back and later hands the lease back.
    state.loseNext = true;
    const claimed = Promise.resolve(a.acquire()).then(
      (t) => t,
      () => undefined,
    );
    await settle();
    await clock.advance(150);
    await settle();
    const t = await claimed;
    if (t !== undefined) a.release(t);
    // The claim timed out (a probes by its local breaker, or learns its lease from a later report).
    expect(a.stats.errors).toBeGreaterThanOrEqual(1);
    // Reconnect (at most 2 s) and report: the lease goes back; b claims it and its probe closes the fleet.
    let closed = false;
    for (let i = 0; i < 100 && !closed; i++) {
      await run([a, b], clock, 100, () => true);
      closed = b.stateOf() === 'closed';
    }
    expect(closed).toBe(true);
    // Well before the 60-s lease would have lapsed.
    expect(clock.now() - 1_000_000).toBeLessThan(20_000);
  });
});

describe('sharedCircuitBreaker: options', () => {
  it('refuses bad options with the option, the value and a fix', () => {
    const client = breakerModel(virtualClock());
    expect(() => sharedCircuitBreaker({ client, name: 'x', minMembers: 0 })).toThrow(/minMembers/);
    expect(() => sharedCircuitBreaker({ client, name: 'x', failureRate: 0 })).toThrow(/failureRate/);
    expect(() => sharedCircuitBreaker({ client, name: 'x', reportMs: 1 })).toThrow(/reportMs/);
    // A member stays on the roster windowMs after each report: at least two reports a window.
    expect(() => sharedCircuitBreaker({ client, name: 'x', windowMs: 1000, reportMs: 600 })).toThrow(
      /^sharedCircuitBreaker\(\): expected `reportMs` to be at most windowMs \/ 2 \(500\), got 600\. For example windowMs \/ 10/,
    );
    expect(() => sharedCircuitBreaker({ client, name: 'x', windowMs: 1000, reportMs: 500 })).not.toThrow();
    expect(() => sharedCircuitBreaker({ client, name: 'x', retries: 3 } as never)).toThrow(/retries/);
    expect(() => sharedCircuitBreaker({ client, name: '{x}' })).toThrow(/name/);
  });

  it('memberFailureRate is a share from 0 up to, not including, 1: a RangeError or TypeError names it, the value and a fix', () => {
    const client = breakerModel(virtualClock());
    const message = (v: unknown) =>
      new RegExp(`^sharedCircuitBreaker\\(\\): expected \`memberFailureRate\` to be .*, got ${v}\\. For example 0\\.5`);
    for (const v of [1, 1.5, -0.1, Number.NaN]) {
      expect(() => sharedCircuitBreaker({ client, name: 'x', memberFailureRate: v })).toThrow(RangeError);
      expect(() => sharedCircuitBreaker({ client, name: 'x', memberFailureRate: v })).toThrow(message(String(v)));
    }
    expect(() => sharedCircuitBreaker({ client, name: 'x', memberFailureRate: '0.5' as never })).toThrow(TypeError);
    for (const v of [0, 0.5, 0.99])
      expect(() => sharedCircuitBreaker({ client, name: 'x', memberFailureRate: v })).not.toThrow();
  });

  it('memberFailureRate reaches the fleet: two partitioned members of five open it at 0.3, not at the default 0.5', async () => {
    const tallyOf = async (more: Partial<SharedCircuitBreakerOptions>) => {
      const clock = virtualClock(1_000_000);
      const members = fleet(5, breakerModel(clock), clock, { failureRate: 0.15, ...more });
      const tally = await run(members, clock, 4000, (i) => i > 1);
      return tally.slice(2).reduce((s, t) => s + t.refused, 0);
    };
    expect(await tallyOf({})).toBe(0);
    expect(await tallyOf({ memberFailureRate: 0.3 })).toBeGreaterThan(0);
  });
});
