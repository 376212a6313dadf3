import { readNow } from '../core/boundary.js';
import { type Clock, clockOption } from '../core/clock.js';
import { checkKeys, optionsObject } from '../core/validate.js';
import type { AttemptContext } from '../retry/contexts.js';
import type { Mechanism } from '../retry/mechanism.js';
import type { IsFailure, Outcome } from '../retry/options.js';
import { type AdaptiveRateController, controllerMechanism, isFailureOption } from './controller.js';
import { Gate } from './gate.js';

/*
 * The AWS SDKs' "adaptive" retry mode, client side: a token bucket (one token a request) whose
 * fill rate follows CUBIC congestion control (RFC 8312) on throttling errors. The constants and
 * the order of operations follow `DefaultRateLimiter` in smithy-lang/smithy-typescript
 * (`packages/core/src/submodules/retry/util-retry/DefaultRateLimiter.ts`, the code behind
 * `@smithy/util-retry` 4.6.2, read in @smithy/core 3.41.0), and its unit tests'
 * published tables are reproduced in aws-adaptive-rate.test.ts. Times are seconds there;
 * the clock here gives milliseconds, divided by 1000.
 */
const BETA = 0.7;
const SCALE_CONSTANT = 0.4;
const SMOOTH = 0.8;
const MIN_FILL_RATE = 0.5;
const MIN_CAPACITY = 1;
/** Rounding left by a refill timed to the token: far below one request at any fill rate. */
const TOKEN_EPSILON = 1e-9;

/** The SDK rounds its rates to 8 decimals (`parseFloat(x.toFixed(8))`); so do we, to match it. */
const precise = (x: number): number => Number.parseFloat(x.toFixed(8));

/** Options of {@link awsAdaptiveRate}. */
export interface AwsAdaptiveRateOptions<T = unknown> {
  /**
   * Which outcomes of the calls it runs in a pipeline are throttles (`'throttled'`: the SDK's
   * throttling errors) — the same predicate as `retry()`'s. Every other outcome is a point on the
   * success curve, as in the SDK. Default `defaultIsFailure`: an error with `throttled: true`.
   * `record()` (`withRetry()`'s `use`) takes the outcome it is given.
   */
  readonly isFailure?: IsFailure<T>;
  /** Time source; default the system clock. */
  readonly clock?: Clock;
}

/** The controller {@link awsAdaptiveRate} returns: the shared interface plus the SDK's state; a pipeline mechanism too. */
export interface AwsAdaptiveRate extends AdaptiveRateController, Mechanism {
  /** Tokens (requests) per second the bucket refills at: `max(0.5, min(CUBIC curve, 2 · measuredRate))`. */
  readonly fillRate: number;
  /** The smoothed rate of responses, per second, over half-second buckets (the SDK's `measuredTxRate`). */
  readonly measuredRate: number;
  /** The CUBIC curve at the last `record`, before the cap at twice `measuredRate` and the 0.5/s floor. */
  readonly cubicRate: number;
  /** `fillRate` once the first throttle has switched the bucket on; `Infinity` before. */
  readonly ratePerSecond: number;
}

class AwsRate implements AwsAdaptiveRate {
  readonly #clock: Clock;
  readonly #gate: Gate;
  readonly #mechanism: Mechanism;
  #enabled = false;
  #tokens = 0;
  #lastMaxRate = 0;
  #measured = 0;
  #requestCount = 0;
  #fillRate = MIN_FILL_RATE;
  #maxCapacity = MIN_CAPACITY;
  #lastThrottle: number;
  /** Seconds of the last refill; undefined (or 0, as in the SDK) until the first. */
  #lastRefill: number | undefined;
  #lastBucket: number;
  #timeWindow = 0;
  #cubic = 0;

