/**
 * The adaptive rate law as a pure step over one explicit state record: every function here takes
 * a state (and the law's parameters, the time `now` in ms, and for a cut what was measured) and
 * returns the next state, or the same object when nothing changes. No clock, timer or I/O: the
 * caller reads the time and measures. `adaptiveRate` (one process) runs it on its own state; the
 * fleet's Lua law in `ebb/redis` (redis/scripts.ts, `RATE_LAW`) is the same rules over the same
 * fields, with its constants written into the script text from {@link LAW} and checked against
 * these functions step by step (test/redis/rate-law-step.test.ts).
 *
 * docs/rate-control.md explains the rules and cites their sources; the doc comments of
 * rate/adaptive-rate.ts say why each one is as it is.
 */

/** The law's constants, in one table (the Lua law takes them from here too). */
export const LAW = {
  /**
   * Near the rate last throttled, a probe rises by `increase` × the rate up to this rate (r/s), and
   * by `increase` × this rate above it: the same absolute step for every controller, Chiu and
   * Jain's additive increase ("Analysis of the Increase and Decrease Algorithms for Congestion
   * Avoidance in Computer Networks", 1989), so that processes sharing one limit drift toward equal
   * shares. 5 gave Jain's index 0.955–0.994 for five processes sharing nginx's 50 r/s over 20 s;
   * over a minute their shares wander (docs/rate-control.md, "Independent processes over a
   * minute": what was tried).
   */
  additiveRate: 5,
  /**
   * The share of requests that failed probes may cost in 429s: after a probe fails, no rise goes
   * above the level it fell back to until the requests sent since (at the rate) pay for the
   * throttles it drew at this share.
   */
  probeBudget: 0.02,
  /**
   * A convex step (past the rate last throttled) is at most the largest step whose undoing cuts
   * less than a quarter of the rate: `(1 − margin) / (1 + step) ≥ convexKeep`.
   */
  convexKeep: 0.75,
  /** Relative tolerance of the comparisons of a rate with the rate last throttled or the gate. */
  tolerance: 1e-9,
  /** Successes the delivered rate must hold (over at least 1 s) to count as measured. */
  minDelivered: 10,
  /**
   * Requests of slack before a measured rate counts as "well below" the rate cut from: two
   * requests over the span measured (20 % of what a 5 r/s process is measured over, 4 % at 50 r/s).
   */
  slackRequests: 2,
  /**
   * An event that began with a relapse, a deep cut or a blind first cut lasts this many cool-offs;
   * so long, after a relapse, a throttle of a new round is charged to the failed probe.
   */
  longEvent: 2,
  /**
   * How far the rises of a controller that draws (see {@link lawParams}'s `probeSpread`) are spread:
   * each wait for a rise is lengthened by a fraction in [0, 1) of this many base cool-offs, drawn
   * afresh at every change of the rate. Independent processes sharing one limit are all throttled
   * by the same overshoot and all cut at once; without a draw they all probe again one cool-off
   * later, together, and the limit sees the sum of their steps. With one, the first to probe
   * finds out alone whether there is room, as Ethernet's randomized backoff spreads the
   * retransmissions of stations that collided (IEEE 802.3 §4.2.3.2.5; Metcalfe and Boggs,
   * "Ethernet: Distributed Packet Switching for Local Computer Networks", 1976).
   */
  probeSpread: 1,
  /**
   * The 429s a throttle at a rate that held is charged to the probe budget (see {@link lawParams}'s
   * `collisionCharge`): one, as the throttles of the controller's own failed probe are. Processes
   * sharing one limit are throttled by each other's probes; a process charged only for its own
   * finds its next probe paid for while the limit is still paying for another's, and five
   * processes spend five budgets. Charged for every throttle it receives, whoever's probe drew
   * it, each process probes above a rate that drew a 429 only once `probeBudget` of its own
   * requests have paid for it (measured, five processes sharing nginx's 50 r/s: 1.7–2.9 % 429s
   * with it, 2.5–3.9 % without; docs/rate-control.md).
   */
  collisionCharge: 1,
  /**
   * The base steps a throttle at a rate that held gives back (see {@link lawParams}'s
   * `collisionYield`): three. A throttle at a rate that held is only noted — it changes no rate — so
   * the level that processes sharing one limit have probed up to stays above it, and the limit
   * keeps refusing, until some process takes two throttles within one cool-off; the prober, one of
   * five, is rarely the one refused and judges its probe held. Each process refused gives back
   * what probes put on: the excess is taken off by whoever the limit refuses, as flows sharing a
   * queue each back off on their own losses (Chiu and Jain, 1989). Measured, five processes sharing
   * nginx's 50 r/s sat 1.5–2 r/s (three or four steps) above the limit between them; one step given
   * back left their 429s within the spread of runs without it, two took about a quarter off, and
   * three took them from 2.1–2.4 % to 1.8–1.9 % on the mean (20 alternating pairs)
   * (docs/rate-control.md).
   */
  collisionYield: 3,
} as const;

