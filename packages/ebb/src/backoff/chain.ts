import { DEV } from '../core/dev.js';
import type { Random } from '../core/random.js';
import { brief } from '../core/validate.js';
import { Backoff, type BackoffRun, notABackoff, randomOf } from './backoff.js';
import { drawDelay, SEGMENTS, type Segment } from './segment.js';

/**
 * A policy of several segments, each serving its `rows` before the next takes over. Only
 * `chain()` (and `withOptions()` of a chained policy) make one; a one-segment policy's run
 * needs no switching. @internal
 */
class Chained extends Backoff {
  override start(random: Random = Math.random): BackoffRun {
    return new ChainRun(this, random);
  }
}

/** A chained policy's run: the rows of its first segment, then of the next, each from its row 1. */
class ChainRun implements BackoffRun {
  readonly #backoff: Backoff;
  readonly #random: Random;
  #failures = 0;
  #segment = 0;
  #row = 0;
  /** The last delay, kept for decorrelated jitter (its draw ignores it on a segment's row 1). */
  #previous = 0;

  constructor(backoff: Backoff, random: Random) {
    this.#backoff = backoff;
    this.#random = randomOf(random);
  }

  next(): number {
    const b = this.#backoff;
    if (++this.#failures >= b.maxAttempts) return -1;
    let s = b[SEGMENTS][this.#segment] as Segment;
    if (++this.#row > s.rows) {
      s = b[SEGMENTS][++this.#segment] as Segment;
      this.#row = 1;
    }
    const delay = drawDelay(s, this.#row, this.#random, this.#previous);
    if (s.jitter.chained) this.#previous = delay;
    return delay;
  }
}

/** A policy over `segments`: chained when there are several. @internal */
export function policyOf(segments: readonly Segment[], maxAttempts: number, maxElapsedMs: number): Backoff {
  return new (segments.length > 1 ? Chained : Backoff)(segments, maxAttempts, maxElapsedMs);
}

/**
 * Chains two policies: `first`'s rows until it runs out of attempts, then `second`'s rows from
 * its row 1. `first` must stop by attempts and have no time budget of its own; the result stops
 * when `second` does (`maxAttempts` adds up: `first`'s waits, then `second`'s), and takes
 * `second`'s time budget.
 *
 * @example
 * // one immediate retry, then exponential backoff: 1 + 5 attempts in all
 * chain(constant({ delayMs: 0, jitter: noJitter, maxAttempts: 2 }), exponential())
 */
export function chain(first: Backoff, second: Backoff): Backoff {
  for (const [name, value] of [
    ['first', first],
    ['second', second],
  ] as const) {
    if (!(value instanceof Backoff)) notABackoff('chain()', name, value);
  }
  if (first.maxAttempts === Infinity) {
    throw new TypeError(
      DEV
        ? 'chain(): `first` never runs out of attempts, so `second` would never start; give it `maxAttempts`.'
        : brief('chain()', 'first.maxAttempts', Infinity),
    );
  }
  if (first.maxElapsedMs !== Infinity) {
    throw new TypeError(
      DEV
        ? 'chain(): `first` has a time budget (`maxElapsedMs`); put the budget on `second`, which governs the whole run.'
        : brief('chain()', 'first.maxElapsedMs', first.maxElapsedMs),
    );
  }
  let remaining = first.maxAttempts - 1;
  const head = first[SEGMENTS].map((s) => {
    const rows = Math.min(s.rows, remaining);
    remaining -= rows;
    return { ...s, rows };
  });
  return policyOf(
    [...head.filter((s) => s.rows > 0), ...second[SEGMENTS]],
    first.maxAttempts - 1 + second.maxAttempts,
    second.maxElapsedMs,
  );
}
