/**
 * Time division for a shared rate: the members of a fleet send in turn, so that the limiter sees
 * the fleet's requests spaced as one client's would be.
 *
 * A limiter without burst (nginx `limit_req` without `burst`: a request is refused unless
 * `1 / rate` has passed since the last one it accepted — ngx_http_limit_req_module.c,
 * `ngx_http_limit_req_lookup`) refuses a request of one member that comes too soon after
 * another's, however well each member paces alone: independent pacers at `R / n` each meet at
 * random instants, and members that started together meet at every turn. Slotted channels solve
 * the same problem by giving each station its own slots of one clock (TDMA; slotted ALOHA,
 * Roberts 1975). Here the clock is the Redis server's (`TIME`, returned with every lease), each
 * member's slot is its rank in the fleet's join order, and a member of rank k whose share is s
 * sends at the instants `k · 1000 / R + j · 1000 / s` (ms, server clock, j whole) of the fleet's
 * rate R: with n members of equal shares (`s = R / n`), the fleet's requests come exactly
 * `1000 / R` apart. Each member places the slots on its own clock with the offset measured on its
 * leases ({@link ServerClock}).
 *
 * The grid — the fleet's rate R and the number of members n — changes when the rate or the
 * members do. Each member hears a change at its next renewal, up to a lease later; members pacing
 * by different grids meet as independent pacers would. So a new grid holds from one lease after
 * the change (`fromMs`, server clock), and the one before it until then: every member turns to the
 * new grid at one instant. A member paces at its share, each request in the turn nearest its
 * time at that pace (a share below the grid's equal part skips a turn now and then); a share above
 * it (other members take less) cannot be paced in turns, and the member paces at its share alone.
 *
 * What it cannot remove is lateness: a timer that fires late, a busy event loop, the network. A
 * request sent δ ms after its turn comes δ ms closer to the next member's. A turn is taken up to
 * half the fleet's spacing late (`500 / R` ms) and skipped beyond: within that, the request is
 * still nearer its own turn than the next one, and a limiter with a burst loses nothing to it; a
 * limiter without burst refuses the next member's request when δ passes the slack the fleet's
 * rate leaves below the limit (`1000 / R − 1000 / limit`), and the control law answers those 429s
 * by keeping that much slack. Skipping every turn later than `margin × 1000 / R` instead (1 ms at
 * 50 r/s) lost the rate itself: measured against nginx 50 r/s with burst 5, a fleet of five
 * accepted 68.5 % of the limit and never converged, against 98.3 % with half a spacing.
 */

/** The first instant at or after `t` of the slots `phase + j · period` (any units, one clock). */
export function slotAtOrAfter(t: number, phase: number, period: number): number {
  const j = Math.ceil((t - phase) / period);
  const slot = phase + j * period;
  // Float rounding can put the slot a hair before t: then take the next one.
  return slot < t - period * 1e-9 ? slot + period : slot;
}

/** The fleet's rate (requests per second; 1e300 for unlimited) and the members that divide it. */
export interface Grid {
  readonly rate: number;
  readonly members: number;
}

/** The grid before a change, the grid after it, and when the second holds from (ms, server clock). */
export interface Grids {
  readonly before: Grid;
  readonly after: Grid;
  readonly fromMs: number;
}

/** A member's turns on its own clock. */
export interface Turns {
  /** The first turn at or after `t`; `t` itself when no grid holds then (the member paces at its share alone). */
  next(t: number): number;
  /** How late a turn at about `t` may still be taken: half the grid's spacing; 0 without a grid. */
  lateMs(t: number): number;
  /** The time between the member's turns at `t` (its members × the grid's spacing); 0 without a grid. */
  periodMs(t: number): number;
}

/**
 * The turns of the member of `rank` (0-based, its place in the join order) with `share` requests a
 * second, on a clock `offsetMs` behind the server's (`server = local + offset`); undefined when
 * neither grid can be paced in turns. A grid cannot when the member is not in it, when it is
 * unlimited or has one member, or — the grid after a change — when the member's share is above
 * its equal part (other members take less: turns would hold it back). Before the change the
 * member takes its turns of the old grid whatever its new share: a rise reaches every member at
 * the same instant.
 */
