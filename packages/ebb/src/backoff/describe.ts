import { check, invalid, type Rule } from '../core/validate.js';
import { Backoff, notABackoff } from './backoff.js';
import { capped, clampOf, locate } from './segment.js';

/** One row of a schedule: the wait after attempt `attempt` failed. All values in milliseconds. */
export interface ScheduleRow {
  /** The attempt that failed; the wait comes before attempt `attempt + 1`. */
  readonly attempt: number;
  /**
   * The un-randomized delay, after truncation and caps. For full jitter it is the top of the
   * range; for slotted policies the longest wait, (W−1) slots; for decorrelated jitter the
   * envelope `min(cap, initial · multiplier^attempt)`.
   */
  readonly delayMs: number;
  /** The shortest wait jitter can produce (exact). */
  readonly minDelayMs: number;
  /** The longest wait jitter can produce (exact; a supremum where the range is half-open). */
  readonly maxDelayMs: number;
  /** The expected wait (exact, but for decorrelated jitter: numeric, about 1e-5 relative). */
  readonly meanDelayMs: number;
}

/** The schedule of a policy: its first rows and where it stops. */
export interface Schedule {
  readonly rows: readonly ScheduleRow[];
  /**
   * The attempt after which the policy gives up (`maxAttempts`), or `null` when only its time
   * budget, or nothing, stops it.
   */
  readonly stopsAfterAttempt: number | null;
}

/**
 * The most rows {@link describePolicy} returns and the most delays {@link sample} draws: a million. A
 * larger request is refused with a `RangeError` rather than left to run out of memory; for one
 * far row, use {@link describeRow}, which computes any row up to `Number.MAX_SAFE_INTEGER` directly.
 */
export const MAX_ROWS = 1_000_000;

const ROWS: Rule = { whole: true, fix: 'It is the number of rows, such as 10.' };
const ATTEMPT: Rule = { whole: true, min: 1, fix: 'Row 1 is the wait after the first call failed.' };

/**
 * The exact schedule of a policy, without running it: for each of the first `count` failed
 * attempts (at most {@link MAX_ROWS}), the un-randomized delay and the min, max and mean of the
 * randomized one. Rows end early where `maxAttempts` stops the policy. The time budget (`maxElapsedMs`) depends on how
 * long attempts take, so it does not cut rows; read it from `backoff.maxElapsedMs`.
 *
 * @example
 * describePolicy(presets.googleHttpClient, 3).rows.map((r) => [r.minDelayMs, r.maxDelayMs])
 * // [[250, 750], [375, 1125], [562.5, 1687.5]]
 */
export function describePolicy(backoff: Backoff, rows: number): Schedule {
  if (!(backoff instanceof Backoff)) notABackoff('describePolicy()', 'backoff', backoff);
  const n = check('describePolicy()', 'count', rows, ROWS, 0);
  if (n > MAX_ROWS) {
    invalid(
      'describePolicy()',
      'count',
      n,
      `at most ${MAX_ROWS}`,
      'For one far row, use describeRow(backoff, attempt).',
    );
  }
  const last = Math.min(n, backoff.maxAttempts - 1);
  const out: ScheduleRow[] = [];
  for (let attempt = 1; attempt <= last; attempt++) out.push(describeRow(backoff, attempt));
  return { rows: out, stopsAfterAttempt: backoff.maxAttempts === Infinity ? null : backoff.maxAttempts };
}

/**
 * One row of {@link describePolicy}: the wait after attempt `attempt` failed, for any attempt up to
 * `Number.MAX_SAFE_INTEGER` (the row is computed directly, not by iterating). It does not check
 * `maxAttempts`.
 */
export function describeRow(backoff: Backoff, attempt: number): ScheduleRow {
  const n = check('describeRow()', 'attempt', attempt, ATTEMPT, 1);
  const [s, k] = locate(backoff, n);
  const j = s.jitter;
  // Decorrelated rows are a Markov chain, and Google's waits whole milliseconds drawn its own
  // way: their jitter values compute their rows. The others are uniform on their span.
  if (j.row) return j.row(s, k, n);
  const d = capped(s, k);
  const [low, high] = (j.span as NonNullable<typeof j.span>)(d, s);
  const clamp = clampOf(s);
  return {
    attempt: n,
    delayMs: d,
    minDelayMs: low < clamp ? low : clamp,
    maxDelayMs: high < clamp ? high : clamp,
    meanDelayMs: clampedUniformMean(low, high, clamp),
  };
}

/** E[min(U[low, high], clamp)]: the mean of a uniform draw clamped from above. */
export function clampedUniformMean(low: number, high: number, clamp: number): number {
  if (high <= clamp) return low + (high - low) / 2;
  if (low >= clamp) return clamp;
  const below = (clamp - low) / (high - low);
  return below * (low + (clamp - low) / 2) + (1 - below) * clamp;
}
