import { describe } from '../core/boundary.js';
import { DEV } from '../core/dev.js';
import { type Random, randomOption } from '../core/random.js';
import { brief, check, checkKeys, mistyped, optionsObject } from '../core/validate.js';
import { Backoff, type BackoffPolicy } from './backoff.js';
import { MAX_ROWS } from './describe.js';

const isPolicy = (p: unknown): p is BackoffPolicy =>
  typeof p === 'object' && p !== null && typeof (p as BackoffPolicy).start === 'function';

/** Options of {@link sample}. */
export interface SampleOptions {
  /**
   * The most delays to draw, at most `MAX_ROWS` (a million). Required unless the policy stops
   * by `maxAttempts`, because a policy that never stops would never return.
   */
  readonly count?: number;
  /** Source of randomness; default `Math.random`. Pass `seeded(n)` for a reproducible run. */
  readonly random?: Random;
}

/**
 * The delays a run of `backoff` would sleep, in order, without sleeping: the run an executor
 * would make if every attempt failed at once. It stops where the policy stops: `maxAttempts`,
 * or the time budget (`maxElapsedMs`: a delay that would end past it is not taken, as the
 * executor never sleeps past its deadline), or after `count` delays.
 *
 * @example
 * sample(presets.default, { random: seeded(1) }) // four delays in [0,100), [0,200), [0,400), [0,800)
 */
export function sample(backoff: BackoffPolicy, options: SampleOptions = {}): number[] {
  const where = 'sample()';
  if (!(backoff instanceof Backoff) && !isPolicy(backoff)) {
    mistyped(
      where,
      'backoff',
      backoff,
      DEV ? 'a backoff policy' : '',
      DEV ? 'Build one with exponential() or take one from presets.' : '',
    );
  }
  const o = optionsObject(where, options) as SampleOptions;
  checkKeys(where, o, ['count', 'random']);
  const stops = backoff instanceof Backoff && backoff.maxAttempts !== Infinity;
  if (o.count === undefined && !stops) {
    throw new TypeError(
      DEV
        ? 'sample(): this policy has no `maxAttempts`, so it may never stop; pass `count`.'
        : brief(where, 'count', o.count),
    );
  }
  const limit = check(
    where,
    'count',
    o.count,
    { whole: true, infinity: stops, ...(DEV && { fix: 'It is the number of delays, such as 10.' }) },
    Infinity,
  );
  const most = stops ? Math.min(limit, (backoff as Backoff).maxAttempts - 1) : limit;
  if (most > MAX_ROWS) {
    throw new RangeError(
      DEV
        ? `${where}: this would draw ${most} delays, more than ${MAX_ROWS}; pass a smaller \`count\`, such as 10.`
        : brief(where, 'count', most),
    );
  }
  const run = backoff.start(randomOption(where, o.random));
  const delays: number[] = [];
  let elapsed = 0;
  while (delays.length < limit) {
    // Attempts that fail at once: the elapsed time is the sum of the waits so far.
    const d = run.next(elapsed);
    // A custom policy is user code: a wait that is not a finite number is refused, not returned.
    if (typeof d !== 'number' || !(d < Infinity)) {
      const message = `${where}: backoff.next() returned ${describe(d)}; expected a finite number of ms >= 0, or -1 to stop.`;
      throw typeof d === 'number' ? new RangeError(message) : new TypeError(message);
    }
    if (d < 0 || elapsed + d > backoff.maxElapsedMs) break;
    elapsed += d;
    delays.push(d);
  }
  return delays;
}