export function turnsOf(grids: Grids, rank: number, share: number, offsetMs: number): Turns | undefined {
  const lattice = (g: Grid, capped: boolean) => {
    if (!(g.rate < 1e300 && g.members >= 2 && rank < g.members)) return undefined;
    if (!capped && share > (g.rate / g.members) * (1 + 1e-2)) return undefined;
    return {
      phase: (rank * 1000) / g.rate - offsetMs,
      period: (g.members * 1000) / g.rate,
      late: 500 / g.rate,
    };
  };
  const before = lattice(grids.before, true);
  const after = lattice(grids.after, false);
  if (!before && !after) return undefined;
  const from = grids.fromMs - offsetMs;
  const at = (t: number) => (t < from ? before : after);
  return {
    next(t: number): number {
      if (t < from) {
        const x = before ? slotAtOrAfter(t, before.phase, before.period) : t;
        if (x < from) return x;
        return after ? slotAtOrAfter(from, after.phase, after.period) : Math.max(t, from);
      }
      return after ? slotAtOrAfter(t, after.phase, after.period) : t;
    },
    lateMs: (t: number) => at(t)?.late ?? 0,
    periodMs: (t: number) => at(t)?.period ?? 0,
  };
}

/** How many recent samples the offset is chosen from (at 2 leases a second, the last 8 s). */
const SAMPLES = 16;

/**
 * The offset from a process's clock to the Redis server's (`server = local + offset`), estimated
 * from the leases: each answer carries the server's clock when the script ran, somewhere between
 * the call's send and its answer, so `server − (sent + received) / 2` is the offset within half
 * the round trip. The sample of the shortest round trip among the last {@link SAMPLES} is kept
 * (as NTP's clock filter prefers the sample of least delay, RFC 5905 §10): a round trip stretched
 * by a busy event loop says little.
 */
export class ServerClock {
  readonly #rtts: number[] = [];
  readonly #offsets: number[] = [];

  /** One lease: sent and received on the local clock, `serverMs` as answered. Non-finite values are ignored. */
  add(sentMs: number, serverMs: number, receivedMs: number): void {
    const rtt = receivedMs - sentMs;
    if (!(rtt >= 0) || !Number.isFinite(rtt) || !Number.isFinite(serverMs)) return;
    this.#rtts.push(rtt);
    this.#offsets.push(serverMs - (sentMs + receivedMs) / 2);
    if (this.#rtts.length > SAMPLES) {
      this.#rtts.shift();
      this.#offsets.shift();
    }
  }

  /** The best estimate of `server − local` in ms, or undefined before the first sample. */
  get offset(): number | undefined {
    let best = -1;
    for (let i = 0; i < this.#rtts.length; i++) {
      if (best < 0 || (this.#rtts[i] as number) < (this.#rtts[best] as number)) best = i;
    }
    return best < 0 ? undefined : this.#offsets[best];
  }

  /** The round trip of the sample the offset comes from: the offset's error is at most half of it. */
  get uncertaintyMs(): number | undefined {
    return this.#rtts.length === 0 ? undefined : Math.min(...this.#rtts) / 2;
  }
}

/**
 * A member's turns in the fleet's time division, on its own clock, while it paces with company
 * at an equal part of the grid's rate and knows the server's clock: undefined otherwise (then it
 * paces at its share alone).
 */
export function memberTurns(
  members: number,
  rank: number,
  offset: number | undefined,
  grids: Grids | undefined,
  share: number,
): Turns | undefined {
  if (members <= 1 || rank < 0 || offset === undefined || grids === undefined) return undefined;
  if (!(share > 0 && Number.isFinite(share))) return undefined;
  return turnsOf(grids, rank, share, offset);
}

/**
 * The turn a request may go in: the one nearest the time its share's pace gives (`next`), and not
 * one that passed more than the grid's lateness allowance ago.
 */
export function turnNear(turns: Turns, next: number, now: number): number {
  const due = next - turns.periodMs(next) / 2;
  return turns.next(Math.max(due, now - turns.lateMs(now)));
}