  constructor(clock: Clock, isFailure: IsFailure | undefined) {
    this.#clock = clock;
    this.#mechanism = controllerMechanism(
      'awsAdaptiveRate()',
      isFailure,
      (signal) => this.acquire(signal),
      (outcome) => this.record(outcome),
    );
    const t = this.#seconds();
    this.#lastThrottle = t;
    this.#lastBucket = Math.floor(t);
    this.#gate = new Gate(clock, 1, {
      waitMs: (now) => this.#waitMs(now / 1000),
      grant: (now) => {
        if (this.#enabled) {
          this.#refill(now / 1000);
          this.#tokens -= 1;
        }
        return undefined;
      },
    });
  }

  get fillRate(): number {
    return this.#fillRate;
  }

  get measuredRate(): number {
    return this.#measured;
  }

  get cubicRate(): number {
    return this.#cubic;
  }

  get ratePerSecond(): number {
    return this.#enabled ? this.#fillRate : Infinity;
  }

  acquire(signal?: AbortSignal): unknown {
    return this.#gate.acquire(0, signal);
  }

  execute<T>(next: (context: AttemptContext) => Promise<T>, context: AttemptContext): Promise<T> {
    return this.#mechanism.execute(next, context);
  }

  record(outcome: Outcome): void {
    const t = this.#seconds();
    this.#updateMeasuredRate(t);
    let calculated: number;
    if (outcome === 'throttled') {
      const rateToUse = this.#enabled ? Math.min(this.#measured, this.#fillRate) : this.#measured;
      this.#lastMaxRate = rateToUse;
      this.#updateTimeWindow();
      this.#lastThrottle = t;
      calculated = precise(rateToUse * BETA);
      this.#enabled = true;
    } else {
      // The SDK treats every response that is not a throttle — a success or another error —
      // as a point on the success curve.
      this.#updateTimeWindow();
      calculated = precise(SCALE_CONSTANT * (t - this.#lastThrottle - this.#timeWindow) ** 3 + this.#lastMaxRate);
    }
    this.#cubic = calculated;
    const newRate = Math.min(calculated, 2 * this.#measured);
    this.#refill(t);
    this.#fillRate = Math.max(newRate, MIN_FILL_RATE);
    this.#maxCapacity = Math.max(newRate, MIN_CAPACITY);
    this.#tokens = Math.min(this.#tokens, this.#maxCapacity);
    this.#gate.poke();
  }

  #seconds(): number {
    return readNow(this.#clock) / 1000;
  }

  #waitMs(t: number): number {
    if (!this.#enabled) return 0;
    this.#refill(t);
    // A wait of exactly (1 − tokens) / fillRate refills to 1 only up to rounding: 0.9999999999998
    // tokens is a whole token (else a second, sub-nanosecond timer).
    return this.#tokens >= 1 - TOKEN_EPSILON ? 0 : ((1 - this.#tokens) / this.#fillRate) * 1000;
  }

  #refill(t: number): void {
    // The SDK tests `!this.lastTimestamp`: a refill at time 0 leaves it unset, and the next starts over.
    if (!this.#lastRefill) {
      this.#lastRefill = t;
      return;
    }
    this.#tokens = Math.min(this.#maxCapacity, this.#tokens + (t - this.#lastRefill) * this.#fillRate);
    this.#lastRefill = t;
  }

  /** K in CUBIC: the time the curve takes to climb back to the last maximum. */
  #updateTimeWindow(): void {
    // A cube root as the SDK takes it (`Math.pow(x, 1 / 3)`), which can differ from Math.cbrt in the last bit.
    this.#timeWindow = precise(((this.#lastMaxRate * (1 - BETA)) / SCALE_CONSTANT) ** (1 / 3));
  }

  #updateMeasuredRate(t: number): void {
    const bucket = Math.floor(t * 2) / 2;
    this.#requestCount++;
    if (bucket > this.#lastBucket) {
      const current = this.#requestCount / (bucket - this.#lastBucket);
      this.#measured = precise(current * SMOOTH + this.#measured * (1 - SMOOTH));
      this.#requestCount = 0;
      this.#lastBucket = bucket;
    }
  }
}

/**
 * The AWS SDKs' adaptive retry mode as a rate controller: a client-side token bucket that lets
 * requests through freely until the first throttle, then refills at a rate that CUBIC sets —
 * down to 70 % of the measured rate at each throttle (β 0.7), back up along
 * `0.4 · (t − K)³ + lastMax` (scale 0.4), never above twice the measured response rate nor
 * below 0.5 request/s. The measured rate is smoothed (0.8) over half-second buckets.
 *
 * **When to use:** to behave exactly like an AWS SDK client in `adaptive` mode, or to compare
 * with it; {@link adaptiveRate} is ebb's own controller, with priorities and tunable knobs.
 *
 * **Gotchas:** there are no options but the clock and `isFailure`: the constants are the SDK's. Every outcome
 * moves the rate, and each throttle cuts it again (no holding period): a burst of 429s from
 * many concurrent requests drives it to the floor, as in the SDK. The bucket holds at most
 * `max(fillRate, 1)` tokens, so bursts are small. Requests wait in FIFO order (the SDK lets
 * its sleepers race); `record` needs no ticket.
 *
 * @example
 * const rate = awsAdaptiveRate();
 * const s3 = pipeline([retrying({ backoff: presets.awsStandard, budget: awsRetryQuota() }), rate]);
 * await s3.execute(() => send(command));
 * rate.fillRate; // tokens per second after the last response
 */
export function awsAdaptiveRate<T = unknown>(options?: AwsAdaptiveRateOptions<T>): AwsAdaptiveRate {
  const where = 'awsAdaptiveRate()';
  const o = optionsObject(where, options) as AwsAdaptiveRateOptions;
  checkKeys(where, o, ['isFailure', 'clock']);
  const isFailure = isFailureOption(where, o.isFailure);
  const clock = clockOption(where, o.clock);
  return new AwsRate(clock, isFailure);
}
