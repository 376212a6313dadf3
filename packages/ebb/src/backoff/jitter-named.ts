import { DEV } from '../core/dev.js';
import { mistyped } from '../core/validate.js';
import { decorrelatedJitter } from './decorrelated.js';
import type { Jitter } from './jitter.js';
import { additiveJitter } from './jitter-additive.js';
import { equalJitter } from './jitter-equal.js';
import { fullJitter } from './jitter-full.js';
import { noJitter } from './jitter-none.js';
import { proportionalJitter } from './jitter-proportional.js';

/** The jitter values without a parameter, by name. */
const FIXED: Readonly<Record<string, Jitter>> = {
  none: noJitter,
  full: fullJitter,
  equal: equalJitter,
  decorrelated: decorrelatedJitter,
};

/** The jitter values with one number after their name, by name. */
const WITH_PARAMETER: Readonly<Record<string, (n: number) => Jitter>> = {
  proportional: proportionalJitter,
  additive: additiveJitter,
};

/**
 * The jitter value a name stands for — the catalogue of every kind, for configuration read as
 * text (the CLI's `--jitter`, a JSON file): `'none'`, `'full'`, `'equal'`, `'decorrelated'`,
 * `'proportional:FACTOR'` (`'proportional:0.2'` is ±20 %) and `'additive:MS'` (`'additive:1000'`
 * adds up to 1 s). These are the names jitter values carry (`fullJitter.name`) and policies
 * write in `toJSON()`, so a policy's JSON names its jitter in a form this reads back.
 *
 * A program that names its jitter in code imports the value itself (`fullJitter`, …): importing
 * this function brings every kind, decorrelated jitter's mean computation included.
 *
 * @example
 * exponential({ jitter: jitterNamed(config.jitter ?? 'full') })
 */
export function jitterNamed(name: string): Jitter {
  const [kind = '', parameter, ...rest] = typeof name === 'string' ? name.split(':') : [];
  if (parameter === undefined && Object.hasOwn(FIXED, kind)) return FIXED[kind] as Jitter;
  if (parameter !== undefined && rest.length === 0 && Object.hasOwn(WITH_PARAMETER, kind)) {
    // An empty or blank parameter is not 0: Number('') would be.
    return (WITH_PARAMETER[kind] as (n: number) => Jitter)(parameter.trim() === '' ? Number.NaN : Number(parameter));
  }
  return mistyped(
    'jitterNamed()',
    'name',
    name,
    DEV ? "one of 'none', 'full', 'equal', 'decorrelated', 'proportional:FACTOR' or 'additive:MS'" : '',
    DEV ? "Full jitter ('full') suits most clients." : '',
  );
}