/** The modulus of the draw that spreads the rises ({@link nextSeed}): the Mersenne prime 2³¹ − 1. */
const MODULUS = 2 ** 31 - 1;

/**
 * The law's parameters, derived once from the controller's options ({@link lawParams}). Rates are
 * requests per second, durations ms.
 */
export interface LawParams {
  readonly decrease: number;
  readonly increase: number;
  /** The largest rise, `1 / decrease − 1`: one rise never outdoes one fall. */
  readonly maxStep: number;
  /** The largest step past the rate last throttled (see {@link lawParams}). */
  readonly convexStep: number;
  readonly coolOffMs: number;
  readonly maxCoolOffMs: number;
  /** Relapses after which the cool-off stops doubling: the smallest `n` with `coolOffMs · 2ⁿ ≥ maxCoolOffMs`. */
  readonly maxRelapses: number;
  readonly margin: number;
  readonly min: number;
  readonly max: number;
  /** How much each wait for a rise is spread, ms: a drawn fraction of it is added (0: none). */
  readonly spreadMs: number;
  /** The 429s charged for a throttle at a rate that held ([charge.collision]; 0: none). */
  readonly collisionCharge: number;
  /** The base steps a throttle at a rate that held, noted, gives back ([collision.yield]; 0: none). */
  readonly collisionYield: number;
}

/**
 * Derives the parameters from validated options. The convex step is twice the base step, or more —
 * up to the largest step whose undoing cuts less than a quarter of the rate (26.7 % with the
 * defaults) — never above `maxStep`: CUBIC's window grows ever faster past the old maximum (RFC 9438
 * §4.5) and BBR's ProbeBW_UP doubles its probe each round (draft-cardwell-iccrg-bbr-congestion-
 * control-02 §4.3.3.4).
 */
export function lawParams(o: {
  readonly decreaseFactor: number;
  readonly increase: number;
  readonly coolOffMs: number;
  readonly maxCoolOffMs: number;
  readonly margin: number;
  readonly minRatePerSecond: number;
  readonly maxRatePerSecond: number;
  /**
   * Base cool-offs over which the waits for a rise are spread ({@link LAW}.probeSpread for a
   * controller of its own; 0, the default, for one whose rate is the only one, as the fleet's).
   */
  readonly probeSpread?: number;
  /**
   * The 429s charged to the probe budget for a throttle at a rate that held ({@link LAW}.collisionCharge
   * for a controller of its own; 0, the default, for one whose rate is the only one, as the fleet's:
   * there every throttle after a rise is already the one controller's relapse).
   */
  readonly collisionCharge?: number;
  /**
   * The base steps a throttle at a rate that held gives back when it is noted
   * ({@link LAW}.collisionYield for a controller of its own; 0, the default, for one whose rate is
   * the only one, as the fleet's: there every throttle after a rise is the one controller's relapse).
   */
  readonly collisionYield?: number;
}): LawParams {
  const maxStep = 1 / o.decreaseFactor - 1;
  let maxRelapses = 0;
  // Counted as the Lua law counts it (no log2: the same integer on both sides, whatever the float).
  while (maxRelapses < 2000 && o.coolOffMs * 2 ** maxRelapses < o.maxCoolOffMs) maxRelapses++;
  return {
    decrease: o.decreaseFactor,
    increase: o.increase,
    maxStep,
    convexStep: Math.min(maxStep, Math.max(2 * o.increase, (1 - o.margin) / LAW.convexKeep - 1)),
    coolOffMs: o.coolOffMs,
    maxCoolOffMs: o.maxCoolOffMs,
    maxRelapses,
    margin: o.margin,
    min: o.minRatePerSecond,
    max: o.maxRatePerSecond,
    spreadMs: (o.probeSpread ?? 0) * o.coolOffMs,
    collisionCharge: o.collisionCharge ?? 0,
    collisionYield: o.collisionYield ?? 0,
  };
}

