import { describe, isBranded, readNow } from '../core/boundary.js';
import { type Clock, clockOption } from '../core/clock.js';
import { type Random, randomOption } from '../core/random.js';
import { checkKeys, invalid, optionsObject } from '../core/validate.js';
import type { AttemptContext } from '../retry/contexts.js';
import type { Mechanism } from '../retry/mechanism.js';
import type { IsFailure, Outcome } from '../retry/options.js';
import { type AdaptiveRateController, controllerMechanism, isFailureOption } from './controller.js';
import { LocalThrottleError } from './local-throttle-error.js';

export { LocalThrottleError } from './local-throttle-error.js';

/** Options of {@link adaptiveThrottle}. */
export interface AdaptiveThrottleOptions<T = unknown> {
  /**
   * The multiplier K: requests are let through up to K times the accepted ones before any is
   * rejected locally. Lower is more aggressive (1.1 keeps the backend's wasted work small), higher
   * lets more through (more 429s, quicker to notice recovery). A finite number >= 1. Default 2,
   * the book's.
   */
  readonly k?: number;
  /**
   * The sliding window over which requests and accepts are counted, in ms, counted in 60 equal
   * buckets (one bucket is forgotten at a time). Default 60 000: the book keeps two minutes of
   * history; one minute forgets an outage sooner and still holds thousands of requests at the
   * rates rate limiters guard. A finite number > 0.
   */
  readonly windowMs?: number;
  /** Time source; default the system clock. */
  readonly clock?: Clock;
  /** Randomness for the rejection draws, in [0, 1); default `Math.random`. */
  readonly random?: Random;
  /**
   * Which outcomes of the calls it runs in a pipeline are the backend's refusals (`'throttled'`);
   * every other outcome was accepted. The same predicate as `retry()`'s. Default
   * `defaultIsFailure`: an error with `throttled: true` (a 429 through `ebb/http`).
   * `record()` (`withRetry()`'s `use`) takes the outcome it is given.
   */
  readonly isFailure?: IsFailure<T>;
}

/** The controller {@link adaptiveThrottle} returns. */
export interface AdaptiveThrottle extends AdaptiveRateController, Mechanism {
  /** Requests asked for in the window (those rejected locally included). */
  readonly requests: number;
  /** Requests the backend accepted in the window (every outcome but `'throttled'`). */
  readonly accepts: number;
  /** The probability that the next request is rejected locally: `max(0, (requests − K·accepts) / (requests + 1))`. */
  readonly rejectionProbability: number;
  /** Always `Infinity`: the throttle does not pace, it rejects. */
  readonly ratePerSecond: number;
}

/** True for a {@link LocalThrottleError} from this copy of ebb or any other (by its `code`, `'EBB_LOCAL_THROTTLE'`). */
export function isLocalThrottleError(value: unknown): value is LocalThrottleError {
  return isBranded(value, 'EBB_LOCAL_THROTTLE', 'LocalThrottleError');
}

const BUCKETS = 60;

class Throttle implements AdaptiveThrottle, Mechanism {
  readonly #mechanism: Mechanism;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #k: number;
  readonly #bucketMs: number;
  readonly #ids = new Float64Array(BUCKETS).fill(Number.NaN);
  readonly #requests = new Float64Array(BUCKETS);
  readonly #accepts = new Float64Array(BUCKETS);

