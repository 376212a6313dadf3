import { readNow } from '../core/boundary.js';
import { type Clock, clockOption } from '../core/clock.js';
import type { Random } from '../core/random.js';
import { checkKeys, invalid, nonNegative, optionsObject, show } from '../core/validate.js';
import type { AttemptContext } from '../retry/contexts.js';
import type { Mechanism } from '../retry/mechanism.js';
import type { IsFailure, Outcome } from '../retry/options.js';
import { type AdaptiveRateController, controllerMechanism, isFailureOption } from './controller.js';
import { Gate } from './gate.js';
import {
  charge,
  fall,
  initialState,
  LAW,
  type LawParams,
  type LawState,
  lawParams,
  type Measurement,
  planRise,
  relapsing,
  rise,
  succeeded,
  waited,
  waitFor,
} from './law.js';
import { SlotCounter } from './meter.js';
import { catchUpMs } from './pacing.js';
import { ServerHints } from './server-hints.js';

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
  /**
   * Randomness, in [0, 1), drawn once: the seed that spreads this controller's waits for a rise
   * over one more cool-off, so that independent processes sharing a limit, all cut by the same
   * overshoot, do not all probe it again at the same moment (rate/law.ts, LAW.probeSpread).
   * Default `Math.random`; `seeded(n)` from ebb makes the rises reproducible, and a `random` that
   * returns 0 draws no spread (each rise exactly one cool-off after the change before it).
   */
  readonly random?: Random;
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

class Adaptive implements AdaptiveRate {
  readonly #clock: Clock;
  readonly #gate: Gate;
  readonly #p: LawParams;
  /** The control law's state (rate/law.ts): only the law's functions change it. */
  #law: LawState;
  readonly #defaultClass: number;
  readonly #views: Map<string, AdaptiveRateController & Mechanism>;
  readonly #isFailure: IsFailure | undefined;
  readonly #mechanism: Mechanism;
  #lastSlot = -Infinity;
  /** When the first request went: the rate measured while unlimited covers no time before it. */
  #firstGrant = Infinity;
  /** Grants in the current and the previous whole second, to measure the rate while unlimited. */
  // Stryker disable next-line UnaryOperator: no grant's second equals ±Infinity or follows it
  #second = -Infinity;
  #count = 0;
  #previous = 0;
  /** Successes per 100-ms slot over the last 3 s: the delivered rate. */
  readonly #delivered = new SlotCounter();
  /**
   * Throttles per 100-ms slot over the last 3 s: in the slots that hold one, the service refused
   * what the client offered, whatever the round the request belonged to.
   */
  readonly #refused = new SlotCounter();
  /** What servers said: their pauses (`Retry-After`) and pace (`RateLimit`). */
  readonly #hints: ServerHints;

