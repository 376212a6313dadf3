// The shared rate's Lua script (RATE_SCRIPT) run by a real redis-server: the lease arithmetic and
// the fleet's control law, called directly with chosen arguments, so each rule is checked on the
// server that runs it in production. The controller around it is tested in virtual time in
// packages/ebb/src/redis/shared-rate.test.ts and end to end against nginx in fleet-rate.test.ts.
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RATE_SCRIPT } from '../../packages/ebb/src/redis/scripts.js';
import { haveRedis, type RedisServer, startRedis } from './support/redis-server.js';

const enabled = haveRedis();
const KEYS = ['t:{fleet}:rate', 't:{fleet}:rate-members', 't:{fleet}:rate-leases', 't:{fleet}:rate-order'];
// margin, decreaseFactor, increase, largest step, coolOffMs, maxCoolOffMs, min, max (-1: none), expiry s
const LAW = ['0.05', '0.5', '0.1', '1', '1000', '8000', '1', '-1', '86400'];

interface Lease {
  id: string;
  saturated?: boolean;
  used?: number;
  accepted?: number;
  leaseMs?: number;
  cut?: number;
  seed?: number;
  /** A success since the member's last call (default false: no evidence for a rise). */
  ok?: boolean;
  /** The successes its accepted rate counts (default 100 when accepted is known, else -1). */
  successes?: number;
  /** The span, in ms, its accepted rate was measured over (default 1000). */
  spanMs?: number;
  /** The generation the throttled request was sent in (default 0: none). */
  ticketGeneration?: number;
  /** The members the caller last heard of (default 0: none). */
  heard?: number;
  /** minRatePerSecond (default LAW's 1). */
  min?: number;
}
interface Reply {
  share: number;
  fleet: number;
  epoch: number;
  short: boolean;
  members: number;
  /** The time-division grids: before (rate, members), after (rate, members), and when the second holds from. */
  grids?: { before: [number, number]; after: [number, number]; fromMs: number; serverMs: number };
  /** The first bad key, field and value the script repaired ('' when none). */
  fault?: [string, string, string];
}

