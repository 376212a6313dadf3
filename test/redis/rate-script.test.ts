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
const KEYS = ['t:{fleet}:rate', 't:{fleet}:rate-members', 't:{fleet}:rate-leases'];
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
}
interface Reply {
  share: number;
  fleet: number;
  epoch: number;
  short: boolean;
  members: number;
}

describe.skipIf(!enabled)('RATE_SCRIPT on a real redis-server', () => {
  let server: RedisServer;
  let c: Redis;
  const call = async (l: Lease): Promise<Reply> => {
    const reply = (await c.eval(
      RATE_SCRIPT,
      3,
      ...KEYS,
      l.id,
      l.saturated === false ? '0' : '1',
      String(l.used ?? 0),
      String(l.accepted ?? -1),
      String(l.leaseMs ?? 500),
      String(l.cut ?? -1),
      String(l.seed ?? -1),
      ...LAW,
    )) as string[];
    const [share, fleet, epoch, short, members] = reply.map(Number) as [number, number, number, number, number];
    return { share, fleet, epoch, short: short === 1, members };
  };
  type State = Record<'r' | 'e' | 'ch' | 'ev' | 'nt' | 'co' | 'ia' | 'iu' | 'ns', number>;
  const state = async (): Promise<State> => {
    const h = await c.hgetall(KEYS[0] as string);
    return Object.fromEntries(Object.entries(h).map(([k, v]) => [k, Number(v)])) as State;
  };
  /** Moves the fleet's last change into the past by `ms` (the script reads the server's TIME). */
  const age = async (ms: number) => {
    const s = await state();
    await c.hset(KEYS[0] as string, { ch: s.ch - ms, ev: s.ev - ms, nt: s.nt - ms });
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
    expect(await call({ id: 'a', seed: 60 })).toEqual({ share: 60, fleet: 60, epoch: 0, short: false, members: 1 });
    // b arrives while a holds all 60: it starts at the minimum rate and is told to ask again soon.
    expect(await call({ id: 'b', seed: 60 })).toEqual({ share: 1, fleet: 60, epoch: 0, short: true, members: 2 });
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

  it('a throttle while the service took nearly all that was sent is a burst: the unused headroom goes, no more', async () => {
    await call({ id: 'a', seed: 100, accepted: 40, used: 40 });
    await age(5000);
    // Sent 40 of the 100 allowed, all accepted: down to 1.05 × 40, but not below 0.5 × 100.
    expect((await call({ id: 'a', accepted: 40, used: 40, cut: 0 })).fleet).toBe(50);
    await c.del(...KEYS);
    await call({ id: 'a', seed: 100, accepted: 80, used: 80 });
    await age(5000);
    expect((await call({ id: 'a', accepted: 80, used: 80, cut: 0 })).fleet).toBeCloseTo(84, 9);
  });

  it('notes a throttle now and then at a rate the fleet uses; a second within five cool-offs cuts by the margin', async () => {
    await call({ id: 'a', seed: 50, accepted: 49, used: 50 });
    await age(6000);
    expect(await call({ id: 'a', accepted: 49, used: 50, cut: 0 })).toMatchObject({ fleet: 50, epoch: 1 });
    await age(2000);
    expect((await call({ id: 'a', accepted: 49, used: 50, cut: 1 })).fleet).toBeCloseTo(47.5, 9);
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

  it('rises after the cool-off only while the fleet uses its rate, concavely up to the learned limit', async () => {
    await call({ id: 'a', seed: 100, accepted: 50, used: 100 });
    await age(5000);
    await call({ id: 'a', accepted: 50, used: 100, cut: 0 }); // 47.5, learned limit 50
    await c.hset(KEYS[0] as string, { r: 30 });
    await age(1000);
    // Not kept waiting, or sending well below the rate: no rise.
    expect((await call({ id: 'a', saturated: false, used: 30, accepted: 30 })).fleet).toBe(30);
    expect((await call({ id: 'a', used: 20, accepted: 20 })).fleet).toBe(30);
    // Saturated at the rate: halfway to 47.5 (38.75), which is more than +10 %.
    expect((await call({ id: 'a', used: 30, accepted: 30 })).fleet).toBeCloseTo(38.75, 9);
    // Within the cool-off: no rise.
    expect((await call({ id: 'a', used: 38, accepted: 38 })).fleet).toBeCloseTo(38.75, 9);
  });

  it('a throttle right after a rise is a relapse: the rise is undone and the cool-off doubles', async () => {
    await call({ id: 'a', seed: 100, accepted: 50, used: 100 });
    await age(5000);
    await call({ id: 'a', accepted: 50, used: 100, cut: 0 }); // 47.5 = the settling point
    await age(1000);
    const rise = await call({ id: 'a', accepted: 47.5, used: 47.5 });
    expect(rise.fleet).toBeCloseTo(47.5 * 1.1, 9); // a probe: one base step
    const relapse = await call({ id: 'a', accepted: 50, used: 52, cut: rise.epoch });
    expect(relapse.fleet).toBeCloseTo(47.5, 9);
    expect((await state()).co).toBe(2000);
    // One cool-off later is too early now; two are enough.
    await age(1000);
    expect((await call({ id: 'a', accepted: 47.5, used: 47.5 })).fleet).toBeCloseTo(47.5, 9);
    await age(1000);
    expect((await call({ id: 'a', accepted: 47.5, used: 47.5 })).fleet).toBeCloseTo(47.5 * 1.1, 9);
  });

  it('keeps every invariant for any sequence of leases, departures and throttles', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            id: fc.constantFrom('a', 'b', 'c', 'd'),
            saturated: fc.boolean(),
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
              if (step.leaseMs > 0) expect(r.share).toBeGreaterThanOrEqual(0);
            } else expect(r.share).toBe(-1); // an unlimited fleet leases unlimited shares
            expect(Number.isFinite(s.ia) && Number.isFinite(s.ns) && s.ns >= 0 && s.ns <= 4).toBe(true);
            expect(r.members).toBeLessThanOrEqual(4);
          }
        },
      ),
      { numRuns: 40 },
    );
  }, 60_000);
});
