// The fleet as a sharedRate member last heard it: what a lease changes, when the state it knew is
// gone, which throttles are news (one an epoch), and the seeds it sends and falls back to.
import { describe, expect, it } from 'vitest';
import { lawOptions } from '../rate/law-options.js';
import { SharedTicket } from './rate-fallback.js';
import type { Lease } from './rate-lease.js';
import { FleetView } from './rate-view.js';

const law = lawOptions('test', { initialRatePerSecond: 20, minRatePerSecond: 2, maxRatePerSecond: 100 });

/** A lease as parseLease returns it: a fleet of 40 r/s in generation 7, epoch 3, of which this member holds 10. */
const lease = (over: Partial<Lease> = {}): Lease => ({
  share: 10,
  fleet: 40,
  epoch: 3,
  short: false,
  members: 4,
  generation: 7,
  rank: 1,
  serverMs: 50_000,
  throttledAt: 44,
  grids: { before: { rate: 40, members: 4 }, after: { rate: 40, members: 4 }, fromMs: 0 },
  fault: undefined,
  ...over,
});

describe('FleetView', () => {
  it('before any answer: the configured initial rate, no members reported, an unlimited share', () => {
    const v = new FleetView(law);
    expect([v.fleet, v.share, v.membersHeard, v.throttledAt, v.generation]).toEqual([20, Infinity, 0, -1, 0]);
    expect(v.fallbackSeed()).toEqual({ seed: 20, from: 'initial' });
  });

  it('a lease sets every value it carries; -1 reads as unlimited', () => {
    const v = new FleetView(law);
    expect(v.hear(lease({ short: true }), 1000, 1010)).toBeUndefined();
    expect([v.share, v.fleet, v.epoch, v.generation, v.members, v.rank, v.throttledAt, v.short]).toEqual([
      10,
      40,
      3,
      7,
      4,
      1,
      44,
      true,
    ]);
    expect(v.membersHeard).toBe(4);
    expect(v.serverClock.offset).toBe(50_000 - 1005);
    v.hear(lease({ share: -1, fleet: -1 }), 2000, 2010);
    expect([v.share, v.fleet]).toEqual([Infinity, Infinity]);
  });

  it('another generation is a lost state, an epoch gone back a rewound one; either makes the next throttle news', () => {
    const v = new FleetView(law);
    v.hear(lease({ epoch: 5 }), 0, 1);
    expect(v.news(new SharedTicket(5, 7))).toEqual(new SharedTicket(5, 7));
    expect(v.news(new SharedTicket(5, 7))).toBe('reported');
    expect(v.hear(lease({ epoch: 4 }), 0, 1)).toBe('epoch');
    expect(v.news(undefined)).toEqual(new SharedTicket(4, 7));
    expect(v.hear(lease({ epoch: 0, generation: 8 }), 0, 1)).toBe('generation');
    // A request sent in the generation before belongs to the new one's first epoch.
    expect(v.news(new SharedTicket(4, 7))).toEqual(new SharedTicket(0, 8));
    expect(v.news(undefined)).toBe('reported');
  });

  it('a repair (a fault in the lease) also makes the next throttle news, though generation and epoch stay', () => {
    const v = new FleetView(law);
    v.hear(lease(), 0, 1);
    expect(v.news(undefined)).toEqual(new SharedTicket(3, 7));
    expect(v.hear(lease({ fault: { key: 'k', field: 'rate', value: 'x' } }), 0, 1)).toBeUndefined();
    expect(v.news(undefined)).toEqual(new SharedTicket(3, 7));
  });

  it('a throttle of a request sent before the fleet last changed is stale; one an epoch is sent', () => {
    const v = new FleetView(law);
    v.hear(lease({ epoch: 6 }), 0, 1);
    expect(v.news(new SharedTicket(5, 7))).toBe('stale');
    expect(v.news(new SharedTicket(6, 7))).toEqual(new SharedTicket(6, 7));
    expect(v.news(new SharedTicket(6, 7))).toBe('reported');
    // Sent in an epoch the fleet went back from: it belongs to the current one.
    expect(v.current(new SharedTicket(9, 7))).toBe(6);
  });

  it('a throttle held while a call was in flight stays news only if that answer left its epoch current', () => {
    const v = new FleetView(law);
    v.hear(lease({ epoch: 2 }), 0, 1);
    const held = new SharedTicket(2, 7);
    expect(v.stillNews(held)).toEqual(new SharedTicket(2, 7));
    v.hear(lease({ epoch: 3 }), 0, 1);
    expect(v.stillNews(held)).toBeUndefined();
    expect(v.stillNews(undefined)).toBeUndefined();
  });

  it('the seed a lease sends: the fleet as heard, at most the local rate times the members on fallback', () => {
    const v = new FleetView(law);
    v.hear(lease(), 0, 1);
    expect(v.seed(undefined)).toBe(40);
    expect(v.seed(6)).toBe(24);
    expect(v.seed(30)).toBe(40);
    v.hear(lease({ members: 0 }), 0, 1);
    expect(v.seed(6)).toBe(6);
  });

  it('a fallback starts from the share heard, within the bounds', () => {
    const v = new FleetView(law);
    v.hear(lease({ share: 0 }), 0, 1);
    expect(v.fallbackSeed()).toEqual({ seed: 2, from: 'fleet' });
    v.hear(lease({ share: -1 }), 0, 1);
    expect(v.fallbackSeed()).toEqual({ seed: 20, from: 'initial' });
  });

  it('a reset by this process: its generation, epoch 0, the initial rate, nothing reported', () => {
    const v = new FleetView(law);
    v.hear(lease(), 0, 1);
    v.news(undefined);
    v.reset(99);
    expect([v.generation, v.epoch, v.fleet, v.throttledAt]).toEqual([99, 0, 20, -1]);
    expect(v.news(undefined)).toEqual(new SharedTicket(0, 99));
  });

  it('turns only with company, a rank and the server clock (time-division.ts, memberTurns)', () => {
    const v = new FleetView(law);
    expect(v.turns()).toBeUndefined();
    v.hear(lease(), 1000, 1010);
    const turns = v.turns();
    expect(turns?.periodMs(0)).toBe(100);
    v.hear(lease({ members: 1 }), 1000, 1010);
    expect(v.turns()).toBeUndefined();
  });
});
