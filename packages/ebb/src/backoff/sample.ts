import type { Random } from '../core/random.js';
import { count } from '../core/validate.js';
import { Backoff, type BackoffPolicy } from './backoff.js';

/** Options of {@link sample}. */
export interface SampleOptions {
  /**
   * The most delays to draw. Required unless the policy stops by `maxAttempts`, because a
   * policy that never stops would never return.
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
  const stops = backoff instanceof Backoff && backoff.maxAttempts !== Infinity;
  if (options.count === undefined && !stops) {
    throw new TypeError('sample(): this policy has no `maxAttempts`, so it may never stop; pass `count`.');
  }
  const limit = count(
    'sample()',
    'count',
    options.count,
    Infinity,
    0,
    stops,
    'It is the number of delays, such as 10.',
  );
  const run = backoff.start(options.random);
  const delays: number[] = [];
  let elapsed = 0;
  while (delays.length < limit) {
    // Attempts that fail at once: the elapsed time is the sum of the waits so far.
    const d = run.next(elapsed);
    if (d < 0 || elapsed + d > backoff.maxElapsedMs) break;
    elapsed += d;
    delays.push(d);
  }
  return delays;
}
