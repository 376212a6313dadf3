// sharedCircuitBreaker's members in virtual time against a model of Redis (breaker-model.ts) whose
// stored state someone wrote by hand: open for 23 hours, every field sound. Each member is bound
// by it no longer than the longest open period its own openBackoff would propose — the first
// report shortens it in place (event 'repair' naming the field), a probe follows, and the fleet
// closes — while a state within that bound is followed as it is, untouched.
import { describe, expect, it } from 'vitest';
import { exponential } from '../backoff/exponential.js';
import { noJitter } from '../backoff/jitter-none.js';
import { seeded } from '../core/random.js';
import { virtualClock } from '../core/virtual-clock.js';
import { isBrokenCircuitError } from '../resilience/errors.js';
import { pipeline } from '../retry/pipeline.js';
import { BREAKER } from './breaker-law.js';
import { breakerModel } from './breaker-model.js';
import { settle } from './breaker-test-helpers.js';
import type { SharedEvent } from './protocol.js';
import { type SharedCircuitBreaker, sharedCircuitBreaker } from './shared-breaker.js';

const START = 1_000_000;
const KEY = 'ebb:{brk}:breaker';
const HOUR = 3_600_000;

/** Open periods of 1 s doubling to a 30-s cap, exactly: the longest any member proposes is 30 s. */
const CAPPED = exponential({
  initialDelayMs: 1000,
  multiplier: 2,
  maxDelayMs: 30_000,
  jitter: noJitter,
  maxAttempts: Infinity,
});

/** Four members of the breaker `brk` on one model and clock, each keeping its events. */
function fleet() {
  const clock = virtualClock(START);
  const model = breakerModel(clock);
  const events: SharedEvent[][] = [[], [], [], []];
  const members = events.map((mine) =>
    sharedCircuitBreaker({
      client: model,
      name: 'brk',
      clock,
      minCalls: 10,
      windowMs: 2000,
      reportMs: 100,
      openBackoff: CAPPED,
      onEvent: (e) => mine.push(e),
    }),
  );
  return { clock, model, members, events };
}

/** One call of each member to a healthy service: 'ok' or 'refused' (a BrokenCircuitError). */
async function callAll(members: SharedCircuitBreaker[]): Promise<string[]> {
  return Promise.all(
    members.map(async (m) => {
      try {
        await pipeline([m]).execute(async () => 1);
        return 'ok';
      } catch (e) {
        if (isBrokenCircuitError(e)) return 'refused';
        throw e;
      }
    }),
  );
}

/**
 * The fleet runs, each member calling every 20 ms, after someone wrote an open state of `openMs`
 * (its first opening, 0 ms ago) over the one the members made at START, until every member's call
 * succeeds (at most `untilMs`): when (ms after the write), the refusals, and the state the model holds.
 */
async function afterWriting(openMs: number, untilMs: number) {
  const f = fleet();
  expect(await callAll(f.members)).toEqual(['ok', 'ok', 'ok', 'ok']);
  await f.clock.advance(0);
  await settle();
  // The first report waits for the script's SHA-1 (WebCrypto, answered from Node's thread pool):
  // on a busy machine that takes longer than the turns settle() gives. Real time only; the
  // virtual clock stays at START.
  for (let i = 0; i < 400 && !f.model.peek(KEY); i++) await new Promise((r) => setTimeout(r, 5));
  const state = f.model.peek(KEY)?.state;
  if (!state) throw new Error('the members made no state');
  const generation = state.g;
  Object.assign(state, { s: 1, n: 1, ou: START + openMs, om: openMs, e: state.e + 1 });
  let refused = 0;
  let firstRefusedAt = -1;
  let firstOkAt = -1;
  for (let t = 0; t <= untilMs; t += 20) {
    const results = await callAll(f.members);
    refused += results.filter((r) => r === 'refused').length;
    if (firstRefusedAt < 0 && results.includes('refused')) firstRefusedAt = t;
    if (firstRefusedAt >= 0 && firstOkAt < 0 && results.includes('ok')) firstOkAt = t;
    if (firstOkAt >= 0 && results.every((r) => r === 'ok')) break;
    await f.clock.advance(20);
    await settle();
  }
  return { ...f, generation, refused, firstRefusedAt, firstOkAt, state: f.model.peek(KEY)?.state };
}

