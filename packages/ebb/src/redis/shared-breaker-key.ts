/**
 * One key of a shared breaker, in one member: its own calls over the window (two counts: one for
 * the fleet's current epoch, one for its local breaker's), the fleet's state as last heard, and
 * its local breaker — the same rule (breaker-law.ts) run on one member's evidence, in memory. The
 * local breaker is what the member follows when the fleet is closed (a member whose calls fail
 * while the fleet's succeed — partitioned — stops on its own) and when Redis cannot be reached.
 */
import {
  type FleetKey,
  type FleetRule,
  type FleetSeed,
  type KeyReply,
  type KeyReport,
  PROBE_OPS,
  type ProbeOp,
  seeded,
  stepKey,
} from './breaker-law.js';

/** Calls and failures over the last `windowMs`, in ten buckets. */
export class CallWindow {
  readonly #bucketMs: number;
  readonly #starts: number[] = [];
  readonly #calls: number[] = [];
  readonly #fails: number[] = [];

  constructor(windowMs: number) {
    this.#bucketMs = windowMs / 10;
  }

  #age(now: number): void {
    const from = now - 10 * this.#bucketMs;
    while (this.#starts.length > 0 && (this.#starts[0] as number) <= from) {
      this.#starts.shift();
      this.#calls.shift();
      this.#fails.shift();
    }
  }

  add(failed: boolean, now: number): void {
    this.#age(now);
    const start = Math.floor(now / this.#bucketMs) * this.#bucketMs;
    const last = this.#starts.length - 1;
    if (last < 0 || this.#starts[last] !== start) {
      this.#starts.push(start);
      this.#calls.push(0);
      this.#fails.push(0);
    }
    const i = this.#starts.length - 1;
    this.#calls[i] = (this.#calls[i] as number) + 1;
    if (failed) this.#fails[i] = (this.#fails[i] as number) + 1;
  }

  /** [calls, failures] as of `now`. */
  sums(now: number): [number, number] {
    this.#age(now);
    let c = 0;
    let f = 0;
    for (let i = 0; i < this.#calls.length; i++) {
      c += this.#calls[i] as number;
      f += this.#fails[i] as number;
    }
    return [c, f];
  }

  clear(): void {
    this.#starts.length = 0;
    this.#calls.length = 0;
    this.#fails.length = 0;
  }
}

/** Which breaker admitted a call. */
export type TicketKind = 'call' | 'fleet-probe' | 'local-probe';

/** One admitted call of a shared breaker: its key, what admitted it, and the epochs it belongs to. */
export class SharedTicket {
  done = false;
  constructor(
    readonly key: KeyState,
    readonly kind: TicketKind,
    readonly start: number,
    readonly fleetEpoch: number,
    readonly localEpoch: number,
    readonly leaseId: number,
  ) {}
}

/** The member's state of one key. */
export class KeyState {
  readonly name: string;
  readonly redisKeys: readonly string[];
  readonly fleetWindow: CallWindow;
  readonly localWindow: CallWindow;
  /** The fleet's state as last heard, and when (member clock, ms). */
  fleet: KeyReply | undefined;
  heardAt = 0;
  /** The local breaker: the rule on this member's evidence alone. */
  local: FleetKey;
  #localSeq = 0;
  #nextLease = 1;
  /** A probe result or a lease handed back, not yet known to have reached Redis (sent again until it has). */
  pending: { op: ProbeOp; leaseId: number } | undefined;
  /** A claim of the fleet's probe lease on its way. */
  claiming: Promise<unknown> | undefined;
  /** Not before this (member clock) does this member claim again. */
  nextClaimAt = Number.NEGATIVE_INFINITY;
  /**
   * The fleet's opening this member's failed probe caused: in its half-open state the member
   * leaves the probe to the others for a report period (a member partitioned from a healthy
   * service would otherwise fail every probe it wins, and keep the fleet open).
   */
  yieldAt = -1;
  /** When this member's local breaker opened on its own evidence (member clock), until it closes. */
  aloneSince: number | undefined;
  /**
   * Whether this member's own breaker had opened well before the fleet's did: it was failing
   * alone (a partition), so in each half-open state of this open run it leaves the probe to the
   * others for a report period. Cleared when the fleet closes.
   */
  suspect = false;
  /** When the fleet's open period ends (member clock): the half-open state's start, as first heard. */
  openUntil = 0;
  /** Fleet probes of this member running now. */
  fleetProbes = 0;
  /**
   * The lease of this member's last fleet probe, once that probe ended (its result sent, or the
   * lease handed back): Redis drops it with the first op that arrives, but a reply older than that
   * op still names it as the member's. It admits no second call.
   */
  spentLease = -1;
  /** Calls since the last report. */
  active = false;
  lastUsed = 0;