/**
 * The rules a controller whose rate is its own (`adaptiveRate`) adds to the fleet's parameters:
 * [spread], [charge.collision] and [collision.yield], at {@link LAW}'s values as read now.
 */
export function ownRules(): { probeSpread: number; collisionCharge: number; collisionYield: number } {
  return { probeSpread: LAW.probeSpread, collisionCharge: LAW.collisionCharge, collisionYield: LAW.collisionYield };
}

/**
 * The law's state. Infinity stands for "none" (an unlimited rate, no rate last throttled, no gate),
 * -Infinity for "never". The Lua law keeps the same fields under short names (`LAW_FIELDS` in redis/scripts.ts).
 */
export interface LawState {
  /** The rate, r/s; Infinity until the first throttle of an unlimited controller. */
  readonly rate: number;
  /** Bumped at every cut and every note: a grant's ticket is the epoch it was made in. */
  readonly epoch: number;
  /** When the rate last changed (or a throttle was noted), ms. */
  readonly changedAt: number;
  /** Whether that change was a rise (a throttle now is a relapse). */
  readonly rose: boolean;
  /** The rate before the last rise: a relapse never lands above it. */
  readonly before: number;
  /** Relapses that back the cool-off off, 0 to `maxRelapses`. */
  readonly relapses: number;
  /** The rate at the last throttle: a doubled step never crosses it (the base step does). */
  readonly throttledAt: number;
  /** Whether that is the rate of a probe that failed (a relapse). */
  readonly throttledProbe: boolean;
  /** The next rise, as a fraction of the rate. */
  readonly step: number;
  /** A success was recorded since the last change. */
  readonly evidence: boolean;
  /** A request was kept waiting by the rate since the last change. */
  readonly saturated: boolean;
  /** When the evidence for a rise was complete (Infinity: not yet). */
  readonly readyAt: number;
  /** When the rate was last cut. */
  readonly eventAt: number;
  /** Whether that cut's event lasts `LAW.longEvent` cool-offs. */
  readonly eventLong: boolean;
  /** Whether that cut was based on a measured delivered rate. */
  readonly informed: boolean;
  /** When a throttle was last noted without a cut. */
  readonly notedAt: number;
  /** When the throttles of the last failed probe are paid for at `LAW.probeBudget`. */
  readonly paidAt: number;
  /** Until when a throttle counts toward that cost. */
  readonly costUntil: number;
  /** What the last failed probe showed the service to take; no rise above it before `paidAt`. */
  readonly gateRate: number;
  /**
   * The state of the draw that spreads the waits for a rise, a whole number in [0, 2³¹ − 1):
   * advanced at every change of the rate when the parameters spread (`spreadMs` > 0), unchanged
   * otherwise. 0 stays 0: no spread.
   */
  readonly seed: number;
}

/**
 * The state of a controller that starts at `rate` at time `now`; `seed` (a whole number, taken
 * modulo 2³¹ − 1) starts its draws: give controllers that share a limit different seeds. 0, the
 * default, draws no spread.
 */
