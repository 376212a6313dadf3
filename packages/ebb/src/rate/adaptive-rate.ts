import { readNow } from '../core/boundary.js';
import { type Clock, clockOption } from '../core/clock.js';
import { parseRateLimit } from '../core/rate-limit-field.js';
import { checkKeys, invalid, nonNegative, optionsObject, show } from '../core/validate.js';
import type { AttemptContext } from '../retry/contexts.js';
import type { Mechanism } from '../retry/mechanism.js';
import type { IsFailure, Outcome } from '../retry/options.js';
import { type AdaptiveRateController, controllerMechanism, isFailureOption } from './controller.js';
import { Gate } from './gate.js';

/** Options of {@link adaptiveRate}. Rates are requests per second; durations milliseconds. */
export interface AdaptiveRateOptions<T = unknown> {
  /**
   * The rate to start at. Default `maxRatePerSecond`, itself `Infinity` by default: no limit
   * until the first throttle, which then starts from the rate measured over the last second.
   */
  readonly initialRatePerSecond?: number;
  /** The rate is multiplied by this on a throttle, in (0, 1). Default 0.5. */
  readonly decreaseFactor?: number;
  /**
   * The quiet time — no throttle, some successes, and requests kept waiting by the limit — after
   * which the rate rises one step. It doubles after each relapse (a throttle that follows a
   * rise), up to `maxCoolOffMs`, and halves after each rise that holds at or above the rate
   * last throttled (a rise that holds below it leaves it backed off) — until the relapse's 429s
   * are paid for by 2 % of the requests sent since: then the backoff is released, and no rise
   * above the level a relapse fell back to comes before. Default 1000.
   */
  readonly coolOffMs?: number;
  /**
   * The longest cool-off, however many relapses. Default 8000 (three doublings of 1 s). Probes
   * above a limit that has not moved are spaced by what they cost (2 % of the requests in 429s),
   * not by this: the backoff is released once the last failed probe is paid for.
   */
  readonly maxCoolOffMs?: number;
  /**
   * How far below the limit it has learned the controller settles, as a fraction: after a
   * throttle it paces at `(1 − margin)` × the rate the service actually accepted. Room for timer
   * jitter and for a limiter without burst. In [0, 0.5). Default 0.05.
   */
  readonly margin?: number;
  /**
   * The first rise after a fall, as a fraction of the rate: 0.1 adds 10 % — near the rate last
   * throttled, of the rate up to 5 r/s only: above that, every controller probes by the same
   * `increase` × 5 r/s (0.5 r/s by default), so that independent processes sharing a limit
   * converge to equal shares. Each rise that holds doubles the next step, up to
   * `1 / decreaseFactor − 1`, but a doubled step never passes the rate last throttled; once a
   * probe has held past it (any amount past a probe's rate that failed, a whole step past the
   * rate of any other cut), steps of the rate double again up to `2 × increase`, or up to
   * `(1 − margin) / 0.75 − 1` if larger (26.7 % by default: the largest step whose undoing cuts
   * less than a quarter). Must rise less than a decrease falls:
   * `(1 + increase) · decreaseFactor < 1`. Default 0.1.
   */
  readonly increase?: number;
  /** The rate never falls below this. Default 1. */
  readonly minRatePerSecond?: number;
  /** The rate never rises above this. Default `Infinity`. */
  readonly maxRatePerSecond?: number;
  /**
   * Names of the priority classes, most important first. A request of a class goes before any
   * waiting request of a later class; within a class, first come, first served. Default
   * `['high', 'normal', 'low']`.
   */
  readonly priorities?: readonly string[];
  /** The class of requests made through the controller itself (not a `priority()` view). Default `'normal'`. */
  readonly defaultPriority?: string;
  /**
   * The longest the server's word holds the controller, in ms: a `Retry-After` (or an exhausted
   * `RateLimit` policy) pauses every request of the controller for at most this long, and a
   * `RateLimit` pace lasts at most this long after the response that gave it. Default 60000.
   * 0 ignores what servers say. (The executor's option of the same name gives up past it; the
   * controller cuts the pause to it.)
   */
  readonly maxRetryAfterMs?: number;
  /**
   * The same as `maxRetryAfterMs`, by its former name (`ebb/redis`'s `sharedRate` passes it on):
   * give one of the two.
   * @deprecated Use `maxRetryAfterMs`.
   */
  readonly maxServerWaitMs?: number;
  /**
   * Which outcomes of the calls it runs in a pipeline are throttles — the same predicate as
   * `retry()`'s, asked about each outcome (`{ ok: false, error }` or `{ ok: true, value }`):
   * `'throttled'` cuts the rate; `false` on a value is a success; anything else a failure (which
   * moves nothing but is read for a `Retry-After`). Default `defaultIsFailure`: an error with
   * `throttled: true` (`ebb/http` sets it on a 429) is a throttle. Say what your client returns:
   * `isFailure: (o) => (o.ok && o.value.status === 429 ? 'throttled' : defaultIsFailure(o))`.
   * `record()` (`withRetry()`'s `use`) takes the outcome it is given.
   */
  readonly isFailure?: IsFailure<T>;
  /** Time source; default the system clock. */
  readonly clock?: Clock;
}

/** The controller {@link adaptiveRate} returns: a pipeline mechanism, and a guard for `withRetry()`'s `use`. */
export interface AdaptiveRate extends AdaptiveRateController, Mechanism {
  /**
   * The same controller seen by one priority class: put it in a pipeline (or pass it as
   * `withRetry()`'s `use`) to give its calls that class. Throws a `TypeError` for a name not in `priorities`.
   */
  priority(name: string): AdaptiveRateController & Mechanism;
  /**
   * The cool-off that the next rise waits for, in ms, as backed off by relapses — or `coolOffMs`
   * once the 429s of the last failed probe are paid for (2 % of the requests sent since). A rise
   * above the level that probe fell back to also waits until they are.
   */
  readonly currentCoolOffMs: number;
  /** Requests waiting for their turn, over every class. */
  readonly waiting: number;
  /** Milliseconds until the pause a server asked for (`Retry-After`) ends; 0 when none holds. */
  readonly pausedForMs: number;
}

/**
 * Timer lateness the pacer makes up for: when its wake-up comes late, the requests whose slots
 * fell due in the last 25 ms all go, so a late timer does not lower the rate — at rates where
 * requests are closer than this; at lower rates, less (see `#catchUpMs`).
 */
const CATCH_UP_MS = 25;

/** The delivered rate is counted in 100-ms slots over at most 3 s. */
const SLOT_MS = 100;
const SLOTS = 30;
/**
 * It spans at least 1 s, and more (up to 3 s) until it holds this many successes: at 10 r/s,
 * one second is enough to measure (with 20, a limit of 10 r/s stayed unmeasured for 2 s after a
 * cold start, and each second of it cut the rate blind, by half).
 */
const MIN_DELIVERED = 10;

/**
 * Near the rate last throttled, a probe rises by `increase` × the rate up to this rate (r/s), and
 * by `increase` × this rate above it: the same absolute step for every controller, Chiu and Jain's
 * additive increase ("Analysis of the Increase and Decrease Algorithms for Congestion Avoidance
 * in Computer Networks", 1989: additive increase with multiplicative decrease converges to
 * fairness, multiplicative increase keeps the ratio of two rates). 5, not 10: against one nginx
 * limit of 50 r/s shared by five processes (shares of 10 r/s), 5 gave Jain's index 0.955–0.994
 * in five runs; the law before, 0.875–0.981 in eight.
 */
const ADDITIVE_RATE = 5;