  constructor(name: string, redisKeys: readonly string[], windowMs: number, now: number) {
    this.name = name;
    this.redisKeys = redisKeys;
    this.fleetWindow = new CallWindow(windowMs);
    this.localWindow = new CallWindow(windowMs);
    this.local = { state: seeded({ s: 0, n: 0, remainingMs: 0, om: 0 }, 1, now), members: new Map() };
    this.lastUsed = now;
  }

  newLeaseId(): number {
    return this.#nextLease++;
  }

  /** The fleet's state now, by the member's clock: 0 closed, 1 open, 2 half-open; undefined when never heard. */
  fleetState(now: number): 0 | 1 | 2 | undefined {
    const f = this.fleet;
    if (!f) return undefined;
    if (f.state === 0) return 0;
    return now - this.heardAt >= f.remainingMs ? 2 : 1;
  }

  fleetRemainingMs(now: number): number {
    const f = this.fleet;
    return f && f.state !== 0 ? Math.max(0, f.remainingMs - (now - this.heardAt)) : 0;
  }

  /** Whether this member holds the fleet's probe lease now (by its own clock), unspent. */
  holdsLease(now: number): boolean {
    const f = this.fleet;
    return f !== undefined && f.lease >= 0 && f.lease !== this.spentLease && now - this.heardAt < f.leaseRemainingMs;
  }

  /** One step of the local breaker with this member's window, and a probe op; `longestMs` bounds its open state. */
  stepLocal(
    rule: FleetRule,
    periods: readonly number[],
    longestMs: number,
    now: number,
    op: ProbeOp,
    leaseId: number,
  ): KeyReply {
    const st = this.local.state;
    const [calls, failures] = this.localWindow.sums(now);
    const before = st.e;
    const report: KeyReport = {
      generation: st.g,
      epoch: st.e,
      calls,
      failures,
      op,
      leaseId,
      seed: { s: 0, n: 0, remainingMs: 0, om: 0 },
      periods,
      longestMs,
    };
    const r = stepKey(rule, this.local, 'self', ++this.#localSeq, report, now);
    if (r.epoch !== before) {
      this.localWindow.clear();
      if (r.state === 0) this.aloneSince = undefined;
      else this.aloneSince ??= now;
    }
    return r;
  }

  /** The local breaker follows the fleet: open as the fleet is (with what is left of its period), or closed. */
  mirror(seed: FleetSeed, now: number): void {
    const e = this.local.state.e;
    const k = this.local.state.k;
    this.local = { state: seeded(seed, 1, now), members: new Map() };
    this.local.state.e = e + 1;
    this.local.state.k = k + (seed.s === 0 ? 1 : 0);
    this.localWindow.clear();
    if (seed.s === 0) {
      this.aloneSince = undefined;
      this.suspect = false;
    }
  }

  /** What the member's local breaker says now, as a seed for a state Redis lost. */
  seed(now: number): FleetSeed {
    const st = this.local.state;
    if (st.s === 1) return { s: 1, n: st.n, remainingMs: Math.max(0, st.ou - now), om: st.om };
    return { s: 0, n: 0, remainingMs: 0, om: 0 };
  }

  /** The local breaker's state now: 0 closed, 1 open, 2 half-open. */
  localState(now: number): 0 | 1 | 2 {
    const st = this.local.state;
    if (st.s === 0) return 0;
    return now >= st.ou ? 2 : 1;
  }
}

export { PROBE_OPS };