  constructor(
    o: Required<Omit<AdaptiveRateOptions, 'priorities' | 'maxServerWaitMs' | 'isFailure'>> & {
      priorities: readonly string[];
      isFailure: IsFailure | undefined;
    },
  ) {
    this.#clock = o.clock;
    this.#p = lawParams({ ...o, probeSpread: LAW.probeSpread });
    this.#hints = new ServerHints(o.maxRetryAfterMs);
    this.#law = initialState(this.#p, o.initialRatePerSecond, readNow(o.clock), drawSeed(o.random));
    this.#defaultClass = o.priorities.indexOf(o.defaultPriority);
    this.#gate = new Gate(o.clock, o.priorities.length, {
      waitMs: (now) => this.#waitMs(now),
      grant: (now, woken) => this.#grant(now, woken),
    });
    this.#isFailure = o.isFailure;
    this.#views = new Map(o.priorities.map((name, i) => [name, this.#view(i)]));
    this.#mechanism = this.#mechanismOf(this.#defaultClass);
  }

  /** After a server's pause, a whole cool-off at the rate before the rate rises again. */
  #notBefore(): number {
    return this.#hints.pausedUntil + this.#p.coolOffMs;
  }

  /**
   * Reads the rate — the control law's, or the pace of a server's `RateLimit` field while it is
   * lower; reading changes nothing (a due rise is applied by the next acquire or record).
   */
  get ratePerSecond(): number {
    const now = readNow(this.#clock);
    const rate = planRise(this.#law, this.#p, now, this.#notBefore())?.rate ?? this.#law.rate;
    return this.#hints.paceAt(now, rate);
  }

  get pausedForMs(): number {
    return Math.max(0, this.#hints.pausedUntil - readNow(this.#clock));
  }

  get currentCoolOffMs(): number {
    const now = readNow(this.#clock);
    const s = this.#law;
    // Once the last failed probe is paid for, its backoff no longer holds (see law.ts, probe-at).
    const paid = now >= s.paidAt;
    const plan = planRise(s, this.#p, now, this.#notBefore());
    if (plan) return waitFor(s, this.#p, plan.rate, true, paid ? 0 : plan.relapses);
    return waitFor(s, this.#p, s.rate, s.rose, paid ? 0 : s.relapses);
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
    if (detail !== undefined && this.#hints.hear(now, outcome, detail)) this.#gate.poke();
    if (outcome === 'throttled') {
      this.#refused.add(now);
      // One decrease per round of requests: a throttle of a request sent before the last
      // decrease says nothing about the new rate (TCP, likewise, cuts its window at most once
      // per round trip).
      if (ticket === undefined || ticket === this.#law.epoch) {
        // A rise that fell due before this verdict came is part of the history it judges.
        const due = rise(charge(this.#law, this.#p, now, false), this.#p, now, this.#notBefore());
        this.#law = fall(due, this.#p, now, this.#measure(now));
        if (relapsing(due)) this.#hold(now);
      }
    } else if (outcome === 'success') {
      this.#delivered.add(now);
      this.#law = succeeded(this.#law, now);
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

  /** Applies the rise due at `now`, if any; true if the rate rose. */
  #rise(now: number): boolean {
    const next = rise(this.#law, this.#p, now, this.#notBefore());
    if (next === this.#law) return false;
    this.#law = next;
    return true;
  }

  /** Whether a server's `RateLimit` pace holds now and is below the control law's rate. */
  #paced(now: number): boolean {
    return this.#hints.paces(now, this.#law.rate);
  }

  #waitMs(now: number): number {
    this.#rise(now);
    const paused = this.#hints.pausedUntil - now;
    const paced = this.#paced(now);
    if (this.#law.rate === Infinity && !paced) return paused;
    const wait = this.#lastSlot + 1000 / (paced ? this.#hints.paceRate : this.#law.rate) - now;
    // Only a wait the control law's own rate imposes says demand reaches it (a rise's condition).
    if (wait > 0 && !paced) this.#law = waited(this.#law, now);
    return wait > paused ? wait : paused;
  }

  #grant(now: number, woken: boolean): unknown {
    const paced = this.#paced(now);
    if (this.#law.rate !== Infinity || paced) {
      // A request let through at once starts a new schedule; one the wake-up lets through keeps
      // its slot, if the wake-up was not later than `catchUpMs` (pacing.ts) allows.
      const interval = 1000 / (paced ? this.#hints.paceRate : this.#law.rate);
      const due = this.#lastSlot + interval;
      // Nothing to make up for across a server's pause: it held the requests on purpose.
      const earliest = woken ? Math.max(now - catchUpMs(interval, this.#p.margin), this.#hints.pausedUntil) : now;
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
    return this.#law.epoch;
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

  /**
   * What the meter saw, for a cut: successes per second — the rate the service actually accepted —
   * over the last second, or longer (up to 3 s) until the span holds `LAW.minDelivered` successes,
   * so that a low rate is not read from a handful of responses (BBR's delivery-rate sample, per
   * slot rather than per ACK); whether a throttle came in at least half the slots it spans; and
   * the rate sent over the last second (where the first cut of an unlimited controller starts).
   */
  #measure(now: number): Measurement {
    const hints = this.#hints;
    const pauses = hints.paused ? (from: number, to: number) => hints.pausedWithin(from, to) : undefined;
    const span = this.#delivered.span(now, this.#firstGrant, LAW.minDelivered, pauses);
    return {
      sent: this.#measured(now),
      delivered: (span.count * 1000) / span.spanMs,
      // Known only over a whole second at least: the first few hundred ms of a burst overstate it.
      count: span.covered >= 1000 ? span.count : 0,
      spanMs: span.spanMs,
      refused: 2 * this.#refused.marked(now, span.slots) >= span.slots,
    };
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
    this.#lastSlot = Math.max(this.#lastSlot, now + 1000 / this.#law.rate);
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

/** The law's options, every one given: what {@link lawOptions} returns. */
export type LawOptions = Required<Pick<AdaptiveRateOptions, (typeof LAW_KEYS)[number]>>;

/**
 * Checks the law's options and fills in their defaults — the one table of them, which `ebb/redis`'s
 * `sharedRate` takes too: `initialRatePerSecond` `maxRatePerSecond`, `decreaseFactor` 0.5,
 * `coolOffMs` 1000, `maxCoolOffMs` `max(8000, coolOffMs)`, `margin` 0.05, `increase` 0.1,
 * `minRatePerSecond` 1, `maxRatePerSecond` Infinity. A bad one is a `TypeError`/`RangeError`
 * naming `where`, the option, the value and the fix.
 */
export function lawOptions(where: string, o: AdaptiveRateOptions): LawOptions {
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
  return {
    initialRatePerSecond,
    decreaseFactor,
    coolOffMs,
    maxCoolOffMs,
    margin,
    increase,
    minRatePerSecond,
    maxRatePerSecond,
  };
}

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
  checkKeys(where, known, [
    ...LAW_KEYS,
    'priorities',
    'defaultPriority',
    'maxRetryAfterMs',
    'isFailure',
    'clock',
    'random',
  ]);
  const law = lawOptions(where, o);
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
  const random = o.random === undefined ? Math.random : o.random;
  if (typeof random !== 'function') {
    invalid(where, 'random', random, 'a function returning a number in [0, 1)', 'For example seeded(1) from ebb.');
  }
  return new Adaptive({
    ...law,
    priorities,
    defaultPriority,
    maxRetryAfterMs,
    isFailure,
    clock,
    random,
  });
}

/** The law's seed (a whole number in [0, 2³¹ − 1)) from one draw of `random`, checked where it enters. */
function drawSeed(random: Random): number {
  const u = random();
  if (typeof u !== 'number' || !(u >= 0 && u < 1)) {
    throw new RangeError(`adaptiveRate(): \`random\` returned ${show(u)}; it must return a number in [0, 1).`);
  }
  return Math.floor(u * (2 ** 31 - 1));
}
