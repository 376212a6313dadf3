import type { Random } from '../core/random.js';
import { checkKeys, nonNegative, optionsObject } from '../core/validate.js';

/** One-way network delay: `|N(meanMs, sdMs)|`, as in Brooker's simulator. */
export interface NetworkModel {
  /** Mean one-way delay in ms. Default 10. */
  readonly meanMs?: number;
  /** Standard deviation in ms. Default 2. */
  readonly sdMs?: number;
}

/**
 * A sampler of one-way delays `|N(mean, sd)|` from `random` (Box–Muller, both deviates used).
 * Brooker's simulator uses a normal delay "close enough for the model comparison" (aws-samples/
 * aws-arch-backoff-simulator, `Net.delay`: `abs(random.normalvariate(10, 2))`). @internal
 */
export function networkDelay(where: string, model: NetworkModel | undefined, random: Random): () => number {
  const o = optionsObject(`${where} network`, model) as NetworkModel;
  checkKeys(`${where} network`, o, ['meanMs', 'sdMs']);
  const mean = nonNegative(where, 'network.meanMs', o.meanMs, 10);
  const sd = nonNegative(where, 'network.sdMs', o.sdMs, 2);
  let spare = 0;
  let hasSpare = false;
  return () => {
    let z: number;
    if (hasSpare) {
      z = spare;
      hasSpare = false;
    } else {
      // 1 − u is in (0, 1]: the logarithm stays finite.
      const r = Math.sqrt(-2 * Math.log(1 - random()));
      const a = 2 * Math.PI * random();
      z = r * Math.cos(a);
      spare = r * Math.sin(a);
      hasSpare = true;
    }
    const d = mean + sd * z;
    return d < 0 ? -d : d;
  };
}