/**
 * The share of requests that failed probes may cost in 429s: after a probe fails, no rise goes
 * above the level it fell back to until the requests sent since (at the rate: a rise needs
 * requests kept waiting) pay for the throttles it drew at this share (see `#probeAt`). 2 %, issue
 * 16's target: at 1 %, 429s at 10 r/s fell to 0–0.74 % (nginx, no burst) and 1.3–2.0 % (HAProxy)
 * but a limit that doubled from 25 r/s was found no sooner (8 and 9 s, once not within 12 s);
 * at 2 %, 1.5 % and 1.5–2.2 %, and 6–7 s (the relapse backoff alone: 1.5–2.2 %, 1.4–2.1 %, 9 s).
 */
const PROBE_BUDGET = 0.02;

/** What a server said in one answer: a pause (ms), and a pace (r/s) with how long it holds (ms). */
interface ServerHint {
  pauseMs: number;
  paceRate: number;
  paceMs: number;
}

/**
 * The `RateLimit` field of a `Response`-like value, if its `headers` is a real `Headers` (whose
 * `get` runs no code of the caller's); a getter that throws, or anything else, counts as none.
 */
function rateLimitField(response: unknown): string | null {
  if (typeof Headers !== 'function' || typeof response !== 'object' || response === null) return null;
  let headers: unknown;
  try {
    headers = (response as { headers?: unknown }).headers;
  } catch /* Stryker disable next-line BlockStatement: an empty catch returns undefined, which the caller reads as no field too */ {
    return null; // not a response: a value of the caller's, never a reason to fail its operation
  }
  return headers instanceof Headers ? headers.get('ratelimit') : null;
}

/** A property of an error the caller made, read without letting a throwing getter escape. */
function property(value: unknown, key: string): unknown {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch /* Stryker disable next-line BlockStatement: an empty catch returns undefined too */ {
    return undefined;
  }
}

/**
 * Reads a server's hint from what an attempt ended with (see `record`). A failure's
 * `retryAfterMs` (set by `ebb/http` from `Retry-After`, RFC 9110 §10.2.3, or an exhausted
 * `RateLimit` policy's `t`) is a pause; NaN, negative, infinite and non-number values are
 * ignored, longer ones cut to `maxMs`. The `RateLimit` field of draft-ietf-httpapi-ratelimit-
 * headers (revisions 08 to 11, §4.1: `r` the quota left, `t` the seconds within which "the client
 * can use no more than" it) of the response — the value on success, `error.response` on failure —
 * gives a pace of `r / t` for `t` seconds (the most restrictive policy; `r = 0` is a pause of `t`
 * unless a `Retry-After` was given, which "MUST take precedence", draft §7). A policy without `t`
 * says nothing about time and is skipped; a malformed field is ignored whole (draft §7).
 */
function serverHint(outcome: Outcome, detail: unknown, maxMs: number): ServerHint | undefined {
  let retryAfter: number | undefined;
  let response: unknown = detail;
  if (outcome !== 'success') {
    const ms = property(detail, 'retryAfterMs');
    if (typeof ms === 'number' && ms >= 0 && ms < Infinity) retryAfter = ms;
    response = property(detail, 'response');
  }
  const items = parseRateLimit(rateLimitField(response));
  if (retryAfter === undefined && items === undefined) return undefined;
  const hint: ServerHint = { pauseMs: Math.min(retryAfter ?? 0, maxMs), paceRate: Infinity, paceMs: 0 };
  // Stryker disable next-line ArrayDeclaration: without a field there is no item with a window; a stray item is skipped like one without t
  for (const item of items ?? []) {
    const t = item.windowSeconds;
    if (t === undefined || t === 0) continue;
    const ms = Math.min(t * 1000, maxMs);
    if (item.remaining === 0) {
      if (retryAfter === undefined) hint.pauseMs = Math.max(hint.pauseMs, ms);
    } else if (item.remaining / t < hint.paceRate) {
      hint.paceRate = item.remaining / t;
      hint.paceMs = ms;
    }
  }
  return hint;
}

type Change = 'none' | 'decrease' | 'increase';

/**
 * The largest convex step (past the rate last throttled), as a fraction of the rate: twice the
 * base step, or more — up to the largest step whose undoing cuts less than a quarter of the rate
 * (a relapse lands at `(1 − margin)` × the rate before the probe at the lowest, so
 * `(1 − margin) / (1 + step) ≥ 0.75`): 26.7 % with the defaults, where twice the base step is
 * 20 %. CUBIC's window grows ever faster past the old maximum (RFC 9438 §4.5, cubic in the time
 * since the last congestion event) and BBR's ProbeBW_UP doubles its probe each round (Cardwell
 * et al., "BBR Congestion Control", draft-cardwell-iccrg-bbr-congestion-control-02 §4.3.3.4:
 * its `inflight_hi` grows by a step that doubles each round, `bw_probe_up_rounds`);
 * here the steps double to that bound, which keeps a failed probe's undo from counting as a
 * multiplicative decrease. Never above `maxStep`.
 */
function convexStep(increase: number, margin: number, maxStep: number): number {
  return Math.min(maxStep, Math.max(2 * increase, (1 - margin) / 0.75 - 1));
}

/** A rise, planned before it is applied. */
interface Rise {
  readonly rate: number;
  readonly step: number;
  readonly relapses: number;
  /** When it fell due. */
  readonly at: number;
}

class Adaptive implements AdaptiveRate {
  readonly #clock: Clock;
  readonly #gate: Gate;
  readonly #decrease: number;
  readonly #increase: number;
  /** The largest rise, `1 / decreaseFactor − 1`: one rise never outdoes one fall. */
  readonly #maxStep: number;
  /** The largest step past the rate last throttled (see `convexStep`). */
  readonly #convexStep: number;
  readonly #coolOff: number;
  readonly #maxCoolOff: number;
  readonly #maxRelapses: number;
  readonly #min: number;
  readonly #max: number;
  readonly #defaultClass: number;
  readonly #views: Map<string, AdaptiveRateController & Mechanism>;
  readonly #isFailure: IsFailure | undefined;
  readonly #mechanism: Mechanism;
  readonly #margin: number;
  #rate: number;
  /** Bumped at every decrease; a grant's ticket is the epoch it was made in. */
  #epoch = 0;
  #changedAt: number;
  // Stryker disable next-line StringLiteral: lastChange is only ever compared with 'increase'
  #lastChange: Change = 'none';
  /** The rate before the last rise: a relapse never lands above it. */
  #before = 0;
  #relapses = 0;
  /** When the throttles of the last failed probe are paid for at PROBE_BUDGET (see `#charge`). */
  #paidAt = -Infinity;
  /** What the last failed probe showed the service to take: `(1 − margin)` × what it delivered. */
  #gateRate = Infinity;
  /** Until when a throttle counts toward that cost: the failed probe's event, two cool-offs. */
  #costUntil = -Infinity;
  /** The rate at the last throttle: a doubled step never crosses it (the base step does). */
  #throttledAt = Infinity;
  /** Whether that is the rate of a probe that failed (set by a relapse; see `#convex`). */
  #throttledProbe = false;
  /** The next rise, as a fraction: `increase`, doubled after each rise that held. */
  #step: number;
  /** Since the last change: a success was recorded / a request had to wait for the limit. */
  #evidence = false;
  #saturated = false;
  /** When the evidence for a rise was complete: a late-applied rise counts from then. */
  #readyAt = Infinity;
  #lastSlot = -Infinity;
  /** When the first request went: the rate measured while unlimited covers no time before it. */
  #firstGrant = Infinity;
  /** Grants in the current and the previous whole second, to measure the rate while unlimited. */
  // Stryker disable next-line UnaryOperator: no grant's second equals ±Infinity or follows it
  #second = -Infinity;
  #count = 0;
  #previous = 0;
  /** Successes per 100-ms slot over the last 3 s (a ring): the delivered rate. */
  readonly #delivered = new Float64Array(SLOTS);
  // Stryker disable next-line UnaryOperator: a slot marked 1 before any success holds 0 successes, as a fresh one
  readonly #deliveredSlot = new Float64Array(SLOTS).fill(-1);
  /**
   * The 100-ms slots in which a throttle came (a ring, as `#deliveredSlot`): the service refused
   * what the client offered then, whatever the round the request belonged to.
   */
  // Stryker disable next-line UnaryOperator: a slot marked 1 before any throttle is as unmarked as -1
  readonly #refusedSlot = new Float64Array(SLOTS).fill(-1);
  /** Whether a throttle came in at least half the slots the last delivered-rate measurement spanned. */
  #refused = false;
  /** When the rate was last cut, and whether that cut was based on a measured delivered rate. */
  #eventAt = -Infinity;
  // Stryker disable next-line BooleanLiteral: informed is read only within a cool-off of a cut, and every cut sets it
  #informed = false;
  /**
   * Whether that cut's event lasts two cool-offs: it undid a rise (a relapse), cut deeper than
   * decreaseFactor, or was the blind first cut of an unlimited controller.
   */
  #eventLong = false;
  /** When a throttle was last noted without a cut. */
  #notedAt = -Infinity;
  /** The successes the last delivered-rate measurement counted. */
  #deliveredCount = 0;
  /** The span it counted them over, in ms. */
  #deliveredSpanMs = 1000;
  readonly #maxServerWait: number;
  /** No request goes before this: the server said so (`Retry-After`). */
  #pausedUntil = -Infinity;
  /** Recent pauses, as [from, until, from, until, …]: the delivered rate leaves them out. */
  // Stryker disable next-line ArrayDeclaration: a stray entry yields NaN bounds, which add no paused time and are dropped at the next pause
  #pauses: number[] = [];
  /** The pace a server's `RateLimit` field allows (`r / t`), and until when. */
  #paceRate = Infinity;
  // Stryker disable next-line UnaryOperator: with no pace (rate Infinity) a window that never ends paces nothing
  #paceUntil = -Infinity;

