import { Backoff } from '../backoff/backoff.js';
import { describePolicy, describeRow, type ScheduleRow } from '../backoff/describe.js';
import { count, mistyped } from '../core/validate.js';
import { slotLengthOf } from './slots.js';

/**
 * The expected backoff, in slots, after `collisions` collisions under binary exponential
 * backoff: the wait is uniform over `0 … 2^c − 1` slots, so its mean is `E(c) = (2^c − 1)/2`
 * (Wikipedia, "Exponential backoff", § Expected backoff). With a `ceiling` (802.3's backoff
 * limit of 10), `c` stops growing there: `(2^min(c, ceiling) − 1)/2`.
 *
 * @example
 * expectedBackoff(3) // 3.5 slots, the article's worked example
 * expectedBackoff(12, 10) // 511.5: truncated at the 10th collision
 */
export function expectedBackoff(collisions: number, ceiling = Infinity): number {
  const c = count('expectedBackoff()', 'collisions', collisions, Number.NaN, 0, false, 'Count collisions: 1, 2, …');
  const top = count('expectedBackoff()', 'ceiling', ceiling, Infinity, 1, true, 'The 802.3 ceiling is 10.');
  return (2 ** (c < top ? c : top) - 1) / 2;
}

/**
 * The exact mean wait, in slots, after `collisions` failures of a slotted policy (row `c` of its
 * schedule, from {@link describePolicy}): `(W − 1)/2` for its window `W`. For `slotted({ cwMin: 0 })`
 * with no ceiling below `c` this is {@link expectedBackoff}`(c)`.
 *
 * @throws TypeError when `backoff` is not a slotted policy.
 */
export function meanBackoffSlots(backoff: Backoff, collisions: number): number {
  const slotMs = slottedOnly('meanBackoffSlots()', backoff);
  const c = count(
    'meanBackoffSlots()',
    'collisions',
    collisions,
    Number.NaN,
    1,
    false,
    'Row 1 follows the first collision.',
  );
  return describeRow(backoff, c).meanDelayMs / slotMs;
}

/** One row of {@link scheduleBounds}: a row of `describePolicy()` plus the total waited so far. All ms. */
export interface BoundsRow extends ScheduleRow {
  /** The least total wait before attempt `attempt + 1` (sum of the rows' minima). */
  readonly elapsedMinMs: number;
  /** The expected total wait before attempt `attempt + 1` (sum of the rows' means). */
  readonly elapsedMeanMs: number;
  /** The greatest total wait before attempt `attempt + 1` (sum of the rows' maxima). */
  readonly elapsedMaxMs: number;
}

/**
 * The mean and bounds of any backoff value, per row and accumulated: for each of the first
 * `rows` failed attempts, the exact min / mean / max of the wait (from {@link describePolicy}) and of
 * the total waited up to then, assuming attempts that fail at once. Rows end where `maxAttempts`
 * stops the policy; the time budget (`maxElapsedMs`) is not applied, as `describePolicy` does not.
 *
 * @example
 * scheduleBounds(presets.awsStandard, 5).at(-1) // { attempt: 2, …, elapsedMeanMs: 150, elapsedMaxMs: 300 }
 */
export function scheduleBounds(backoff: Backoff, rows: number): BoundsRow[] {
  let min = 0;
  let mean = 0;
  let max = 0;
  return describePolicy(backoff, rows).rows.map((r) => {
    min += r.minDelayMs;
    mean += r.meanDelayMs;
    max += r.maxDelayMs;
    return { ...r, elapsedMinMs: min, elapsedMeanMs: mean, elapsedMaxMs: max };
  });
}

/** The slot length of a slotted policy, or a TypeError naming the caller. @internal */
export function slottedOnly(where: string, backoff: unknown): number {
  if (!(backoff instanceof Backoff)) {
    mistyped(where, 'backoff', backoff, 'a Backoff value', 'Build one with slotted() or take presets.ethernet.');
  }
  const slotMs = slotLengthOf(backoff);
  if (slotMs === undefined) {
    throw new TypeError(`${where}: \`backoff\` must be a slotted policy (slotted(), presets.ethernet, presets.wifi).`);
  }
  return slotMs;
}