  constructor(clock: Clock, random: Random, k: number, windowMs: number, isFailure: IsFailure | undefined) {
    this.#mechanism = controllerMechanism(
      'adaptiveThrottle()',
      isFailure,
      (signal) => this.acquire(signal),
      (outcome) => this.record(outcome),
    );
    this.#clock = clock;
    this.#random = random;
    this.#k = k;
    this.#bucketMs = windowMs / BUCKETS;
  }

  get requests(): number {
    return this.#sum(this.#requests, readNow(this.#clock));
  }

  get accepts(): number {
    return this.#sum(this.#accepts, readNow(this.#clock));
  }

  get rejectionProbability(): number {
    const now = readNow(this.#clock);
    return this.#probability(this.#sum(this.#requests, now), this.#sum(this.#accepts, now));
  }

  get ratePerSecond(): number {
    return Number.POSITIVE_INFINITY;
  }

  /**
   * Counts the request, then rejects it with probability `max(0, (requests − K·accepts) /
   * (requests + 1))` — the requests counted before it — by throwing a {@link LocalThrottleError}.
   */
  acquire(signal?: AbortSignal): unknown {
    if (signal?.aborted) throw signal.reason;
    const now = readNow(this.#clock);
    const p = this.#probability(this.#sum(this.#requests, now), this.#sum(this.#accepts, now));
    this.#add(this.#requests, now);
    if (p > 0) {
      const draw = this.#random();
      if (typeof draw !== 'number' || !(draw >= 0 && draw < 1)) {
        throw new RangeError(
          `adaptiveThrottle(): \`random\` returned ${describe(draw)}; it must return a number in [0, 1).`,
        );
      }
      if (draw < p) throw new LocalThrottleError(p);
    }
    return undefined;
  }

  record(outcome: Outcome): void {
    if (outcome !== 'throttled') this.#add(this.#accepts, readNow(this.#clock));
  }

  execute<T>(next: (context: AttemptContext) => Promise<T>, context: AttemptContext): Promise<T> {
    return this.#mechanism.execute(next, context);
  }

  #probability(requests: number, accepts: number): number {
    const p = (requests - this.#k * accepts) / (requests + 1);
    return p > 0 ? p : 0;
  }

  #slot(now: number): [index: number, id: number] {
    const id = Math.floor(now / this.#bucketMs);
    return [((id % BUCKETS) + BUCKETS) % BUCKETS, id];
  }

  #add(counts: Float64Array, now: number): void {
    const [i, id] = this.#slot(now);
    if (this.#ids[i] !== id) {
      this.#ids[i] = id;
      this.#requests[i] = 0;
      this.#accepts[i] = 0;
    }
    counts[i] = (counts[i] as number) + 1;
  }

  /** The counts of the buckets in the window: the current one and the 59 before it. */
  #sum(counts: Float64Array, now: number): number {
    const [, id] = this.#slot(now);
    let total = 0;
    for (let i = 0; i < BUCKETS; i++) {
      const bucket = this.#ids[i] as number;
      if (bucket <= id && bucket > id - BUCKETS) total += counts[i] as number;
    }
    return total;
  }
}

/**
 * Client-side adaptive throttling, from Google's *Site Reliability Engineering* book (chapter 21,
 * "Handling Overload", section "Client-side throttling"): each client remembers, over a sliding
 * window, how many requests it asked for (`requests`) and how many the backend accepted
 * (`accepts`), and rejects a new request locally — without sending it — with probability
 *
 *     max(0, (requests − K · accepts) / (requests + 1))
 *
 * While the backend accepts everything, nothing is rejected. When it starts refusing (429), the
 * client sends at most about K times what gets accepted, so a backend that rejects cheaply is
 * not flooded with requests it will reject anyway. Requests rejected locally count as requests,
 * as in the book, so the probability rises as long as the backend keeps refusing.
 *
 * It is the third controller beside {@link adaptiveRate} (paces, learns the limit) and
 * {@link awsAdaptiveRate} (the AWS SDK's CUBIC token bucket), with the same interface: a mechanism
 * of a pipeline (judging each outcome by `isFailure`: `'throttled'` is a refusal, anything else was
 * accepted), or `withRetry()`'s `use`. A rejected request fails at once with
 * {@link LocalThrottleError} (`code` `'EBB_LOCAL_THROTTLE'`, `throttled: true`): the book's point
 * is to fail fast locally instead of waiting (inside a retry, that attempt fails and is backed off).
 *
 * **Gotchas:** it does not pace, so against a rate limiter it settles where about
 * `(K − 1) / K` of what reaches the backend is refused: with K = 2, about half — it bounds the
 * wasted work, it does not avoid 429s. `accepts` counts every outcome but `'throttled'` (a 500 was
 * accepted: the backend did the work). The window holds 60 buckets of `windowMs / 60`.
 *
 * @example
 * const rate = adaptiveThrottle({ k: 2 });
 * await withRetry(fetch, { use: [rate] })(url); // may reject with LocalThrottleError
 */
export function adaptiveThrottle<T = unknown>(options?: AdaptiveThrottleOptions<T>): AdaptiveThrottle & Mechanism {
  const where = 'adaptiveThrottle()';
  const o = optionsObject(where, options) as AdaptiveThrottleOptions;
  checkKeys(where, o, ['k', 'windowMs', 'clock', 'random', 'isFailure']);
  const k = o.k === undefined ? 2 : o.k;
  if (typeof k !== 'number' || !(k >= 1) || k === Number.POSITIVE_INFINITY) {
    invalid(where, 'k', k, 'a finite number >= 1', 'For example 2, as in the SRE book.');
  }
  const windowMs = o.windowMs === undefined ? 60_000 : o.windowMs;
  if (typeof windowMs !== 'number' || !(windowMs > 0) || windowMs === Number.POSITIVE_INFINITY) {
    invalid(where, 'windowMs', windowMs, 'a finite number > 0', 'For example 60000 (one minute).');
  }
  const random = randomOption(where, o.random) ?? Math.random;
  const isFailure = isFailureOption(where, o.isFailure);
  const clock = clockOption(where, o.clock);
  return new Throttle(clock, random, k, windowMs, isFailure);
}
