import { DEV } from '../core/dev.js';
import { brief, invalid } from '../core/validate.js';
import { Backoff } from './backoff.js';
import { SEGMENTS } from './segment.js';

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
    if (!(value instanceof Backoff))
      invalid(
        'chain()',
        name,
        value,
        DEV ? 'a Backoff value' : '',
        DEV ? 'Build one with exponential() or take a preset.' : '',
      );
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
  return new Backoff(
    [...head.filter((s) => s.rows > 0), ...second[SEGMENTS]],
    first.maxAttempts - 1 + second.maxAttempts,
    second.maxElapsedMs,
  );
}
