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
 * What it cannot remove is lateness: a timer that fires late, a busy event loop, the network. A
 * request sent δ ms after its slot comes δ ms closer to the next member's; the fleet's rate sits
 * `margin` below the limit, so a lateness up to about `margin × 1000 / R` costs nothing, and a
 * later one either loses its slot or costs the next member a refusal (see `sharedRate`).
 */

/** The first instant at or after `t` of the slots `phase + j · period` (any units, one clock). */
export function slotAtOrAfter(t: number, phase: number, period: number): number {
  const j = Math.ceil((t - phase) / period);
  const slot = phase + j * period;
  // Float rounding can put the slot a hair before t: then take the next one.
  return slot < t - period * 1e-9 ? slot + period : slot;
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