export function initialState(p: LawParams, rate: number, now: number, seed = 0): LawState {
  return {
    rate,
    epoch: 0,
    changedAt: now,
    rose: false,
    before: 0,
    relapses: 0,
    throttledAt: Infinity,
    throttledProbe: false,
    step: p.increase,
    evidence: false,
    saturated: false,
    readyAt: Infinity,
    eventAt: -Infinity,
    eventLong: false,
    informed: false,
    notedAt: -Infinity,
    paidAt: -Infinity,
    costUntil: -Infinity,
    gateRate: Infinity,
    seed: ((Math.trunc(seed) % MODULUS) + MODULUS) % MODULUS,
  };
}

/** What the meter saw when a throttle came, for a cut. */
export interface Measurement {
  /** Requests sent per second over the last second: where the first cut of an unlimited controller starts. */
  readonly sent: number;
  /** Successes per second lately: the rate the service accepted (negative: not measured). */
  readonly delivered: number;
  /** The successes that counts over at least a whole second (0 if the span is shorter). */
  readonly count: number;
  /** The span it was measured over, ms. */
  readonly spanMs: number;
  /** Whether a throttle came in at least half the 100-ms slots of that span. */
  readonly refused: boolean;
}

const coolOffAfter = (p: LawParams, relapses: number): number => Math.min(p.maxCoolOffMs, p.coolOffMs * 2 ** relapses);

/**
 * [convex] Whether `rate` is past the rate last throttled: by any amount past a failed probe's rate,
 * by a whole base step past any other cut's.
 */
export function convex(s: LawState, p: LawParams, rate: number): boolean {
  const at = s.throttledAt;
  if (s.throttledProbe) return rate > at * (1 + LAW.tolerance);
  return rate >= (at + p.increase * Math.min(at, LAW.additiveRate)) * (1 - LAW.tolerance);
}

/**
 * [wait] The quiet time before the next rise: one base cool-off in the convex region; after a rise,
 * half the backed-off cool-off (at least two base ones once relapsed); else the backed-off one.
 */
export function waitFor(s: LawState, p: LawParams, rate: number, rose: boolean, relapses: number): number {
  if (rose && convex(s, p, rate)) return p.coolOffMs;
  if (rose) return coolOffAfter(p, Math.max(Math.min(relapses, 1), relapses - 1));
  return coolOffAfter(p, relapses);
}

/**
 * [probe-at] When a rise to `next` may come: after the backed-off cool-off, or after the cool-off of
 * no relapse once the last failed probe is paid for; above the gate, never before it is.
 */
function probeAt(s: LawState, p: LawParams, next: number): number {
  const backedOff = s.changedAt + waitFor(s, p, s.rate, s.rose, s.relapses);
  const released = Math.max(s.changedAt + waitFor(s, p, s.rate, s.rose, 0), s.paidAt);
  const at = Math.min(backedOff, released) + spreadOf(s, p);
  return next > s.gateRate * (1 + LAW.tolerance) ? Math.max(at, s.paidAt) : at;
}

/** A rise, planned before it is applied. */
export interface Rise {
  readonly rate: number;
  readonly step: number;
  readonly relapses: number;
  /** When it fell due, ms. */
  readonly at: number;
}

/**
 * [rise] The rise due at `now`, if any, without applying it. `notBefore` is a bound from outside
 * the law (a server's pause and a cool-off after it); -Infinity for none.
 */
export function planRise(s: LawState, p: LawParams, now: number, notBefore = -Infinity): Rise | undefined {
  if (!s.evidence || !s.saturated || s.rate >= p.max) return undefined;
  let rate = s.rate;
  let step = s.step;
  let relapses = s.relapses;
  if (s.rose) {
    // [rise.held] The previous probe held: double the step, and relax the backoff only at or above
    // the rate last throttled.
    if (relapses > 0 && rate >= s.throttledAt * (1 - LAW.tolerance)) relapses--;
    step = Math.min(p.maxStep, step * 2);
  }
  const isConvex = convex(s, p, rate);
  // [rise.additive] Near the rate last throttled, a fraction of at most LAW.additiveRate.
  const below = s.throttledAt - rate;
  const scale = isConvex || below === Infinity ? rate : Math.min(rate, Math.max(LAW.additiveRate, below));
  if (isConvex) step = Math.min(step, p.convexStep);
  else if (rate + step * scale > s.throttledAt) step = p.increase;
  rate = Math.min(p.max, rate + step * scale);
  const at = Math.max(probeAt(s, p, rate), s.readyAt, notBefore);
  if (now < at) return undefined;
  return { rate, step, relapses, at };
}