describe.skipIf(!enabled)('RATE_SCRIPT on a real redis-server', () => {
  let server: RedisServer;
  let c: Redis;
  const call = async (l: Lease): Promise<Reply> => {
    const reply = (await c.eval(
      RATE_SCRIPT,
      4,
      ...KEYS,
      l.id,
      l.saturated === false ? '0' : '1',
      String(l.used ?? 0),
      String(l.accepted ?? -1),
      String(l.leaseMs ?? 500),
      String(l.cut ?? -1),
      String(l.seed ?? -1),
      ...(l.min === undefined ? LAW : [...LAW.slice(0, 6), String(l.min), ...LAW.slice(7)]),
      l.ok === true ? '1' : '0',
      String(l.successes ?? ((l.accepted ?? -1) >= 0 ? 100 : -1)),
      String(l.spanMs ?? 1000),
      '0',
      String(Math.floor(Math.random() * 2 ** 40) + 1),
      String(l.ticketGeneration ?? 0),
      String(l.heard ?? 0),
      '-1',
      '',
    )) as string[];
    const n = reply.map(Number);
    const [share, fleet, epoch, short, members] = n as [number, number, number, number, number];
    const grids = {
      before: [n[9], n[10]] as [number, number],
      after: [n[11], n[12]] as [number, number],
      fromMs: n[13] as number,
      serverMs: n[7] as number,
    };
    return {
      share,
      fleet,
      epoch,
      short: short === 1,
      members,
      grids,
      fault: reply.slice(14, 17) as [string, string, string],
    };
  };
  type State = Record<'r' | 'e' | 'ch' | 'ev' | 'nt' | 'rd' | 'rl' | 'ia' | 'iu' | 'ns' | 'pa' | 'cu', number>;
  const state = async (): Promise<State> => {
    const h = await c.hgetall(KEYS[0] as string);
    return Object.fromEntries(Object.entries(h).map(([k, v]) => [k, Number(v)])) as State;
  };
  /** Moves the fleet's last change into the past by `ms` (the script reads the server's TIME). */
  const age = async (ms: number) => {
    const s = await state();
    await c.hset(KEYS[0] as string, {
      ch: s.ch - ms,
      ev: s.ev - ms,
      nt: s.nt - ms,
      rd: s.rd < 1e300 ? s.rd - ms : s.rd,
      // When a failed probe is paid for, and until when throttles are charged to it (-BIG: none).
      pa: s.pa > -1e300 ? s.pa - ms : s.pa,
      cu: s.cu > -1e300 ? s.cu - ms : s.cu,
    });
  };

  beforeAll(async () => {
    server = await startRedis();
    c = new Redis(server.url, { maxRetriesPerRequest: 0 });
  });
  afterAll(async () => {
    c?.disconnect();
    await server?.stop();
  });
  beforeEach(async () => {
    await c.del(...KEYS);
  });

  it('starts a missing state from the seed and splits it equally between saturated members, never above it', async () => {
    expect(await call({ id: 'a', seed: 60 })).toMatchObject({
      share: 60,
      fleet: 60,
      epoch: 0,
      short: false,
      members: 1,
    });
    // b arrives while a holds all 60: it starts at the minimum rate and is told to ask again soon.
    expect(await call({ id: 'b', seed: 60 })).toMatchObject({ share: 1, fleet: 60, epoch: 0, short: true, members: 2 });
    // a renews: its fair share is now 30 (a decrease is granted at once).
    expect((await call({ id: 'a' })).share).toBe(30);
    // b asks again: a's 30 are all that is held now, so b gets its fair 30.
    expect(await call({ id: 'b' })).toMatchObject({ share: 30, short: false });
    expect((await call({ id: 'a' })).share).toBe(30);
    const s = await state();
    expect(s.ia).toBe(60);
    expect(s.ns).toBe(2);
  });

  it('gives an unsaturated member what it uses plus half, and the rest to the saturated ones', async () => {
    await call({ id: 'a', seed: 100 });
    // b wants 15 (10 × 1.5), but a holds all 100: b starts at the minimum, 1.
    expect(await call({ id: 'b', saturated: false, used: 10 })).toMatchObject({ share: 1, short: true });
    // a, the only saturated member, gets what b does not ask for: 85.
    expect((await call({ id: 'a' })).share).toBe(85);
    expect((await call({ id: 'b', saturated: false, used: 10 })).share).toBe(15);
    // b now uses 40 and asks for 60 (1.5 ×); max-min fair is 50 each, and b grows only into
    // what a no longer holds once a renews.
    expect((await call({ id: 'b', saturated: false, used: 40 })).share).toBe(15);
    expect((await call({ id: 'a' })).share).toBe(50);
    expect((await call({ id: 'b', saturated: false, used: 40 })).share).toBe(50);
  });

  it('never leases nothing: a waiting member whose fair part is 0 (the others hold the whole rate) gets the minimum and asks again soon', async () => {
    // a and b do not wait; each holds the equal part it was given while nobody waited, and their
    // wants sum to the whole 60 r/s — as when a member comes back from a fallback.
    await call({ id: 'a', seed: 60, saturated: false, used: 10 });
    await call({ id: 'b', saturated: false, used: 10 });
    await call({ id: 'a', saturated: false, used: 10 });
    expect(await call({ id: 'c' })).toMatchObject({ share: 1, short: true, members: 3 });
    // A minimum above an equal part: 3 members of a 6 r/s fleet with minRatePerSecond 5 get 2 each.
    await c.del(...KEYS);
    await call({ id: 'a', seed: 6, saturated: false, used: 1, min: 5 });
    await call({ id: 'b', saturated: false, used: 1, min: 5 });
    expect(await call({ id: 'c', min: 5 })).toMatchObject({ share: 2, fleet: 6, short: true });
  });

  it('leaves a member not kept waiting its fair share while nobody else waits either', async () => {
    await call({ id: 'a', seed: 100, saturated: false, used: 10 });
    expect((await call({ id: 'a', saturated: false, used: 10 })).share).toBe(100);
    await call({ id: 'b', saturated: false, used: 10 });
    expect((await call({ id: 'a', saturated: false, used: 10 })).share).toBe(50);
    // b now waits: a keeps 15 (1.5 × its 10), b may grow into the other 85.
    expect((await call({ id: 'b', used: 50 })).share).toBe(50);
    expect((await call({ id: 'a', saturated: false, used: 10 })).share).toBe(15);
    expect((await call({ id: 'b', used: 50 })).share).toBe(85);
  });

  it('holds no lease for a member that leaves (lease 0) or stops renewing (3 × lease)', async () => {
    await call({ id: 'a', seed: 40 });
    await call({ id: 'b' });
    await call({ id: 'a' });
    await call({ id: 'b' });
    expect((await call({ id: 'a', leaseMs: 0 })).members).toBe(1);
    expect((await call({ id: 'b' })).share).toBe(40);
    // c leases for 10 ms; 30 ms later (3 leases) its lease is gone and its share with it.
    await call({ id: 'c', leaseMs: 10 });
    await new Promise((r) => setTimeout(r, 60));
    const r = await call({ id: 'b' });
    expect(r.members).toBe(1);
    expect(r.share).toBe(40);
    expect((await state()).ia).toBe(40);
  });

  it('moves the rate once per congestion event: the first report of the epoch cuts, later ones change nothing', async () => {
    await call({ id: 'a', seed: 100, accepted: 50, used: 50 });
    await call({ id: 'b', accepted: 0, used: 50 });
    await age(5000);
    // The fleet sent 100 r/s and 50 were accepted: the service refused the rest, so 50 is its
    // limit, and the rate goes to 0.95 × 50.
    const first = await call({ id: 'b', accepted: 0, used: 50, cut: 0 });
    expect(first.fleet).toBeCloseTo(47.5, 9);
    expect(first.epoch).toBe(1);
    // a reports the same event (epoch 0): old news.
    const second = await call({ id: 'a', accepted: 50, used: 50, cut: 0 });
    expect(second.fleet).toBeCloseTo(47.5, 9);
    expect(second.epoch).toBe(1);
  });

  it('a throttle while no member waited: the cut goes no lower than decreaseFactor (adaptiveRate: not application-limited)', async () => {
    await call({ id: 'a', seed: 100, accepted: 40, used: 40, saturated: false });
    await age(5000);
    // Sent 40 of the 100 allowed, all accepted: 0.95 × 40 is below 0.5 × 100, so 50.
    expect((await call({ id: 'a', accepted: 40, used: 40, cut: 0, saturated: false })).fleet).toBe(50);
    await c.del(...KEYS);
    await call({ id: 'a', seed: 100, accepted: 80, used: 80, saturated: false });
    await age(5000);
    expect((await call({ id: 'a', accepted: 80, used: 80, cut: 0, saturated: false })).fleet).toBeCloseTo(76, 9);
    // Kept waiting, the same throttle cuts to 0.95 × what was accepted, whatever the bound.
    await c.del(...KEYS);
    await call({ id: 'a', seed: 100, accepted: 40, used: 40 });
    await age(5000);
    expect((await call({ id: 'a', accepted: 40, used: 40, cut: 0 })).fleet).toBeCloseTo(38, 9);
  });

  it('notes a throttle now and then at a rate that holds; a second within a cool-off of the note cuts to the accepted rate', async () => {
    await call({ id: 'a', seed: 50, accepted: 49, used: 50 });
    await age(6000);
    expect(await call({ id: 'a', accepted: 49, used: 50, cut: 0 })).toMatchObject({ fleet: 50, epoch: 1 });
    await age(2000);
    // Two cool-offs later: noted again.
    expect(await call({ id: 'a', accepted: 49, used: 50, cut: 1 })).toMatchObject({ fleet: 50, epoch: 2 });
    await age(500);
    expect((await call({ id: 'a', accepted: 49, used: 50, cut: 2 })).fleet).toBeCloseTo(49 * 0.95, 9);
  });

  it('a delivered rate over fewer than 10 successes is not known: the cut is blind (decreaseFactor)', async () => {
    await call({ id: 'a', seed: 100, accepted: 9, used: 100, successes: 9 });
    await age(5000);
    expect((await call({ id: 'a', accepted: 9, used: 100, successes: 9, cut: 0 })).fleet).toBe(50);
    // Two members with 5 each: the fleet's 10 are enough.
    await c.del(...KEYS);
    await call({ id: 'a', seed: 100, accepted: 5, used: 50, successes: 5 });
    await call({ id: 'b', accepted: 5, used: 50, successes: 5 });
    await age(5000);
    expect((await call({ id: 'b', accepted: 5, used: 50, successes: 5, cut: 0 })).fleet).toBe(9.5);
  });

  it('a member that has not measured a second counts as accepting what it sends; the fleet is unknown only while none has', async () => {
    await call({ id: 'a', seed: 100, accepted: 30, used: 60 });
    await call({ id: 'b', used: 20 }); // not measured yet
    await age(5000);
    // Accepted 30 + 20 of the 80 sent: down to 0.95 × 50.
    expect((await call({ id: 'a', accepted: 30, used: 60, cut: 0 })).fleet).toBeCloseTo(47.5, 9);
    await c.del(...KEYS);
    await call({ id: 'a', seed: 100, used: 60 });
    await call({ id: 'b', used: 20 });
    await age(5000);
    // Nobody has measured: a blind cut.
    expect((await call({ id: 'a', used: 60, cut: 0 })).fleet).toBe(50);
  });

  it('an unlimited fleet starts from what was accepted when some was refused, else from half of what it sent', async () => {
    await call({ id: 'a', seed: -1, accepted: 50, used: 200 });
    expect((await call({ id: 'a', accepted: 50, used: 200, cut: 0 })).fleet).toBeCloseTo(47.5, 9);
    await c.del(...KEYS);
    await call({ id: 'a', seed: -1, used: 200 });
    expect((await call({ id: 'a', used: 200, cut: 0 })).fleet).toBe(100);
  });

  it('takes a throttle within one cool-off of a cut as the same event', async () => {
    await call({ id: 'a', seed: 100, accepted: 50, used: 100 });
    await age(5000);
    expect((await call({ id: 'a', accepted: 50, used: 100, cut: 0 })).fleet).toBeCloseTo(47.5, 9);
    const again = await call({ id: 'a', accepted: 30, used: 100, cut: 1 });
    expect(again.fleet).toBeCloseTo(47.5, 9);
    expect(again.epoch).toBe(2);
  });

  it('rises after the cool-off once a member waited and one succeeded; with other members, only while the fleet sends about its rate', async () => {
    await call({ id: 'a', seed: 100, accepted: 50, used: 100 });
    await age(5000);
    await call({ id: 'a', accepted: 50, used: 100, cut: 0 }); // 47.5, learned limit 50
    await age(1000);
    // Successes but not kept waiting: no rise, however long ago the change was.
    expect((await call({ id: 'a', saturated: false, ok: true, used: 47, accepted: 47 })).fleet).toBeCloseTo(47.5, 9);
    // Kept waiting, after a success: a probe, one base step.
    expect((await call({ id: 'a', used: 47, accepted: 47 })).fleet).toBeCloseTo(47.5 * 1.1, 9);
    // Kept waiting, without a success since: no rise.
    await age(2000);
    expect((await call({ id: 'a', used: 52, accepted: 52 })).fleet).toBeCloseTo(47.5 * 1.1, 9);
    await c.del(...KEYS);
    await call({ id: 'a', seed: 52.25 });
    await call({ id: 'b', used: 0, accepted: 0, saturated: false });
    await age(2000);
    // A second member that sends little: the fleet sends 32 of its 52.25, and a wait is no reason to rise.
    expect((await call({ id: 'a', ok: true, used: 32, accepted: 32 })).fleet).toBeCloseTo(52.25, 9);
    // It sends 50 of them: a probe.
    expect((await call({ id: 'a', ok: true, used: 50, accepted: 50 })).fleet).toBeCloseTo(52.25 * 1.1, 9);
  });

  it('with other members, the next rise is judged from when the last of them hears the new rate (its next renewal)', async () => {
    const serverMs = async () => {
      const [sec, usec] = (await c.time()).map(Number) as [number, number];
      return sec * 1000 + Math.floor(usec / 1000);
    };
    await call({ id: 'a', seed: 50 });
    const beforeB = await serverMs();
    await call({ id: 'b', used: 25, accepted: 25, saturated: false });
    const afterB = await serverMs();
    await age(2000);
    // A probe: a hears it in this reply; b at its next renewal, one lease (500 ms) after its last.
    expect((await call({ id: 'a', ok: true, used: 50, accepted: 50 })).fleet).toBeCloseTo(55, 9);
    const heard = (await state()).ch;
    expect(heard).toBeGreaterThanOrEqual(beforeB + 500);
    expect(heard).toBeLessThanOrEqual(afterB + 500);
    // A cool-off (1 s) after the rise was applied is still within a cool-off of b hearing it: no rise.
    await age(1000);
    expect((await call({ id: 'a', ok: true, used: 55, accepted: 50 })).fleet).toBeCloseTo(55, 9);
    // A cool-off after b heard it: the next probe (the step doubles after a probe that held).
    await age(600);
    expect((await call({ id: 'a', ok: true, used: 55, accepted: 55 })).fleet).toBeCloseTo(55 * 1.2, 9);
  });

  it('a throttle right after a rise is a relapse: the rise is undone and the cool-off doubles', async () => {
    await call({ id: 'a', seed: 100, accepted: 50, used: 100 });
    await age(5000);
    await call({ id: 'a', accepted: 50, used: 100, cut: 0 }); // 47.5 = the settling point
    await age(1000);
    const rise = await call({ id: 'a', ok: true, accepted: 47.5, used: 47.5 });
    expect(rise.fleet).toBeCloseTo(47.5 * 1.1, 9); // a probe: one base step
    const relapse = await call({ id: 'a', accepted: 50, used: 52, cut: rise.epoch });
    expect(relapse.fleet).toBeCloseTo(47.5, 9);
    expect((await state()).rl).toBe(1);
    // One cool-off later is too early now; two are enough.
    await age(1000);
    expect((await call({ id: 'a', ok: true, accepted: 47.5, used: 47.5 })).fleet).toBeCloseTo(47.5, 9);
    await age(1000);
    // Within 5 r/s of the rate last throttled (52.25), a probe is additive: increase × 5 r/s.
    expect((await call({ id: 'a', ok: true, accepted: 47.5, used: 47.5 })).fleet).toBeCloseTo(47.5 + 0.1 * 5, 9);
  });

  it('a throttle reported with the success and the wait before it takes them first, then its due rise, its charge, its fall (as adaptiveRate records them)', async () => {
    await call({ id: 'a', seed: 100, accepted: 50, used: 100 });
    await age(5000);
    await call({ id: 'a', accepted: 50, used: 100, cut: 0 }); // 47.5
    await age(1000);
    const rise = await call({ id: 'a', ok: true, accepted: 47.5, used: 47.5 }); // a probe to 52.25
    const relapse = await call({ id: 'a', accepted: 50, used: 52, cut: rise.epoch });
    expect(relapse.fleet).toBeCloseTo(47.5, 9);
    expect((await state()).rl).toBe(1);
    // 1.1 s on: the relapse is paid for (50 requests at 47.5 r/s: 1.05 s) and still charged (2 s).
    // One call reports a success, a wait and a throttle: with the success and the wait, a rise to
    // 48 r/s is due, and the throttle judges it: a second relapse, to 0.95 × 48. Charged before the
    // success, the throttle would put the payment 1.05 s on, the rise off, and be only noted (47.5
    // r/s, relapses 1).
    await age(1100);
    const second = await call({ id: 'a', ok: true, accepted: 50, used: 48, cut: relapse.epoch });
    expect(second.fleet).toBeCloseTo(48 * 0.95, 9);
    expect(second.epoch).toBe(relapse.epoch + 1);
    expect((await state()).rl).toBe(2);
  });

  it('keeps every invariant for any sequence of leases, departures and throttles', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            id: fc.constantFrom('a', 'b', 'c', 'd'),
            saturated: fc.boolean(),
            ok: fc.boolean(),
            successes: fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 1000 })),
            used: fc.double({ min: 0, max: 1e6, noNaN: true }),
            accepted: fc.oneof(fc.constant(-1), fc.double({ min: 0, max: 1e6, noNaN: true })),
            leaseMs: fc.constantFrom(0, 500, 60_000),
            cut: fc.integer({ min: -1, max: 6 }),
            ageMs: fc.constantFrom(0, 0, 1000, 9000),
          }),
          { minLength: 1, maxLength: 25 },
        ),
        fc.oneof(fc.constant(-1), fc.double({ min: 1, max: 1e6, noNaN: true })),
        async (steps, seed) => {
          await c.del(...KEYS);
          let epoch = 0;
          let highest = seed;
          for (const step of steps) {
            if (step.ageMs > 0 && (await c.exists(KEYS[0] as string))) await age(step.ageMs);
            const r = await call({ ...step, seed });
            const s = await state();
            expect(r.epoch).toBeGreaterThanOrEqual(epoch); // epochs never go back
            expect(r.epoch - epoch).toBeLessThanOrEqual(1); // one event per call at most
            epoch = r.epoch;
            if (r.fleet >= 0) {
              highest = Math.max(highest, r.fleet);
              expect(r.fleet).toBeGreaterThanOrEqual(1); // minRatePerSecond
              // A share never exceeds the fleet's rate (or the 1 r/s minimum); leases never sum above
              // the highest rate they were issued at by more than the minimum each newcomer gets.
              expect(r.share).toBeLessThanOrEqual(Math.max(1, r.fleet) * (1 + 1e-9));
              expect(s.ia).toBeLessThanOrEqual((highest + 4) * (1 + 1e-9));
              // Never nothing: the minimum, or an equal part of the fleet's rate when that is less.
              if (step.leaseMs > 0) {
                expect(r.share).toBeGreaterThanOrEqual(Math.min(1, r.fleet / r.members) * (1 - 1e-9));
              }
            } else expect(r.share).toBe(-1); // an unlimited fleet leases unlimited shares
            expect(Number.isFinite(s.ia) && Number.isFinite(s.ns) && s.ns >= 0 && s.ns <= 4).toBe(true);
            expect(r.members).toBeLessThanOrEqual(4);
          }
        },
      ),
      { numRuns: 40 },
    );
  }, 60_000);

  it('a state recreated after a loss holds the members its first caller had heard of (ghosts): the first back gets its part, not the whole rate', async () => {
    // The state is gone (FLUSHALL): the first caller had heard of 4 members and the fleet at 80 r/s.
    const first = await call({ id: 'a', seed: 80, heard: 4 });
    expect(first).toMatchObject({ share: 20, fleet: 80, members: 4 });
    // Each one back takes a ghost's place and its part.
    expect((await call({ id: 'b', seed: 80, heard: 4 })).share).toBe(20);
    expect((await call({ id: 'c', seed: 80, heard: 4 })).share).toBe(20);
    const s = await state();
    expect(Number((s as Record<string, number>).gn)).toBe(1);
    // A fresh state with no members heard of: the whole rate to the first, as before.
    await c.del(...KEYS);
    expect((await call({ id: 'z', seed: 80 })).share).toBe(80);
  });

  it('a throttle of a request sent in another generation counts in the current one’s first epoch, once', async () => {
    await call({ id: 'a', seed: 100, accepted: 50, used: 50 });
    const g = Number((await c.hget(KEYS[0] as string, 'g')) as string);
    // A request sent before the state was lost (generation g + 1 then, epoch 5): its throttle cuts now.
    const cut = await call({ id: 'a', cut: 5, ticketGeneration: g + 1, accepted: 50, used: 50 });
    expect(cut.epoch).toBe(1);
    expect(cut.fleet).toBeLessThan(100);
    // A second report of the same (old) generation finds the epoch moved on: nothing changes.
    const again = await call({ id: 'b', cut: 5, ticketGeneration: g + 1, accepted: 50, used: 50 });
    expect(again).toMatchObject({ epoch: 1, fleet: cut.fleet });
    // With the current generation, an epoch other than the fleet's is old news, as before.
    expect((await call({ id: 'a', cut: 5, ticketGeneration: g })).epoch).toBe(1);
  });

  it('keeps the time-division grid: a change of the rate or the members holds from one lease on, the grid before it until then', async () => {
    await call({ id: 'a', seed: 60, leaseMs: 100 });
    const b = await call({ id: 'b', leaseMs: 100 });
    // b joined before a's grid held: the pending grid is replaced (60 r/s among 2), one lease after
    // b's call; until then the grid before it (the new state's, of no members: no turns).
    expect(b.grids?.after).toEqual([60, 2]);
    expect(b.grids?.before).toEqual([60, 0]);
    const ahead = (r: Reply) => (r.grids?.fromMs as number) - (r.grids?.serverMs as number);
    expect(ahead(b)).toBeGreaterThan(90);
    expect(ahead(b)).toBeLessThanOrEqual(100);
    // No change: the grid stays, with its instant.
    const again = await call({ id: 'a', leaseMs: 100 });
    expect(again.grids?.after).toEqual([60, 2]);
    expect(again.grids?.fromMs).toBe(b.grids?.fromMs);
    // After the instant, a cut: the grid that held becomes the one before, the cut's grid holds a lease on.
    await new Promise((r) => setTimeout(r, 150));
    const cut = await call({ id: 'a', cut: 0, leaseMs: 100, accepted: 40, used: 40 });
    expect(cut.epoch).toBe(1);
    expect(cut.grids?.before).toEqual([60, 2]);
    expect(cut.grids?.after).toEqual([cut.fleet, 2]);
    expect(ahead(cut)).toBeGreaterThan(90);
    expect(ahead(cut)).toBeLessThanOrEqual(100);
  });

  it('sums within their bounds that disagree with the leases are rebuilt from them once a lease shows it, naming the field', async () => {
    await call({ id: 'a', seed: 60 });
    await call({ id: 'b' });
    // Both wait (ns = 2); a writer sets ns to 0 — a count, within its bounds.
    await c.hset(KEYS[0] as string, 'ns', '0');
    const r = await call({ id: 'a' });
    // a's renewal takes its own lease out of the sums first: ns would go to -1. Rebuilt instead.
    expect(r.fault?.slice(1)).toEqual(['ns', '0']);
    expect(Number(await c.hget(KEYS[0] as string, 'ns'))).toBe(2);
    expect(r.share).toBe(30);
    for (const v of Object.values(await c.hgetall(KEYS[1] as string))) {
      for (const x of v.split(',')) expect(Number.isFinite(Number(x))).toBe(true);
    }
  });
});
