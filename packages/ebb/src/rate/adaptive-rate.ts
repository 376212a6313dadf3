import { readNow } from '../core/boundary.js';
import type { Clock } from '../core/clock.js';
import { show } from '../core/validate.js';
import type { AttemptContext } from '../retry/contexts.js';
import type { Mechanism } from '../retry/mechanism.js';
import type { IsFailure, Outcome } from '../retry/options.js';
import {
  type AdaptiveRateConfig,
  type AdaptiveRateOptions,
  adaptiveRateOptions,
  drawSeed,
} from './adaptive-rate-options.js';
import { type AdaptiveRateController, controllerMechanism } from './controller.js';
import { Gate } from './gate.js';
import {
  initialState,
  LAW,
  type LawParams,
  type LawState,
  lawParams,
  type Measurement,
  ownRules,
  planRise,
  relapsing,
  rise,
  succeeded,
  throttled,
  waited,
  waitFor,
} from './law.js';
import { SentRate, SlotCounter } from './meter.js';
import { catchUpMs } from './pacing.js';
import { ServerHints } from './server-hints.js';

export type { AdaptiveRateOptions } from './adaptive-rate-options.js';

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
  /** Grants over the last second, to measure the rate while unlimited. */
  readonly #sent = new SentRate();
  /** Successes per 100-ms slot over the last 3 s: the delivered rate. */
  readonly #delivered = new SlotCounter();
  /**
   * Throttles per 100-ms slot over the last 3 s: in the slots that hold one, the service refused
   * what the client offered, whatever the round the request belonged to.
   */
  readonly #refused = new SlotCounter();
  /** What servers said: their pauses (`Retry-After`) and pace (`RateLimit`). */
  readonly #hints: ServerHints;

  constructor(o: AdaptiveRateConfig) {
    this.#clock = o.clock;
    this.#p = lawParams({ ...o, ...ownRules() });
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
        // The law's steps for a throttle, in their order, are `throttled`'s (rate/law.ts): a rise
        // that was due stays due whether or not a request went between (the fleet sees no grant).
        const notBefore = this.#notBefore();
        const relapse = relapsing(this.#law, this.#p, now, notBefore);
        this.#law = throttled(this.#law, this.#p, now, this.#measure(now), notBefore);
        if (relapse) this.#hold(now);
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
    this.#sent.add(now);
    return this.#law.epoch;
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
    const span = this.#delivered.span(now, this.#sent.first, LAW.minDelivered, pauses);
    return {
      sent: this.#sent.perSecond(now),
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
 *   additive increase (Chiu–Jain): processes sharing a limit, each its own controller, drift
 *   toward equal shares for tens of seconds, then wander (`sharedRate` shares evenly); against a
 *   limiter with a burst the rate creeps up to the limit and is cut by about the margin.
 * - A throttle right after a rise is a *relapse*: the rise is undone, the next request waits two
 *   spacings at the new rate (a limiter's window that counts refused requests drains), and the
 *   cool-off doubles (up to `maxCoolOffMs`, 8 s); a probe is judged over half the cool-off
 *   before it (at least two base cool-offs once relapsed), and one that holds at or above the
 *   rate that relapsed halves the cool-off again (one that holds below it does not).
 * - A relapse is a failed probe, charged the 429s it drew: no rise goes above the level it fell
 *   back to until 2 % of the requests sent since pay for them, and then the backoff is released.
 *   So probes above a steady limit cost about 2 % of the requests at any rate: every 50
 *   requests when a failed probe costs one 429 (2 s at 25 r/s), rarely when it costs many.
 * - A throttle at a rate that held (no rise since the last change, outside a failed probe's
 *   charge) is charged one 429 the same way: no rise above that rate until 50 requests at it pay
 *   for it. Processes sharing one limit, each with its own controller, are throttled by each
 *   other's probes: charged only for their own, they would spend one budget each.
 *   It also gives back three base steps (0.3 × the rate; 1.5 r/s above 5 r/s), gated there till paid.
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
  return new Adaptive(adaptiveRateOptions(options));
}