/**
 * [spread] The next state of the draw: the "minimal standard" multiplicative generator, 48271 × seed
 * modulo 2³¹ − 1 (Park and Miller, "Random Number Generators: Good Ones Are Hard to Find", CACM
 * 1988, with the multiplier of Park, Miller and Stockmeyer's 1993 remark). Exact in doubles (the
 * product stays below 2⁴⁷); 0 is its fixed point: a seed of 0 never draws a spread.
 */
export function nextSeed(seed: number): number {
  return (seed * 48271) % MODULUS;
}

/**
 * [spread] The time this state's draw adds to its wait for a rise, ms, in [0, `spreadMs`) — none
 * while the last throttle was this controller's own failed probe: that one already backs off (the
 * cool-off doubles), and the others sharing the limit, throttled by a probe not theirs, are the
 * ones that would all probe together. A process alone with its limit mostly sees its own probes
 * fail, so it pays the spread seldom.
 */
export function spreadOf(s: LawState, p: LawParams): number {
  return s.throttledProbe ? 0 : (p.spreadMs * s.seed) / MODULUS;
}

/**
 * [change] A change of the rate at `at`: the evidence for the next rise starts over, and the wait
 * for it takes a new draw (none if the parameters do not spread).
 */
function change(s: LawState, p: LawParams, at: number, rose: boolean): LawState {
  const seed = p.spreadMs === 0 ? s.seed : nextSeed(s.seed);
  return { ...s, changedAt: at, rose, evidence: false, saturated: false, readyAt: Infinity, seed };
}

/**
 * Applies the rise due at `now`, if any (see {@link planRise}); the same state if none. [rise.late]
 * The wait for the next rise counts from when this one fell due, not from when something happened
 * to apply it — unless that was more than a base cool-off ago: then the law heard nothing for that
 * long (a stalled store, a blocked event loop), nothing has yet run at the new rate, and it counts
 * from now. Counted from the past, the evidence that arrives with the news — sent at the old rate —
 * would make the next rise due at once, and a fleet back from a 5-s stall of its store rose two
 * or three times in 100 ms, to 2.7–4× its limit.
 */
export function rise(s: LawState, p: LawParams, now: number, notBefore = -Infinity): LawState {
  const plan = planRise(s, p, now, notBefore);
  if (!plan) return s;
  const at = now - plan.at > p.coolOffMs ? now : plan.at;
  return change({ ...s, before: s.rate, rate: plan.rate, step: plan.step, relapses: plan.relapses }, p, at, true);
}

/** [evidence] A success since the last change. */
export function succeeded(s: LawState, now: number): LawState {
  if (s.evidence) return s;
  return { ...s, evidence: true, readyAt: s.saturated ? now : s.readyAt };
}

/** [saturation] A request kept waiting by the law's own rate since the last change. */
export function waited(s: LawState, now: number): LawState {
  if (s.saturated) return s;
  return { ...s, saturated: true, readyAt: s.evidence ? now : s.readyAt };
}

/**
 * [charge] Charges a throttle to the last failed probe: a relapse starts a new charge, and each
 * throttle of a new round within two cool-offs of it adds one, paid for by `1 / LAW.probeBudget`
 * requests at the rate.
 */
