// A sharedRate member's pace at its share: 1000 / share ms apart alone (a late wake-up made up for
// within rate/pacing.ts's bound), a spacing's worth with company but no turns yet, in its own turns
// once it has them, unpaced when unlimited, a lease's wait on a share of 0.
import { describe, expect, it } from 'vitest';
import { lawOptions } from '../rate/law-options.js';
import type { Lease } from './rate-lease.js';
import { FleetView } from './rate-view.js';
import { SharePacer } from './share-pacer.js';

const law = lawOptions('test', { initialRatePerSecond: 20 });

/** A view with `share` requests a second among `members`, with no time division heard. */
function viewOf(share: number, members: number): FleetView {
  const v = new FleetView(law);
  v.share = share;
  v.members = members;
  return v;
}

describe('SharePacer', () => {
  it('alone at 10 r/s: 100 ms apart; a wake-up 3 ms late keeps its slot, 15 ms late starts a new one (margin 0.05: 5 ms)', () => {
    const p = new SharePacer(viewOf(10, 1), law.margin, 500);
    expect(p.waitMs(0)).toBe(Number.NEGATIVE_INFINITY); // the first request goes at once
    p.grant(0, false);
    expect(p.waitMs(50)).toBe(50);
    p.grant(100, true);
    p.grant(203, true); // due at 200: made up for
    expect(p.waitMs(300)).toBe(0);
    p.grant(315, true); // due at 300: too late, the pace restarts
    expect(p.waitMs(315)).toBe(100);
  });

  it('with company but no turns yet: a wake-up up to one spacing late keeps its slot', () => {
    const p = new SharePacer(viewOf(10, 3), law.margin, 500);
    p.grant(100, false);
    p.grant(250, true); // due at 200, 50 ms late: within 100
    expect(p.waitMs(250)).toBe(50);
  });

  it('unlimited: no wait and no pace; a share of 0: a lease', () => {
    const free = new SharePacer(viewOf(Number.POSITIVE_INFINITY, 1), law.margin, 500);
    free.grant(0, false);
    expect(free.waitMs(0)).toBe(0);
    expect(new SharePacer(viewOf(0, 2), law.margin, 500).waitMs(0)).toBe(500);
  });

  it('a larger share heard pulls in the slot the smaller one set (one new interval on); a smaller one leaves it', () => {
    const v = viewOf(1, 1);
    const p = new SharePacer(v, law.margin, 500);
    p.grant(0, false); // next at 1000
    v.share = 50;
    p.heard(10);
    expect(p.waitMs(10)).toBe(20);
    v.share = 0.5;
    p.heard(20);
    expect(p.waitMs(20)).toBe(10);
  });

  it('in turns: rank 1 of 4 at 40 r/s goes 25 ms past each 100 ms of the server clock', () => {
    const v = new FleetView(law);
    const lease: Lease = {
      share: 10,
      fleet: 40,
      epoch: 0,
      short: false,
      members: 4,
      generation: 1,
      rank: 1,
      serverMs: 0, // sent and answered at 0: the server clock is this one
      throttledAt: -1,
      grids: { before: { rate: 40, members: 4 }, after: { rate: 40, members: 4 }, fromMs: 0 },
      fault: undefined,
    };
    v.hear(lease, 0, 0);
    const p = new SharePacer(v, law.margin, 500);
    expect(p.waitMs(0)).toBe(25);
    p.grant(25, true);
    expect(p.waitMs(30)).toBe(95);
    p.grant(125, true);
    expect(p.waitMs(130)).toBe(95);
  });
});
