import { type Clock, clockOption } from '../core/clock.js';
import { checkKeys, invalid, nonNegative, optionsObject, show } from '../core/validate.js';
import type { Outcome } from '../retry/options.js';
import type { AdaptiveRateController } from './controller.js';
import { Gate } from './gate.js';

/** Options of {@link adaptiveRate}. Rates are requests per second; durations milliseconds. */
export interface AdaptiveRateOptions {
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
   * rise), up to `maxCoolOffMs`, and halves after each rise that holds. Default 1000.
   */
  readonly coolOffMs?: number;
  /** The longest cool-off, however many relapses. Default 32 000 (five doublings of 1 s). */
  readonly maxCoolOffMs?: number;
  /**
   * The first rise after a fall, as a fraction of the rate: 0.1 adds 10 %. Each rise that holds
   * doubles the next step, up to `1 / decreaseFactor − 1`, but a doubled step never passes the
   * rate last throttled. Must rise less than a decrease falls: `(1 + increase) · decreaseFactor
   * < 1`. Default 0.1.
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
  /** Time source; default the system clock. */
  readonly clock?: Clock;
}

/** The controller {@link adaptiveRate} returns. */
export interface AdaptiveRate extends AdaptiveRateController {
  /**
   * The same controller seen by one priority class: pass it as `rate` to give an operation that
   * class. Throws a `TypeError` for a name not in `priorities`.
   */
  priority(name: string): AdaptiveRateController;
  /** The cool-off that the next rise waits for, in ms, as backed off by relapses. */
  readonly currentCoolOffMs: number;
  /** Requests waiting for their turn, over every class. */
  readonly waiting: number;
}

/**
 * Timer lateness the pacer makes up for: when its wake-up comes late, the requests whose slots
 * fell due in the last 25 ms all go, so a late timer does not lower the rate.
 */
const CATCH_UP_MS = 25;

type Change = 'none' | 'decrease' | 'increase';

class Adaptive implements AdaptiveRate {
  readonly #clock: Clock;
  readonly #gate: Gate;
  readonly #decrease: number;
  readonly #increase: number;
  /** The largest rise, `1 / decreaseFactor − 1`: one rise never outdoes one fall. */
  readonly #maxStep: number;
  readonly #coolOff: number;
  readonly #maxCoolOff: number;
  readonly #maxRelapses: number;
  readonly #min: number;
  readonly #max: number;
  readonly #defaultClass: number;
  readonly #views: Map<string, AdaptiveRateController>;
  #rate: number;
  /** Bumped at every decrease; a grant's ticket is the epoch it was made in. */
  #epoch = 0;
  #changedAt: number;
  #lastChange: Change = 'none';
  /** The rate before the last rise, restored on a relapse. */
  #before = 0;
  #relapses = 0;
  /** The next rise, as a fraction: `increase`, doubled after each rise that held. */
  #step: number;
  /** The rate last throttled: a doubled step never crosses it (the base step may). */
  #ceiling = Infinity;
  /** Since the last change: a success was recorded / a request had to wait for the limit. */
  #evidence = false;
  #saturated = false;
  #lastSlot = -Infinity;
  /** When the first request went: the rate measured while unlimited covers no time before it. */
  #firstGrant = Infinity;
  /** Grants in the current and the previous whole second, to measure the rate while unlimited. */
  #second = -Infinity;
  #count = 0;
  #previous = 0;