export function charge(s: LawState, p: LawParams, now: number, relapse: boolean): LawState {
  let paidAt = s.paidAt;
  let costUntil = s.costUntil;
  if (relapse) {
    paidAt = now;
    costUntil = now + LAW.longEvent * p.coolOffMs;
  } else if (now >= costUntil) return s;
  return { ...s, paidAt: paidAt + 1000 / (LAW.probeBudget * s.rate), costUntil };
}

/** [note] A throttle that changes no rate: still one per round, and no rise for a cool-off. */
function note(s: LawState, p: LawParams, now: number): LawState {
  return { ...change(s, p, now, false), notedAt: now, epoch: s.epoch + 1 };
}

/**
 * [charge.collision] A throttle at a rate that held — no rise since the last change, and not within
 * the charge of the controller's own failed probe — charged to the probe budget as that probe's
 * throttles are: `collisionCharge` 429s more to pay for at `LAW.probeBudget` of the requests at the
 * rate (`s`, the state after the throttle), and no rise above `held`, the rate throttled, before
 * they are. Another process's probe drew it, or the controller's own earlier rises filling a
 * limiter's burst; either way a rise above that rate is a probe of a limit already full.
 */
export function collide(s: LawState, p: LawParams, now: number, held: number): LawState {
  const owing = s.paidAt > now;
  return {
    ...s,
    paidAt: Math.max(s.paidAt, now) + (1000 * p.collisionCharge) / (LAW.probeBudget * s.rate),
    gateRate: owing ? Math.min(s.gateRate, held) : held,
  };
}

/**
 * [collision.yield] The rate a throttle at `held`, a rate that held, gives back to when it is noted
 * (outside the charge of the controller's own failed probe): `collisionYield` base steps below it —
 * a base step being the additive rise of [rise.additive], `increase` × the rate up to
 * `LAW.additiveRate` (0.5 r/s above 5 r/s with the defaults) — never below `min`. With the
 * collision's charge ([charge.collision]) the gate is that rate: no rise above it before the 429 is
 * paid for, so that the steps given back are not taken again a cool-off later.
 */
export function yieldOf(p: LawParams, held: number): number {
  return Math.max(p.min, held - p.collisionYield * p.increase * Math.min(held, LAW.additiveRate));
}

/**
 * Whether a throttle at `now` undoes a rise (a relapse, [fall.relapse]): the rate rose at its last
 * change, or a rise falls due now, which {@link throttled} applies before it judges the throttle.
 */
export function relapsing(s: LawState, p: LawParams, now: number, notBefore = -Infinity): boolean {
  const due = rise(s, p, now, notBefore);
  return due.rate !== Infinity && due.rose;
}

/**
 * [fall] A throttle of a request sent at the current rate (one per round). The branches, in order:
 * [fall.first] the first cut of an unlimited controller; [fall.relapse] right after a rise;
 * [fall.event] within the event of the last cut — noted, or a blind cut corrected by the delivered
 * rate now measured; [fall.changed] the service delivering well below the rate; [fall.held] about
 * at it — noted, or after a cool-off of throttles cut by the margin; [fall.blind] nothing measured.
 */