  constructor(
    o: Required<Omit<AdaptiveRateOptions, 'priorities' | 'maxServerWaitMs' | 'isFailure'>> & {
      priorities: readonly string[];
      isFailure: IsFailure | undefined;
    },
  ) {
    this.#clock = o.clock;
    this.#decrease = o.decreaseFactor;
    this.#increase = o.increase;
    this.#step = o.increase;
    this.#maxStep = 1 / o.decreaseFactor - 1;
    this.#convexStep = convexStep(o.increase, o.margin, this.#maxStep);
    this.#coolOff = o.coolOffMs;
    this.#maxCoolOff = o.maxCoolOffMs;
    this.#maxRelapses = Math.max(0, Math.ceil(Math.log2(o.maxCoolOffMs / o.coolOffMs)));
    this.#min = o.minRatePerSecond;
    this.#max = o.maxRatePerSecond;
    this.#margin = o.margin;
    this.#maxServerWait = o.maxRetryAfterMs;
    this.#rate = o.initialRatePerSecond;
    this.#changedAt = readNow(o.clock);
    this.#defaultClass = o.priorities.indexOf(o.defaultPriority);
    this.#gate = new Gate(o.clock, o.priorities.length, {
      waitMs: (now) => this.#waitMs(now),
      grant: (now, woken) => this.#grant(now, woken),
    });
    this.#isFailure = o.isFailure;
    this.#views = new Map(o.priorities.map((name, i) => [name, this.#view(i)]));
    this.#mechanism = this.#mechanismOf(this.#defaultClass);
  }

  /**
   * Reads the rate — the control law's, or the pace of a server's `RateLimit` field while it is
   * lower; reading changes nothing (a due rise is applied by the next acquire or record).
   */
  get ratePerSecond(): number {
    const now = readNow(this.#clock);
    const rate = this.#planRise(now)?.rate ?? this.#rate;
    return now < this.#paceUntil ? Math.min(rate, this.#paceRate) : rate;
  }

  get pausedForMs(): number {
    return Math.max(0, this.#pausedUntil - readNow(this.#clock));
  }

  get currentCoolOffMs(): number {
    const now = readNow(this.#clock);
    // Once the last failed probe is paid for, its backoff no longer holds (see `#probeAt`).
    const paid = now >= this.#paidAt;
    const plan = this.#planRise(now);
    if (plan) return this.#waitFor(plan.rate, 'increase', paid ? 0 : plan.relapses);
    return this.#waitFor(this.#rate, this.#lastChange, paid ? 0 : this.#relapses);
  }

  #coolOffAfter(relapses: number): number {
    return Math.min(this.#maxCoolOff, this.#coolOff * 2 ** relapses);
  }

  /**
   * The quiet time before the next rise: the cool-off as backed off by relapses — except a
   * base step or more past the rate last throttled, once probes got there and held (the convex
   * region): one base cool-off, so that a limit that rose is found within a few.
   */
  #waitFor(rate: number, lastChange: Change, relapses: number): number {
    if (lastChange === 'increase' && this.#convex(rate)) return this.#coolOff;
    // A probe holds half the backed-off cool-off before the next rise, and no less than two base
    // cool-offs once a probe has relapsed: a limiter whose memory lags (a window that fills, a
    // burst that drains) refuses an excess of one step within about that.
    if (lastChange === 'increase') return this.#coolOffAfter(Math.max(Math.min(relapses, 1), relapses - 1));
    return this.#coolOffAfter(relapses);
  }

  /**
   * Whether `rate` is past the rate last throttled: a probe that held there shows the old
   * maximum no longer bounds the limit (RFC 9438 §4.5), and the next probes are convex. Past it
   * by any amount, not by a whole base step: a whole step took one more
   * probe, a second more, on every climb past a limit that moved (a doubling from 25 to 50 r/s:
   * found 6–7 s after it; see docs/rate-control.md, "The doubling"). That holds for the rate of
   * a probe that failed (a relapse), refused within its cool-off. Any other cut's rate needs a
   * whole base step (`increase` × that rate, or × ADDITIVE_RATE above it), as before: the
   * delivered rate that corrected a blind cut is measured while a window refuses, a few requests
   * under the limit (HAProxy at 10 r/s: a convex probe to 12 r/s at 4 s, one probe after the cold
   * start, and a second of refusals); a rate that held until a burst drained and was then cut by
   * the margin is above the limit by what the burst hid (nginx at 50 r/s, burst 5: a convex
   * probe to 61.6 r/s at 8.7 s, the limit unchanged). A probe just past either is no evidence
   * that the limit moved.
   */
  #convex(rate: number): boolean {
    const at = this.#throttledAt;
    if (this.#throttledProbe) return rate > at * (1 + 1e-9);
    return rate >= (at + this.#increase * Math.min(at, ADDITIVE_RATE)) * (1 - 1e-9);
  }

  get waiting(): number {
    return this.#gate.waiting;
  }

  acquire(signal?: AbortSignal): unknown {
    return this.#gate.acquire(this.#defaultClass, signal);
  }

  /** In a pipeline: waits its turn, runs the call, records `isFailure`'s verdict on its outcome. */
  execute<T>(next: (context: AttemptContext) => Promise<T>, context: AttemptContext): Promise<T> {
    return this.#mechanism.execute(next, context);
  }

  record(outcome: Outcome, ticket?: unknown, detail?: unknown): void {
    const now = readNow(this.#clock);
    // What the server said applies whatever the round: it describes the service now.
    if (detail !== undefined && this.#maxServerWait > 0) this.#hear(now, outcome, detail);
    if (outcome === 'throttled') {
      this.#countRefused(now);
      // One decrease per round of requests: a throttle of a request sent before the last
      // decrease says nothing about the new rate (TCP, likewise, cuts its window at most once
      // per round trip).
      if (ticket === undefined || ticket === this.#epoch) {
        this.#charge(now, false);
        // A rise that fell due before this verdict came is part of the history it judges.
        this.#rise(now);
        this.#fall(now);
      }
    } else if (outcome === 'success') {
      this.#countDelivered(now);
      if (!this.#evidence) {
        this.#evidence = true;
        if (this.#saturated) this.#readyAt = now;
      }
      if (this.#rise(now)) this.#gate.poke();
    }
  }

  priority(name: string): AdaptiveRateController & Mechanism {
    const view = this.#views.get(name);
    if (!view) {
      throw new TypeError(
        `adaptiveRate().priority(): expected \`name\` to be one of ${[...this.#views.keys()].map(show).join(', ')}, got ${show(name)}.`,
      );
    }
    return view;
  }

  #mechanismOf(cls: number): Mechanism {
    return controllerMechanism(
      'adaptiveRate()',
      this.#isFailure,
      (signal) => this.#gate.acquire(cls, signal),
      (outcome, ticket, detail) => this.record(outcome, ticket, detail),
    );
  }

  #view(cls: number): AdaptiveRateController & Mechanism {
    const self = this;
    const mechanism = this.#mechanismOf(cls);
    return {
      acquire: (signal?: AbortSignal) => self.#gate.acquire(cls, signal),
      record: (outcome: Outcome, ticket?: unknown, detail?: unknown) => self.record(outcome, ticket, detail),
      execute: mechanism.execute,
      get ratePerSecond() {
        return self.ratePerSecond;
      },
    };
  }

  /**
   * A server's hint (see `serverHint`): a pause moves the earliest next grant (a later pause
   * wins, an earlier one changes nothing); a `RateLimit` pace replaces the last one — the newest
   * answer describes the quota best. Neither changes the control law's own rate.
   */
  #hear(now: number, outcome: Outcome, detail: unknown): void {
    const hint = serverHint(outcome, detail, this.#maxServerWait);
    if (!hint) return;
    if (hint.pauseMs > 0 && now + hint.pauseMs > this.#pausedUntil) {
      const from = Math.max(now, this.#pausedUntil);
      this.#pausedUntil = now + hint.pauseMs;
      const keepFrom = now - SLOTS * SLOT_MS;
      const kept: number[] = [];
      for (let i = 0; i < this.#pauses.length; i += 2) {
        const until = this.#pauses[i + 1] as number;
        if (until > keepFrom) kept.push(this.#pauses[i] as number, until);
      }
      kept.push(from, this.#pausedUntil);
      this.#pauses = kept;
    }
    if (hint.paceMs > 0) {
      this.#paceRate = hint.paceRate;
      this.#paceUntil = now + hint.paceMs;
    }
    this.#gate.poke();
  }

  /** The milliseconds of server-asked pauses within [from, to]. */
  #pausedWithin(from: number, to: number): number {
    let ms = 0;
    for (let i = 0; i < this.#pauses.length; i += 2) {
      const a = Math.max(from, this.#pauses[i] as number);
      const b = Math.min(to, this.#pauses[i + 1] as number);
      if (b > a) ms += b - a;
    }
    return ms;
  }

  /** Whether a server's `RateLimit` pace holds now and is below the control law's rate. */
  #paced(now: number): boolean {
    return now < this.#paceUntil && this.#paceRate < this.#rate;
  }

  #waitMs(now: number): number {
    this.#rise(now);
    const paused = this.#pausedUntil - now;
    const paced = this.#paced(now);
    if (this.#rate === Infinity && !paced) return paused;
    const wait = this.#lastSlot + 1000 / (paced ? this.#paceRate : this.#rate) - now;
    // Only a wait the control law's own rate imposes says demand reaches it (a rise's condition).
    if (wait > 0 && !paced && !this.#saturated) {
      this.#saturated = true;
      if (this.#evidence) this.#readyAt = now;
    }
    return wait > paused ? wait : paused;
  }

  /**
   * How late a wake-up may be made up for, at `interval` ms between requests. Where requests
   * are closer than CATCH_UP_MS, a busy event loop's timers cannot space them anyway, and a
   * limiter at that rate needs a burst allowance: the whole CATCH_UP_MS. Farther apart, at most
   * `margin` × the interval: two requests then never go closer than `(1 − margin)` × the
   * interval, which a limiter without burst at `1 / (1 − margin)` × the rate still accepts
   * (nginx's `limit_req` without `burst` refuses a request that comes less than `1 / rate` after
   * the last one it accepted: ngx_http_limit_req_module.c, `excess > limit->burst`).
   */
  #catchUpMs(interval: number): number {
    return interval <= CATCH_UP_MS ? CATCH_UP_MS : Math.min(CATCH_UP_MS, this.#margin * interval);
  }

  #grant(now: number, woken: boolean): unknown {
    const paced = this.#paced(now);
    if (this.#rate !== Infinity || paced) {
      // A request let through at once starts a new schedule; one the wake-up lets through keeps
      // its slot, if the wake-up was not more than CATCH_UP_MS late.
      const interval = 1000 / (paced ? this.#paceRate : this.#rate);
      const due = this.#lastSlot + interval;
      // Nothing to make up for across a server's pause: it held the requests on purpose.
      const earliest = woken ? Math.max(now - this.#catchUpMs(interval), this.#pausedUntil) : now;
      this.#lastSlot = due > earliest ? due : earliest;
    }
    if (this.#firstGrant === Infinity) this.#firstGrant = now;
    const second = Math.floor(now / 1000);
    if (second !== this.#second) {
      this.#previous = second === this.#second + 1 ? this.#count : 0;
      this.#count = 0;
      this.#second = second;
    }
    this.#count++;
    return this.#epoch;
  }

  /**
   * Grants per second over the last second (the previous second's overlapping share plus this
   * one's), over the time actually covered when traffic began less than a second ago (at least
   * 100 ms, so that a first burst does not read as an infinite rate).
   */
  #measured(now: number): number {
    const second = Math.floor(now / 1000);
    const into = now / 1000 - second;
    let grants = 0;
    if (second === this.#second) grants = this.#previous * (1 - into) + this.#count;
    else if (second === this.#second + 1) grants = this.#count * (1 - into);
    const covered = Math.min(1000, Math.max(100, now - this.#firstGrant));
    return (grants * 1000) / covered;
  }

  #countDelivered(now: number): void {
    const slot = Math.floor(now / SLOT_MS);
    const i = ((slot % SLOTS) + SLOTS) % SLOTS;
    if (this.#deliveredSlot[i] !== slot) {
      this.#deliveredSlot[i] = slot;
      this.#delivered[i] = 0;
    }
    this.#delivered[i] = (this.#delivered[i] as number) + 1;
  }

  #countRefused(now: number): void {
    const slot = Math.floor(now / SLOT_MS);
    this.#refusedSlot[((slot % SLOTS) + SLOTS) % SLOTS] = slot;
  }

  /**
   * Successes per second — the rate the service actually accepted — over the last second, or
   * longer (up to 3 s) until the span holds MIN_DELIVERED successes, so that a low rate is not
   * read from a handful of responses. BBR's delivery-rate sample, per slot rather than per ACK.
   * Also notes whether a throttle came in at least half the slots it spans (`#refused`).
   */
  #deliveredRate(now: number): number {
    const slot = Math.floor(now / SLOT_MS);
    const since = Math.max(now - SLOTS * SLOT_MS, this.#firstGrant);
    let successes = 0;
    let covered = 0;
    let refused = 0;
    let slots = 0;
    for (let k = 0; k < SLOTS; k++) {
      const s = slot - k;
      const start = s * SLOT_MS;
      const i = ((s % SLOTS) + SLOTS) % SLOTS;
      if (this.#deliveredSlot[i] === s) successes += this.#delivered[i] as number;
      if (this.#refusedSlot[i] === s) refused++;
      slots++;
      // Time the server asked the client to pause delivered nothing by the client's choice: it
      // is not the service's rate.
      const from = Math.max(start, since);
      covered = now - from - (this.#pauses.length > 0 ? this.#pausedWithin(from, now) : 0);
      if (start <= since) break;
      if (covered >= 1000 && successes >= MIN_DELIVERED) break;
    }
    // Known only over a whole second at least: the first few hundred ms of a burst overstate it.
    this.#deliveredCount = covered >= 1000 ? successes : 0;
    this.#deliveredSpanMs = Math.max(SLOT_MS, covered);
    this.#refused = 2 * refused >= slots;
    return (successes * 1000) / Math.max(SLOT_MS, covered);
  }

  /**
   * A throttle of a request sent at the current rate (one per round of requests: see `record`).
   * "Delivered" is the rate the service accepted lately — its limit as measured, BBR's
   * bottleneck estimate — and a cut goes to `(1 − margin)` × it.
   *
   * - Right after a rise (a *relapse*): back just under the rate before the rise (at most
   *   `margin` lower, more only if the service delivers less), and the cool-off doubles.
   * - At a rate that had held, with the service delivering well below it (more than `2 × margin`
   *   less, and more than two requests less over the span measured): conditions changed. Down to
   *   the delivered rate, and the cool-off back to `coolOffMs`.
   * - At a rate that had held, with the service still delivering about it: the same level as
   *   before — a late timer, a burst the limiter did not absorb — only noted: the rate stays, no
   *   rise for a cool-off. If throttles keep coming for longer than a cool-off, a cut by the margin.
   * - Within a cool-off of a cut (two after a relapse or a cut deeper than `decreaseFactor`),
   *   throttles belong to the same congestion event (a limiter that counts over a window, or
   *   whose burst still drains, keeps refusing for a while): noted — unless the cut was made
   *   blind (no delivered rate measured yet): then to `(1 − margin)` × the delivered rate, now
   *   measured, lower or higher — lower than `decreaseFactor` × the blind rate only if the
   *   service refused throughout the span measured (see `#blindFloor`). The blind first cut of an
   *   unlimited controller starts an event of two cool-offs (see `#coldBlind`).
   *
   * The rate last throttled, which bounds the probes that follow, is the rate cut from — after a
   * blind cut corrected within its event (down or up), the delivered rate, or the new rate if higher.
   *
   * No cut goes below `decreaseFactor` × the rate unless requests were kept waiting (below):
   * Chiu–Jain's multiplicative decrease is the bound, and the whole rule when no delivered rate
   * is measured (the first throttle of an unlimited controller, one after a silence).
   */
  #fall(now: number): void {
    const first = this.#rate === Infinity;
    const from = first ? Math.max(this.#measured(now), this.#min) : this.#rate;
    const delivered = this.#deliveredRate(now);
    const known = this.#deliveredCount >= MIN_DELIVERED;
    const limit = known ? Math.min(from, delivered) : from;
    // decreaseFactor bounds a cut unless requests were kept waiting by the rate since the last
    // change: then the client sent at its rate, and what the service delivered is its limit
    // (BBR drops the delivery-rate samples of an application-limited sender for the same reason).
    const floor = known && this.#saturated ? this.#min : from * this.#decrease;
    // An event lasts one base cool-off (not the backed-off one, which spaces probes); one that
    // began with a relapse, two: a limiter whose memory lags refuses for that long after a probe
    // above its limit (HAProxy's sliding window counts the refused requests too, and refused
    // nearly everything for a second after a probe to 11 r/s against 10: the delivered rate,
    // halved by that, read as a change of conditions and cut the rate in half). So does one that
    // began with a cut deeper than decreaseFactor: the client had sent far above the limit, and
    // such a window refuses for a second after that too (HAProxy at 10 r/s: a cold burst of 250
    // requests; the cut to 9.5 r/s at 1.1 s, then a throttle at 2.2 s, the window still full, read
    // as a change of conditions: down to 4.7 r/s, and 5–7 s to converge).
    const coolOff = this.#coolOff;
    const eventMs = this.#eventLong ? 2 * coolOff : coolOff;
    const m = this.#margin;
    let rate: number;
    let relapse = false;
    /** A relapse of a convex probe: the rate before it was past the rate last throttled. */
    let failedConvex = false;
    let at = from;
    if (first) rate = known ? Math.max(floor, limit * (1 - m)) : floor;
    else if (this.#lastChange === 'increase') {
      relapse = true;
      failedConvex = this.#convex(this.#before);
      rate = this.#relapseTo(limit, failedConvex);
      if (this.#relapses < this.#maxRelapses) this.#relapses++;
    } else if (now - this.#eventAt < eventMs) {
      if (this.#informed || !known || delivered * (1 - m) === from) {
        this.#note(now);
        return;
      }
      // The cut was blind; the delivered rate, now measured, sets the rate — lower, or higher:
      // a limiter that accepted a whole window's worth before its first refusal (HAProxy's sliding
      // window, at a limit the cold burst barely exceeds) was cut to half of about its limit, and
      // the climb back took 4 s (13–14 s to converge at 500 r/s in the full runs). Bounded by
      // decreaseFactor unless the service refused throughout the span measured (`#blindFloor`):
      // tried without any bound, a fleet whose clients slept on a server's Retry-After, its
      // controller deaf to it, measured 11.7 r/s delivered at nginx's 50 and was cut to 11.1
      // (test/rate/server-hints.test.ts's control then failed): the bound is what keeps a client
      // that did not send from reading its own silence as the limit.
      rate = Math.max(this.#blindFloor(from), delivered * (1 - m));
      // The rate last throttled is then what the service delivered (or the new rate, if the cut
      // is bounded above it): the blind rate was half a cold burst's, and probes below it took
      // steps of 10 % and 20 % of the rate — HAProxy at 10 r/s, from 9.4 to 12.5 r/s in 2 s, and
      // its window, overfilled, refused most requests for the next seconds.
      at = Math.max(delivered, rate);
    } else if (known && limit + (2 * 1000) / this.#deliveredSpanMs < from * (1 - 2 * m)) {
      // Well below: short by more than 2 × margin and by more than two requests over the span
      // measured. Two requests are 20 % of the ten a process at 5 r/s is measured over, 4 % at
      // 50 r/s: without that slack, a small process sharing a limit read one or two refused
      // requests as a change of conditions and was cut, a big one was not, and the shares drifted
      // apart (five processes: 4 and 18 r/s).
      rate = Math.max(floor, limit * (1 - m));
      this.#relapses = 0;
    } else if (known) {
      if (now - this.#notedAt >= coolOff) {
        this.#note(now);
        return;
      }
      rate = Math.max(floor, limit * (1 - m));
    } else rate = floor;
    this.#informed = known;
    this.#eventAt = now;
    this.#rate = Math.min(this.#max, Math.max(this.#min, rate));
    const deep = this.#rate < from * this.#decrease;
    this.#eventLong = relapse || deep || this.#coldBlind(first, known);
    if (relapse) {
      this.#hold(now);
      this.#gateRate = limit * (1 - m);
      this.#charge(now, true);
    } else {
      // Any other cut answers the service, not the probe: what the probe was charged is void (the
      // throttles after a probe that fails as the limit halves are the halving's).
      this.#paidAt = -Infinity;
      this.#costUntil = -Infinity;
    }
    // The rate cut from, even after a deep cut: the delivered rate is no better a bound for the
    // probes there, since a window that refuses for a second depresses it (tried: HAProxy at
    // 500 r/s then crawled at 230–240 r/s for 9 s, and at 10 r/s at 3–7 r/s for 8 s).
    this.#throttledAt = at;
    this.#throttledProbe = relapse;
    if (failedConvex) this.#afterConvex(limit);
    this.#step = this.#increase;
    // Stryker disable next-line StringLiteral: lastChange is only ever compared with 'increase'
    this.#change(now, 'decrease');
    this.#epoch++;
  }

  /**
   * Where a relapse lands: back just under the rate before the rise (at most `margin` lower,
   * more only if the service delivers less) — or, after a convex probe (the rate before it was
   * past the rate last throttled), at `(1 − margin)` × what the service delivered, if that is
   * higher: a convex step is 20 % or more, and the rate before it can sit far under the limit
   * it found (a climb from 25 to 50 r/s: 44 r/s before a probe to 56, where `limit` is the
   * delivered rate, 50 — measure what the service delivers and settle under it, as any cut
   * does). Never above the probe's rate: `limit` is at most it.
   */
  #relapseTo(limit: number, convex: boolean): number {
    const m = this.#margin;
    const back = Math.min(this.#before, Math.max(this.#before * (1 - m), limit * (1 - m)));
    return convex ? Math.max(back, limit * (1 - m)) : back;
  }

  /**
   * After a convex probe fails, the rate last throttled is the larger of the rate before it
   * (which held) and what the service delivered, and a probe must hold a whole base step past it
   * before the next convex one (as after any cut but a relapse of a base step). The failed
   * probe's own rate (20 % or more above the rate before it) says the limit is below it, not
   * where: taken as the old maximum, it left a region of additive probes between the limit and
   * it (nginx at 25 r/s, burst 5: a convex probe to 32 r/s failed a second before the limit
   * doubled, and probes of 0.5–2 r/s took 9 s to cross 25.4–32 r/s; HAProxy at 500 r/s: a cold
   * start's convex probe to 597 r/s). A limit that moved is still crossed as before: a base step
   * past this rate, then convex steps.
   */
  #afterConvex(limit: number): void {
    this.#throttledAt = Math.max(this.#before, limit);
    this.#throttledProbe = false;
  }

  /**
   * Whether a cut is the blind first cut of an unlimited controller, whose event lasts two
   * cool-offs. The first 429 of a cold burst comes milliseconds after the first request, and the
   * delivered rate is known only over a whole second: with an event of one cool-off, the
   * throttles of that burst that came just after it ended, a few ms short of a measured second,
   * were cut blind again, by half (HAProxy at 10 r/s: 250 → 125 r/s at 1.002 s, a second of
   * refusals, then 4.8 r/s measured through them, and 9 s to converge).
   */
  #coldBlind(first: boolean, known: boolean): boolean {
    return first && !known;
  }

  /**
   * How low the correction of a blind cut may go (`from` the blind rate): to `minRatePerSecond`
   * if a throttle came in at least half the 100-ms slots the delivered rate was measured over —
   * the client offered more than the service took for most of the span, so what was delivered is
   * the service's limit, not the client's silence — else `decreaseFactor` × `from`. BBR (Cardwell
   * et al., ACM Queue 2016) keeps a delivery-rate sample lower than its estimate only if the
   * sender was not application-limited over it; "kept waiting by the rate since the last change"
   * (rule 5's test elsewhere) says that badly here: a cold burst's event notes a throttle of each
   * new round every few ms, and each note clears it, so the correction of a cold start read the
   * last few ms only. HAProxy at 50 r/s: 445 → 222.5 r/s or → 47.4 r/s at about 1 s, by that
   * coin; at 222.5 the client refilled the window through second 1 (HAProxy counts refused
   * requests too), second 2 delivered 1–3 requests, and the delivered rate read through them
   * cut to 5–24 r/s: 8–15 s to converge, in 7 of 15 runs. A fleet whose clients slept through
   * most of the second (a `Retry-After` the controller did not hear) was refused in one or two
   * slots of eleven: still bounded, where the coin had let it be cut to 0.95 × its own silence
   * (230 → 14.9 r/s at nginx's 50).
   */
  #blindFloor(from: number): number {
    return this.#refused ? this.#min : from * this.#decrease;
  }

  /**
   * After a relapse, the next request waits two spacings at the new rate, not one: a limiter that
   * counts refused requests in its window (HAProxy's `http_req_rate`, read as the current period's
   * count plus the previous one's, prorated: `src/freq_ctr.c`) stays over its limit after a probe
   * above it as long as the client sends at about the limit — every refusal is counted too — and
   * refused nearly everything for a second (HAProxy at 10 r/s: 9 of 10). A silence drains it at
   * the limit's pace; TCP's proportional rate reduction (RFC 6937) likewise sends less than the
   * new rate until what was sent in excess has left the network. Only a relapse holds, and a
   * relapse undoes a rise, so the rate is finite here.
   */
  #hold(now: number): void {
    this.#lastSlot = Math.max(this.#lastSlot, now + 1000 / this.#rate);
  }

  /** A throttle that changes no rate: still one per round, and no rise for a cool-off. */
  #note(now: number): void {
    this.#notedAt = now;
    // Stryker disable next-line StringLiteral: lastChange is only ever compared with 'increase'
    this.#lastChange = 'decrease';
    this.#changedAt = now;
    this.#evidence = false;
    this.#saturated = false;
    this.#readyAt = Infinity;
    this.#epoch++;
  }

  /**
   * Applies the rise due at `now`, if any; true if the rate rose. Every rise is a probe: one
   * `increase` step, doubled after each probe that holds (CUBIC's convex max-probing region,
   * RFC 9438 §4.5), within the bounds of `#planRise`.
   *
   * There is no concave climb back to a settling point below a learned limit (CUBIC's concave
   * region, RFC 9438 §4.4), which the law once had: it could not be reached. It ran only while the
   * rate was below `(1 − margin)` × the limit learned at the last cut, and every cut lands at or
   * above that — at `(1 − margin)` × the limit it measured (`limit` in `#fall`, or the rate before
   * the rise after a relapse, or the rate itself after a blind cut) — unless `maxRatePerSecond`
   * clamps it, and at the maximum no rise is planned; a probe that held raised the limit to a
   * rate the new rate is above. No input reached it (18 mutants without coverage), and it went
   * with the learned limit, which nothing else read.
   */
  #rise(now: number): boolean {
    const plan = this.#planRise(now);
    if (!plan) return false;
    this.#before = this.#rate;
    this.#rate = plan.rate;
    this.#step = plan.step;
    this.#relapses = plan.relapses;
    // Counted from when the rise fell due, not from when something happened to apply it: the
    // loop's timing does not depend on how often it is looked at.
    this.#change(plan.at, 'increase');
    return true;
  }

  /** The rise due at `now`, if any, without applying it (so that reading the rate changes nothing). */
  #planRise(now: number): Rise | undefined {
    if (!this.#evidence || !this.#saturated || this.#rate >= this.#max) return undefined;
    let rate = this.#rate;
    let step = this.#step;
    let relapses = this.#relapses;
    if (this.#lastChange === 'increase') {
      // The previous probe held for its cool-off: the service takes this rate. Take a bigger
      // step; and relax the backoff — but only at or above the rate last throttled: a probe that
      // held below the level that relapsed says nothing new about it, and relaxing there let a
      // steady limit be probed every 3–4 s, each probe above it costing a 429 or more (nginx at
      // 10 r/s without burst: one 429 every 4 s, 2.2–5.8 % in single runs).
      if (relapses > 0 && rate >= this.#throttledAt * (1 - 1e-9)) relapses--;
      step = Math.min(this.#maxStep, step * 2);
    }
    // A doubled step never crosses the rate last throttled: there, base steps. Once a probe
    // has held past it, the steps double again (CUBIC's convex region beyond W_max, RFC 9438
    // §4.5: the old maximum no longer bounds the limit), up to `#convexStep`, so that undoing a
    // probe that fails never cuts a quarter of the rate.
    const convex = this.#convex(rate);
    // Near the rate last throttled a step is a fraction of at most ADDITIVE_RATE, not of the
    // rate: above it, every controller probes by the same absolute amount (Chiu and Jain's
    // additive increase), so that independent processes sharing one limit converge to equal
    // shares instead of keeping the ratio of their rates. Past the old maximum (the limit
    // moved), before any throttle, and farther below the rate last throttled than
    // ADDITIVE_RATE (a climb after a deep cut), the steps are a fraction of the rate.
    const below = this.#throttledAt - rate;
    const scale = convex || below === Infinity ? rate : Math.min(rate, Math.max(ADDITIVE_RATE, below));
    if (convex) step = Math.min(step, this.#convexStep);
    else if (rate + step * scale > this.#throttledAt) step = this.#increase;
    rate = Math.min(this.#max, rate + step * scale);
    // After a server's pause, a whole cool-off at the rate before the rate rises again.
    const at = Math.max(this.#probeAt(rate), this.#readyAt, this.#pausedUntil + this.#coolOff);
    if (now < at) return undefined;
    return { rate, step, relapses, at };
  }

  /**
   * When a rise to `next` may come: after the cool-off as relapses backed it off — or, once the
   * 429s of the last failed probe are paid for (`#charge`), after the cool-off of no relapse, if
   * sooner; and a rise above the level that probe showed the service to take (`#gateRate`) never
   * before they are paid for. So probes above a steady limit cost at most PROBE_BUDGET of the
   * requests in 429s, at any rate, spaced by what they cost: after a failed probe, requests at
   * the rate (a rise needs requests kept waiting) must reach its throttles ÷ PROBE_BUDGET. CUBIC
   * (RFC 9438 §4) spaces its probes by the time since the last congestion event, BBR's ProbeBW by
   * time and by how much was delivered since; here by requests, as many as the last failure's
   * 429s ask for. A limit whose failed probes cost one 429 is probed about every 50 requests —
   * 2 s at 25 r/s, where the backoff alone waited up to 8 s and judged each probe over 2 s or
   * more; 5 s at 10 r/s — and one whose window refuses a second's worth, ten times more rarely.
   */
  #probeAt(next: number): number {
    const changed = this.#changedAt;
    const backedOff = changed + this.#waitFor(this.#rate, this.#lastChange, this.#relapses);
    const released = Math.max(changed + this.#waitFor(this.#rate, this.#lastChange, 0), this.#paidAt);
    const at = Math.min(backedOff, released);
    return next > this.#gateRate * (1 + 1e-9) ? Math.max(at, this.#paidAt) : at;
  }

  /**
   * Charges a throttle to the last failed probe: a relapse starts a new charge, and each
   * throttle of a new round within its event (two cool-offs) adds one. Each is paid for by
   * `1 / PROBE_BUDGET` requests, at the rate when it came.
   */
  #charge(now: number, relapse: boolean): void {
    if (relapse) {
      this.#paidAt = now;
      this.#costUntil = now + 2 * this.#coolOff;
    } else if (now >= this.#costUntil) return;
    this.#paidAt += 1000 / (PROBE_BUDGET * this.#rate);
  }

  #change(now: number, change: Change): void {
    this.#changedAt = now;
    this.#lastChange = change;
    this.#evidence = false;
    this.#saturated = false;
    this.#readyAt = Infinity;
  }
}

const rate = (where: string, name: string, value: unknown, fallback: number, allowInfinity: boolean): number => {
  const v = nonNegative(where, name, value, fallback, allowInfinity, 'Rates are requests per second, such as 50.');
  if (v === 0) invalid(where, name, v, 'a number > 0', 'Rates are requests per second, such as 50.');
  return v;
};

/** The options of the control law itself (`ebb/redis`'s `sharedRate` takes the same, with the same meaning). */
export const LAW_KEYS = [
  'initialRatePerSecond',
  'decreaseFactor',
  'coolOffMs',
  'maxCoolOffMs',
  'margin',
  'increase',
  'minRatePerSecond',
  'maxRatePerSecond',
] as const;

/**
 * ebb's closed-loop rate controller, after the exponential-backoff article's model of backoff
 * as a control system: the rate falls multiplicatively on each throttle, and after a
 * cooling-off period without one it rises again, more slowly than it fell; the cooling-off
 * period is itself backed off exponentially after relapses, so that the rate settles instead
 * of oscillating. Priority classes let important traffic go first. (Source: Wikipedia,
 * "Exponential backoff", sections "Exponential backoff algorithm" and "Rate limiting", the seed
 * article ebb grew from; the article leaves the recovery rule to implementations, and the
 * rules below are ebb's, checked by the simulations in adaptive-rate.test.ts.)
 *
 * **The loop.**
 * - A throttle (`record('throttled', ticket)`) of a request sent at the current rate multiplies
 *   the rate by `decreaseFactor` (0.5). Throttles of requests sent before that decrease are
 *   ignored: one cut per round of requests.
 * - After `coolOffMs` (1 s) with successes, no throttle, and requests kept waiting by the limit
 *   (no point raising a rate nobody reaches), the rate rises by `increase` (10 %). Each rise
 *   that holds doubles the next step (20 %, 40 %, … up to what one fall takes away), so the
 *   rate climbs back quickly — but a doubled step never passes the rate last throttled: there,
 *   only the base step probes. Once a probe has held past it (past a failed probe's rate by any
 *   amount, past any other cut's by a whole base step), the limit has risen: steps double again
 *   (20 %, then 26.7 %: up to the largest step whose undoing cuts less than a quarter), a base
 *   cool-off apart. A convex probe that fails lands at `(1 − margin)` × what the service
 *   delivered if that is above the rate before it, and leaves the larger of the two as the rate
 *   last throttled.
 * - Near the rate last throttled (not past it), a step is a fraction of the rate up to 5 r/s
 *   only: above 5 r/s, every controller probes by the same `increase` × 5 r/s (0.5 r/s). An
 *   additive increase (Chiu–Jain): processes that share a limit, each with its own controller,
 *   drift to equal shares; and against a limiter with a burst the rate creeps up to the limit
 *   and is cut by about the margin when the burst drains.
 * - A throttle right after a rise is a *relapse*: the rise is undone, the next request waits two
 *   spacings at the new rate (a limiter's window that counts refused requests drains), and the
 *   cool-off doubles (up to `maxCoolOffMs`, 8 s); a probe is judged over half the cool-off
 *   before it (at least two base cool-offs once relapsed), and one that holds at or above the
 *   rate that relapsed halves the cool-off again (one that holds below it does not).
 * - A relapse is a failed probe, charged the 429s it drew: no rise goes above the level it fell
 *   back to until 2 % of the requests sent since pay for them, and then the backoff is released.
 *   So probes above a steady limit cost about 2 % of the requests at any rate: every 50
 *   requests when a failed probe costs one 429 (2 s at 25 r/s), rarely when it costs many.
 * - Until the first throttle, with no `initialRatePerSecond`, nothing is limited; the first
 *   throttle starts from `decreaseFactor` × the rate granted over the last second. Made blind
 *   (nothing measured yet), that cut's event lasts two cool-offs, and the first throttle in it
 *   with the delivered rate measured sets the rate to `(1 − margin)` × it — but no lower than
 *   `decreaseFactor` × the blind rate unless throttles came in at least half the 100-ms slots
 *   it was measured over (the service, not the client's silence, set what was delivered).
 *
 * **What the server says.** `retry()` hands `record` the attempt's error or value. A failure
 * whose error has `retryAfterMs` (`ebb/http` sets it from `Retry-After`, RFC 9110 §10.2.3, or
 * an exhausted `RateLimit` policy) pauses every request of the controller that long — a pause,
 * not a cut: the throttle moves the rate as it would without the header. A response's
 * `RateLimit` field (draft-ietf-httpapi-ratelimit-headers, revisions 08–11: `r` left within `t`
 * seconds), on a 429's error or on a success's `Response`, paces at most `r / t` for `t` seconds;
 * `r = 0` pauses for `t`. Both are bounded by `maxRetryAfterMs` (60 s; 0 ignores them);
 * NaN, negative and infinite hints and malformed fields are ignored. Time paused is left out of
 * the delivered rate. Without the headers the loop is exactly the one above.
 *
 * **Pacing.** Requests go evenly spaced, `1000 / rate` ms apart (a late timer is made up for,
 * up to 25 ms — below 40 requests a second, up to `margin` × the spacing, so that two requests
 * never go closer than `(1 − margin)` × it). With `priorities`, a waiting request of a more important class always goes
 * first; FIFO within a class. No timer runs while nobody waits.
 *
 * **When to use:** many callers in one process share one service that answers 429 or another
 * "slow down" when overloaded; put the same controller in every pipeline that calls it (inside
 * the `retrying()`: it judges each attempt's outcome by `isFailure`, `'throttled'` cutting the
 * rate), or pass it as `withRetry()`'s `use`.
 *
 * **Gotchas:** only `'throttled'` moves the rate down — plain failures are a retry budget's
 * business (`tokenBudget`, `ratioBudget`). Priorities are strict: a flood of high-priority
 * requests can starve the low ones while the rate is short. The controller is per process; a
 * fleet of processes converges because each one backs off on its own throttles.
 *
 * @example
 * const rate = adaptiveRate({ initialRatePerSecond: 50 });
 * const interactive = rate.priority('high');
 * await pipeline([retrying(), interactive]).execute(() => call());
 * rate.ratePerSecond; // what it allows now
 */
export function adaptiveRate<T = unknown>(options?: AdaptiveRateOptions<T>): AdaptiveRate {
  const where = 'adaptiveRate()';
  const o = optionsObject(where, options) as AdaptiveRateOptions;
  // The former name is accepted, and not offered in the message about an unknown option.
  const { maxServerWaitMs: _, ...known } = o;
  checkKeys(where, known, [...LAW_KEYS, 'priorities', 'defaultPriority', 'maxRetryAfterMs', 'isFailure', 'clock']);
  const minRatePerSecond = rate(where, 'minRatePerSecond', o.minRatePerSecond, 1, false);
  const maxRatePerSecond = rate(where, 'maxRatePerSecond', o.maxRatePerSecond, Infinity, true);
  if (maxRatePerSecond < minRatePerSecond) {
    invalid(where, 'maxRatePerSecond', maxRatePerSecond, `a number >= minRatePerSecond (${minRatePerSecond})`);
  }
  const initialRatePerSecond = rate(where, 'initialRatePerSecond', o.initialRatePerSecond, maxRatePerSecond, true);
  if (initialRatePerSecond < minRatePerSecond || initialRatePerSecond > maxRatePerSecond) {
    invalid(
      where,
      'initialRatePerSecond',
      initialRatePerSecond,
      `a number from minRatePerSecond (${minRatePerSecond}) to maxRatePerSecond (${maxRatePerSecond})`,
    );
  }
  const decreaseFactor = o.decreaseFactor === undefined ? 0.5 : o.decreaseFactor;
  if (typeof decreaseFactor !== 'number' || !(decreaseFactor > 0 && decreaseFactor < 1)) {
    invalid(
      where,
      'decreaseFactor',
      decreaseFactor,
      'a number between 0 and 1 (exclusive)',
      'For example 0.5 halves the rate.',
    );
  }
  const increase = o.increase === undefined ? 0.1 : o.increase;
  if (typeof increase !== 'number' || !(increase > 0) || !Number.isFinite(increase)) {
    invalid(where, 'increase', increase, 'a finite number > 0', 'For example 0.1 for +10 % a step.');
  }
  if ((1 + increase) * decreaseFactor >= 1 && o.increase === undefined) {
    invalid(
      where,
      'decreaseFactor',
      decreaseFactor,
      `a number below ${show(1 / (1 + increase))} with the default increase ${increase}`,
      'A rise must be smaller than a fall, or the rate oscillates: lower it, or pass a smaller `increase`.',
    );
  }
  if ((1 + increase) * decreaseFactor >= 1) {
    invalid(
      where,
      'increase',
      increase,
      `a number below ${show(1 / decreaseFactor - 1)} with decreaseFactor ${decreaseFactor}`,
      'A rise must be smaller than a fall, or the rate oscillates.',
    );
  }
  const coolOffMs = nonNegative(where, 'coolOffMs', o.coolOffMs, 1000);
  if (coolOffMs === 0) invalid(where, 'coolOffMs', 0, 'a number > 0', 'For example 1000.');
  const maxCoolOffMs = nonNegative(where, 'maxCoolOffMs', o.maxCoolOffMs, Math.max(8000, coolOffMs));
  if (maxCoolOffMs < coolOffMs) invalid(where, 'maxCoolOffMs', maxCoolOffMs, `a number >= coolOffMs (${coolOffMs})`);
  const margin = o.margin === undefined ? 0.05 : o.margin;
  if (typeof margin !== 'number' || !(margin >= 0 && margin < 0.5)) {
    invalid(
      where,
      'margin',
      margin,
      'a number from 0 up to (not including) 0.5',
      'For example 0.05 to settle 5 % below the limit.',
    );
  }
  const priorities = o.priorities === undefined ? ['high', 'normal', 'low'] : o.priorities;
  if (
    !Array.isArray(priorities) ||
    priorities.length === 0 ||
    priorities.some((p) => typeof p !== 'string' || p === '') ||
    new Set(priorities).size !== priorities.length
  ) {
    invalid(where, 'priorities', priorities, 'a non-empty array of distinct names', "For example ['high', 'low'].");
  }
  const defaultPriority = o.defaultPriority === undefined ? 'normal' : o.defaultPriority;
  if (typeof defaultPriority !== 'string' || !priorities.includes(defaultPriority)) {
    invalid(
      where,
      'defaultPriority',
      defaultPriority,
      `one of the priorities (${priorities.map(show).join(', ')})`,
      o.defaultPriority === undefined ? 'Name the class of requests made through the controller itself.' : undefined,
    );
  }
  if (o.maxRetryAfterMs !== undefined && o.maxServerWaitMs !== undefined) {
    throw new TypeError(`${where}: give \`maxRetryAfterMs\` only (\`maxServerWaitMs\` is its former name).`);
  }
  const maxRetryAfterMs =
    o.maxServerWaitMs === undefined
      ? nonNegative(where, 'maxRetryAfterMs', o.maxRetryAfterMs, 60_000)
      : nonNegative(where, 'maxServerWaitMs', o.maxServerWaitMs, 60_000);
  const isFailure = isFailureOption(where, o.isFailure);
  const clock = clockOption(where, o.clock);
  return new Adaptive({
    initialRatePerSecond,
    decreaseFactor,
    coolOffMs,
    maxCoolOffMs,
    margin,
    increase,
    minRatePerSecond,
    maxRatePerSecond,
    priorities,
    defaultPriority,
    maxRetryAfterMs,
    isFailure,
    clock,
  });
}