  constructor(o: Required<Omit<AdaptiveRateOptions, 'priorities'>> & { priorities: readonly string[] }) {
    this.#clock = o.clock;
    this.#decrease = o.decreaseFactor;
    this.#increase = o.increase;
    this.#step = o.increase;
    this.#maxStep = 1 / o.decreaseFactor - 1;
    this.#coolOff = o.coolOffMs;
    this.#maxCoolOff = o.maxCoolOffMs;
    this.#maxRelapses = Math.max(0, Math.ceil(Math.log2(o.maxCoolOffMs / o.coolOffMs)));
    this.#min = o.minRatePerSecond;
    this.#max = o.maxRatePerSecond;
    this.#rate = o.initialRatePerSecond;
    this.#changedAt = o.clock.now();
    this.#defaultClass = o.priorities.indexOf(o.defaultPriority);
    this.#gate = new Gate(o.clock, o.priorities.length, {
      waitMs: (now) => this.#waitMs(now),
      grant: (now, woken) => this.#grant(now, woken),
    });
    this.#views = new Map(o.priorities.map((name, i) => [name, this.#view(i)]));
  }

  get ratePerSecond(): number {
    if (this.#rise(this.#clock.now())) this.#gate.poke();
    return this.#rate;
  }

  get currentCoolOffMs(): number {
    return Math.min(this.#maxCoolOff, this.#coolOff * 2 ** this.#relapses);
  }

  get waiting(): number {
    return this.#gate.waiting;
  }

  acquire(signal?: AbortSignal): unknown {
    return this.#gate.acquire(this.#defaultClass, signal);
  }

  record(outcome: Outcome, ticket?: unknown): void {
    const now = this.#clock.now();
    if (outcome === 'throttled') {
      // One decrease per round of requests: a throttle of a request sent before the last
      // decrease says nothing about the new rate (TCP, likewise, cuts its window at most once
      // per round trip).
      if (ticket === undefined || ticket === this.#epoch) this.#fall(now);
    } else if (outcome === 'success') {
      this.#evidence = true;
      if (this.#rise(now)) this.#gate.poke();
    }
  }

  priority(name: string): AdaptiveRateController {
    const view = this.#views.get(name);
    if (!view) {
      throw new TypeError(
        `adaptiveRate().priority(): expected \`name\` to be one of ${[...this.#views.keys()].map(show).join(', ')}, got ${show(name)}.`,
      );
    }
    return view;
  }

  #view(cls: number): AdaptiveRateController {
    const self = this;
    return {
      acquire: (signal?: AbortSignal) => self.#gate.acquire(cls, signal),
      record: (outcome: Outcome, ticket?: unknown) => self.record(outcome, ticket),
      get ratePerSecond() {
        return self.ratePerSecond;
      },
    };
  }

  #waitMs(now: number): number {
    this.#rise(now);
    if (this.#rate === Infinity) return 0;
    const wait = this.#lastSlot + 1000 / this.#rate - now;
    if (wait > 0) this.#saturated = true;
    return wait;
  }

  #grant(now: number, woken: boolean): unknown {
    if (this.#rate !== Infinity) {
      // A request let through at once starts a new schedule; one the wake-up lets through keeps
      // its slot, if the wake-up was not more than CATCH_UP_MS late.
      const due = this.#lastSlot + 1000 / this.#rate;
      const earliest = woken ? now - CATCH_UP_MS : now;
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

  #fall(now: number): void {
    let rate: number;
    if (this.#rate === Infinity) {
      this.#ceiling = Math.max(this.#measured(now), this.#min);
      rate = this.#ceiling * this.#decrease;
      this.#relapses = 0;
    } else if (this.#lastChange === 'increase') {
      // A relapse: the last rise was one too many. Undo it, and wait twice as long before the next.
      this.#ceiling = this.#rate;
      rate = this.#before;
      if (this.#relapses < this.#maxRelapses) this.#relapses++;
    } else {
      // Throttled at a rate that had held: conditions changed. Fall, and recover at full speed.
      this.#ceiling = this.#rate;
      rate = this.#rate * this.#decrease;
      this.#relapses = 0;
    }
    this.#rate = Math.min(this.#max, Math.max(this.#min, rate));
    this.#step = this.#increase;
    this.#change(now, 'decrease');
    this.#epoch++;
  }

  /** Applies the rise due at `now`, if any; true if the rate rose. */
  #rise(now: number): boolean {
    if (!this.#evidence || !this.#saturated || this.#rate >= this.#max) return false;
    if (now - this.#changedAt < this.currentCoolOffMs) return false;
    if (this.#lastChange === 'increase') {
      // The previous rise held for a whole cool-off: relax the backoff, and take a bigger step.
      if (this.#relapses > 0) this.#relapses--;
      this.#step = Math.min(this.#maxStep, this.#step * 2);
    }
    // Fast back up to the rate last throttled, but only the base step at or beyond it.
    if (this.#rate * (1 + this.#step) > this.#ceiling) this.#step = this.#increase;
    this.#before = this.#rate;
    this.#rate = Math.min(this.#max, this.#rate * (1 + this.#step));
    this.#change(now, 'increase');
    return true;
  }

  #change(now: number, change: Change): void {
    this.#changedAt = now;
    this.#lastChange = change;
    this.#evidence = false;
    this.#saturated = false;
  }
}

const rate = (where: string, name: string, value: unknown, fallback: number, allowInfinity: boolean): number => {
  const v = nonNegative(where, name, value, fallback, allowInfinity, 'Rates are requests per second, such as 50.');
  if (v === 0) invalid(where, name, v, 'a number > 0', 'Rates are requests per second, such as 50.');
  return v;
};

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
 *   only the base step probes.
 * - A throttle right after a rise is a *relapse*: the rise is undone and the cool-off doubles
 *   (up to `maxCoolOffMs`, 32 s); a rise that holds for a whole cool-off halves it again. So
 *   near the service's limit the controller probes above it ever more rarely, and settles
 *   within one `increase` step below it.
 * - Until the first throttle, with no `initialRatePerSecond`, nothing is limited; the first
 *   throttle starts from `decreaseFactor` × the rate granted over the last second.
 *
 * **Pacing.** Requests go evenly spaced, `1000 / rate` ms apart (a late timer is made up for,
 * up to 25 ms). With `priorities`, a waiting request of a more important class always goes
 * first; FIFO within a class. No timer runs while nobody waits.
 *
 * **When to use:** many callers in one process share one service that answers 429 or another
 * "slow down" when overloaded; pass the same controller as `rate` to every `retry()`.
 *
 * **Gotchas:** only `'throttled'` moves the rate down — plain failures are a retry budget's
 * business (`tokenBudget`, `ratioBudget`). Priorities are strict: a flood of high-priority
 * requests can starve the low ones while the rate is short. The controller is per process; a
 * fleet of processes converges because each one backs off on its own throttles.
 *
 * @example
 * const rate = adaptiveRate({ initialRatePerSecond: 50 });
 * const interactive = rate.priority('high');
 * await retry(() => call(), { rate: interactive });
 * rate.ratePerSecond; // what it allows now
 */
export function adaptiveRate(options?: AdaptiveRateOptions): AdaptiveRate {
  const where = 'adaptiveRate()';
  const o = optionsObject(where, options) as AdaptiveRateOptions;
  checkKeys(where, o, [
    'initialRatePerSecond',
    'decreaseFactor',
    'coolOffMs',
    'maxCoolOffMs',
    'increase',
    'minRatePerSecond',
    'maxRatePerSecond',
    'priorities',
    'defaultPriority',
    'clock',
  ]);
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
  const decreaseFactor = o.decreaseFactor ?? 0.5;
  if (typeof decreaseFactor !== 'number' || !(decreaseFactor > 0 && decreaseFactor < 1)) {
    invalid(
      where,
      'decreaseFactor',
      decreaseFactor,
      'a number between 0 and 1 (exclusive)',
      'For example 0.5 halves the rate.',
    );
  }
  const increase = o.increase ?? 0.1;
  if (typeof increase !== 'number' || !(increase > 0) || !Number.isFinite(increase)) {
    invalid(where, 'increase', increase, 'a finite number > 0', 'For example 0.1 for +10 % a step.');
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
  const maxCoolOffMs = nonNegative(where, 'maxCoolOffMs', o.maxCoolOffMs, Math.max(32_000, coolOffMs));
  if (maxCoolOffMs < coolOffMs) invalid(where, 'maxCoolOffMs', maxCoolOffMs, `a number >= coolOffMs (${coolOffMs})`);
  const priorities = o.priorities ?? ['high', 'normal', 'low'];
  if (
    !Array.isArray(priorities) ||
    priorities.length === 0 ||
    priorities.some((p) => typeof p !== 'string' || p === '') ||
    new Set(priorities).size !== priorities.length
  ) {
    invalid(where, 'priorities', priorities, 'a non-empty array of distinct names', "For example ['high', 'low'].");
  }
  const defaultPriority = o.defaultPriority ?? 'normal';
  if (!priorities.includes(defaultPriority)) {
    invalid(
      where,
      'defaultPriority',
      defaultPriority,
      `one of the priorities (${priorities.map(show).join(', ')})`,
      o.defaultPriority === undefined ? 'Name the class of requests made through the controller itself.' : undefined,
    );
  }
  const clock = clockOption(where, o.clock);
  return new Adaptive({
    initialRatePerSecond,
    decreaseFactor,
    coolOffMs,
    maxCoolOffMs,
    increase,
    minRatePerSecond,
    maxRatePerSecond,
    priorities,
    defaultPriority,
    clock,
  });
}