describe('sharedCircuitBreaker: a stored open state binds each member no longer than its own longest open period', () => {
  it('an open state of 23 h written by hand: the first report shortens it to 30 s (one repair event, same generation), a probe 30 s on closes the fleet', async () => {
    const { members, events, generation, refused, firstRefusedAt, firstOkAt, state } = await afterWriting(
      23 * HOUR,
      60_000,
    );
    // The members hear it at their first report after the write, +100 ms, which shortens it to 30 s
    // from then: half-open at +30 100 ms, where one member's call is the probe, and it succeeds.
    // Refused: 4 members × 1500 calls of those 30 s, then 3 × 5 until the others hear the closing.
    expect([firstRefusedAt, firstOkAt, refused]).toEqual([100, 30_100, 4 * 1500 + 3 * 5]);
    expect(state).toMatchObject({ s: 0, n: 0, g: generation, k: 1, r: 4 });
    // One member shortened it, and said so; nobody lost the state.
    expect(events.flat()).toEqual([
      { type: 'repair', error: undefined, atMs: START + 100, key: KEY, field: 'ou', value: String(START + 23 * HOUR) },
    ]);
    expect(members.reduce((s, m) => s + m.stats.repairs, 0)).toBe(1);
    expect(members.reduce((s, m) => s + m.stats.stateLosses, 0)).toBe(0);
    for (const m of members) expect(m.stateOf()).toBe('closed');
    for (const m of members) await m.close();
  });

  it('an open state of 20 s, within every bound, is followed as it is: no event, the probe comes 20 s after the write', async () => {
    const { members, events, generation, refused, firstRefusedAt, firstOkAt, state } = await afterWriting(
      20_000,
      60_000,
    );
    expect([firstRefusedAt, firstOkAt, refused]).toEqual([100, 20_000, 4 * 995 + 3 * 5]);
    expect(state).toMatchObject({ s: 0, g: generation, k: 1, r: 4 });
    expect(events.flat()).toEqual([]);
    for (const m of members) await m.close();
  });

  it('an open state of 20 s: the reports while it runs leave its time and period as written', async () => {
    const f = fleet();
    await callAll(f.members);
    await f.clock.advance(0);
    await settle();
    const state = f.model.peek(KEY)?.state;
    if (!state) throw new Error('the members made no state');
    Object.assign(state, { s: 1, n: 1, ou: START + 20_000, om: 20_000, e: state.e + 1 });
    const before = structuredClone(state);
    const seen: string[] = [];
    for (let t = 0; t < 5000; t += 20) {
      const results = await callAll(f.members);
      if (seen.at(-1) !== results.join()) seen.push(results.join());
      await f.clock.advance(20);
      await settle();
    }
    // The members hear it at their next report (100 ms on) and are refused from then on.
    expect(seen).toEqual(['ok,ok,ok,ok', 'refused,refused,refused,refused']);
    expect(f.model.peek(KEY)?.state).toMatchObject({ ou: before.ou, om: before.om, g: before.g, e: before.e });
    for (const m of f.members) await m.close();
  });

  it("members of the same jittered openBackoff never shorten each other's periods: ten members, no event over a 6-min outage whose periods reach 30–60 s", async () => {
    // The default open periods: 5 s doubling to 60 s, equal jitter. Each member draws its own;
    // the bound is what its policy could draw at most (60 s), not the longest of its draws.
    const clock = virtualClock(START);
    const model = breakerModel(clock);
    const events: SharedEvent[] = [];
    const members = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((seed) =>
      sharedCircuitBreaker({
        client: model,
        name: 'brk',
        clock,
        minCalls: 10,
        windowMs: 2000,
        reportMs: 100,
        random: seeded(seed),
        onEvent: (e) => events.push(e),
      }),
    );
    const periods = new Set<number>();
    for (let t = 0; t < 360_000; t += 200) {
      await Promise.all(
        members.map((m) =>
          pipeline([m])
            .execute(async () => Promise.reject(new Error('ECONNREFUSED')))
            .catch(() => {}),
        ),
      );
      await clock.advance(200);
      await settle();
      const st = model.peek(KEY)?.state;
      // Every open period runs whole: from the change that opened it, for the period it was given.
      if (st?.s === 1) {
        expect(st.ou).toBe(st.rt + st.om);
        periods.add(st.om);
      }
    }
    const late = [...periods].filter((ms) => ms >= 30_000);
    expect(late.length).toBeGreaterThanOrEqual(5);
    expect(Math.max(...late)).toBeLessThanOrEqual(60_000);
    expect(events).toEqual([]);
    for (const m of members) await m.close();
  }, 30_000);

  it('the longest period a member sends is the top of its openBackoff: 60 000 ms for the default (5 s doubling to 60 s, equal jitter), 30 000 for 1 s doubling to 30 s', async () => {
    const clock = virtualClock(START);
    const model = breakerModel(clock);
    const sent: string[] = [];
    const spy = {
      evalSha: (sha: string, keys: readonly string[], args: readonly string[]) => {
        sent.push(args[BREAKER.headArgs + BREAKER.argsPerKey - 1] as string);
        return model.evalSha(sha, keys, args);
      },
      eval: (src: string, keys: readonly string[], args: readonly string[]) => model.eval(src, keys, args),
    };
    for (const openBackoff of [undefined, CAPPED]) {
      const m = sharedCircuitBreaker({ client: spy, name: 'brk', clock, random: seeded(7), openBackoff });
      await pipeline([m]).execute(async () => 1);
      await clock.advance(0);
      await settle();
      await m.close();
    }
    expect(sent).toEqual(['60000', '30000']);
  });
});