export function fall(s: LawState, p: LawParams, now: number, m: Measurement): LawState {
  const first = s.rate === Infinity;
  const from = first ? Math.max(m.sent, p.min) : s.rate;
  const delivered = m.delivered;
  const known = delivered >= 0 && m.count >= LAW.minDelivered;
  const limit = known ? Math.min(from, delivered) : from;
  const floor = known && s.saturated ? p.min : from * p.decrease;
  const coolOff = p.coolOffMs;
  const eventMs = s.eventLong ? LAW.longEvent * coolOff : coolOff;
  const mg = p.margin;
  // [charge.collision] Whether this throttle, if it keeps or trims a rate that held (the branches
  // below a relapse: no rise since the last change), is charged: not within a failed probe's charge.
  const collided = p.collisionCharge > 0 && now >= s.costUntil;
  // [collision.yield] Whether such a throttle, if noted, gives back base steps: under the same
  // condition, with or without the charge.
  const yielding = p.collisionYield > 0 && now >= s.costUntil;
  const noted = (): LawState => {
    if (!collided && !yielding) return note(s, p, now);
    // [collision.yield] The note gives back what probes took; charged, the gate is where it lands.
    const to = yieldOf(p, from);
    const next = { ...note(s, p, now), rate: to };
    return collided ? collide(next, p, now, to) : next;
  };
  let rate: number;
  let relapse = false;
  let failedConvex = false;
  let trimmed = false;
  let relapses = s.relapses;
  let at = from;
  // [fall.first]
  if (first) rate = known ? Math.max(floor, limit * (1 - mg)) : floor;
  else if (s.rose) {
    relapse = true;
    failedConvex = convex(s, p, s.before);
    // [fall.relapse] Back just under the rate before the rise; after a convex probe, at
    // (1 − margin) × what the service delivered if that is higher.
    const back = Math.min(s.before, Math.max(s.before * (1 - mg), limit * (1 - mg)));
    rate = failedConvex ? Math.max(back, limit * (1 - mg)) : back;
    if (relapses < p.maxRelapses) relapses++;
  } else if (now - s.eventAt < eventMs) {
    // [fall.event] A note; charged as a collision only in the event of a cut that was itself
    // charged: a cut that voided every charge answered the service, and its event's throttles
    // are the service's (rule 2), not another's probe.
    if (s.informed || !known || delivered * (1 - mg) === from)
      return s.paidAt === -Infinity ? note(s, p, now) : noted();
    // [fall.event.blind] The delivered rate, now measured, corrects a blind cut, bounded by
    // decreaseFactor unless the service refused throughout the span measured.
    rate = Math.max(m.refused ? p.min : from * p.decrease, delivered * (1 - mg));
    at = Math.max(delivered, rate);
  } else if (known && limit + (LAW.slackRequests * 1000) / m.spanMs < from * (1 - 2 * mg)) {
    // [fall.changed] Well below: short by more than 2 × margin and by more than the slack.
    rate = Math.max(floor, limit * (1 - mg));
    relapses = 0;
  } else if (known) {
    // [fall.held]
    if (now - s.notedAt >= coolOff) return noted();
    rate = Math.max(floor, limit * (1 - mg));
    trimmed = true;
  } else rate = floor; // [fall.blind]
  const newRate = Math.min(p.max, Math.max(p.min, rate));
  const deep = newRate < from * p.decrease;
  let next: LawState = {
    ...s,
    rate: newRate,
    relapses,
    informed: known,
    eventAt: now,
    eventLong: relapse || deep || (first && !known),
  };
  if (relapse) next = charge({ ...next, gateRate: limit * (1 - mg) }, p, now, true);
  // [charge.collision] A rate that held, trimmed by the margin: the service did not change.
  else if (trimmed && collided) next = collide({ ...next, costUntil: -Infinity }, p, now, from);
  // Any other cut answers the service, not the probe: what the probe was charged is void.
  else next = { ...next, paidAt: -Infinity, costUntil: -Infinity };
  next = failedConvex
    ? { ...next, throttledAt: Math.max(s.before, limit), throttledProbe: false }
    : { ...next, throttledAt: at, throttledProbe: relapse };
  return { ...change({ ...next, step: p.increase }, p, now, false), epoch: s.epoch + 1 };
}

/**
 * [throttle] A throttle of a request sent at the current rate, its steps in the one order that
 * holds: [rise] the rise due at `now` first (a rise that fell due before the verdict came is part
 * of the history the verdict judges), then [charge] the throttle to the last failed probe, then
 * [fall] (which charges a throttle at a rate that held, [charge.collision], when the parameters
 * do). Charged before the rise, the throttle would move the payment of the failed probe past
 * `now` and put off a rise that was already due; judged before it, a throttle that undoes a due
 * rise would be taken for a collision. `notBefore` is {@link rise}'s.
 */
export function throttled(s: LawState, p: LawParams, now: number, m: Measurement, notBefore = -Infinity): LawState {
  return fall(charge(rise(s, p, now, notBefore), p, now, false), p, now, m);
}
