/**
 * Option validation shared by every constructor in ebb.
 *
 * Every check throws at construction, never at the first retry, and the message names the
 * option, the value it got and what to pass instead:
 *
 *     RangeError: exponential(): expected `multiplier` to be a finite number >= 1, got -2.
 *     Use 1 for a constant delay or a growth factor such as 2.
 *
 * A value of the wrong type is a `TypeError`; a number outside the option's domain
 * (NaN included) is a `RangeError`. Nothing is clamped silently.
 *
 * In the production build (`DEV` false, core/dev.ts) the same checks throw the same classes with
 * the short form of each message — where, the option and the value:
 *
 *     RangeError: exponential(): `multiplier` -2
 */
import { DEV } from './dev.js';

/**
 * Renders a value the way a reader would type it: strings quoted (past 40 characters, cut with
 * `…`, so that a megabyte a callback returned does not become a megabyte of message), numbers,
 * booleans, `null`, `undefined`, symbols and bigints (`10n`) as JS writes them; objects, arrays
 * and functions by their kind (`an object`; a revoked proxy too), never their contents.
 */
export function show(value: unknown): string {
  try {
    return typeof value === 'string'
      ? JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
      : typeof value === 'bigint'
        ? `${value}n`
        : typeof value === 'function'
          ? 'a function'
          : Array.isArray(value)
            ? 'an array'
            : typeof value === 'object' && value
              ? 'an object'
              : String(value);
  } catch {
    // Only `Array.isArray` can throw here, for a revoked proxy: a message about it must not.
    return 'an object';
  }
}

/**
 * The short form of a message, the production build's: where, the option (or the function that
 * answered) and the value — ``retry(): `backoff` an object``.
 */
export function brief(where: string, name: string, value: unknown): string {
  return `${where}: \`${name}\` ${show(value)}`;
}

/** The message of {@link invalid} and {@link mistyped}. */
function said(where: string, name: string, value: unknown, expected: string, fix?: string): string {
  return DEV
    ? `${where}: expected \`${name}\` to be ${expected}, got ${show(value)}.${fix ? ` ${fix}` : ''}`
    : brief(where, name, value);
}

/**
 * Throws, for an option that takes a number, a `RangeError` when `value` is a number (out of the
 * option's domain, NaN included) and a `TypeError` when it is not, naming `where`, the option,
 * the value and a fix. In the production build, the short form ({@link brief}): `expected` and
 * `fix` are not read there, so a caller may pass them as `DEV ? '…' : ''` and ship no text.
 */
export function invalid(where: string, name: string, value: unknown, expected: string, fix?: string): never {
  throw new (typeof value === 'number' ? RangeError : TypeError)(said(where, name, value, expected, fix));
}

/**
 * Throws a `TypeError` for an option that takes something other than a number — a function, a
 * policy, a string, an array, an object, one of some names — whatever `value` is: a number there
 * is of the wrong kind, not out of range. Message as {@link invalid}'s.
 */
export function mistyped(where: string, name: string, value: unknown, expected: string, fix?: string): never {
  throw new TypeError(said(where, name, value, expected, fix));
}

/**
 * Options a constructor does not know are typos until proven otherwise: reject them, with the
 * likely one and the known ones (the production build: the option and its value, a `TypeError`).
 */
export function checkKeys(where: string, options: object, known: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      if (!DEV) throw new TypeError(brief(where, key, (options as Record<string, unknown>)[key]));
      const hint = known.find((k) => k.toLowerCase().startsWith(key.toLowerCase().slice(0, 4)));
      throw new TypeError(
        `${where}: unknown option \`${key}\`.${hint ? ` Did you mean \`${hint}\`?` : ''} Known options: ${known.join(', ')}.`,
      );
    }
  }
}

/**
 * Checks that `options` is a plain options object (or undefined) and returns it. `first`, the
 * function's main option, makes the fix of the message (a number or an array passed where the
 * object goes: `constant(5000)` → "Pass an options object: constant({ delayMs: … })").
 */
export function optionsObject<T extends object>(
  where: string,
  options: T | undefined,
  first?: string,
): T | Record<string, never> {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(
      DEV
        ? `${where}: expected an options object, got ${show(options)}.${first ? ` Pass an options object: ${where.slice(0, -1)}{ ${first}: … }).` : ''}`
        : brief(where, 'options', options),
    );
  }
  return options;
}

/**
 * One option's rule, declared as data and read by one formatter ({@link check}): the kind of
 * number, its bounds and the fix the message suggests. The wording of "expected …" is derived
 * from the bounds, so every option of a kind reads the same way (p-retry's
 * `validateNumberOption` and valibot's rule objects are the models).
 *
 * @example
 * const MULTIPLIER: Rule = { min: 1, fix: 'Use 1 for a constant delay, or a growth factor such as 2.' };
 * check('exponential()', 'multiplier', -2, MULTIPLIER, 2);
 * // RangeError: exponential(): expected `multiplier` to be a finite number >= 1, got -2. Use 1 …
 */
export interface Rule {
  /** A count: whole numbers only (safe integers). Default false. */
  readonly whole?: boolean;
  /** Inclusive lower bound. Default 0. */
  readonly min?: number;
  /** Inclusive upper bound. Default none (but finite). */
  readonly max?: number;
  /** `Infinity` is accepted, as "no limit". Default false. */
  readonly infinity?: boolean;
  /** What the value must be, where the bounds do not say it well (`a finite number > 0`). */
  readonly expected?: string;
  /**
   * What to pass instead. Default, for non-counts: "Leave it out for no limit." when
   * `infinity`, else "Durations are milliseconds, such as 500.".
   */
  readonly fix?: string;
}

/** A duration in ms (or any quantity >= 0), finite. */
export const DURATION_MS: Rule = {};
/** A limit in ms (or any quantity >= 0); `Infinity`, or leaving it out, means none. */
export const LIMIT_MS: Rule = { infinity: true };

/**
 * Checks `value`, the option `name` of `where`, against `rule` and returns it. `undefined` gives
 * `fallback`; without a fallback the option is required and `undefined` is reported like any
 * other bad value. A non-number is a `TypeError`, a number the rule refuses (NaN included) a
 * `RangeError`; the message names `where`, the option, the value and the fix.
 */
export function check(where: string, name: string, value: unknown, rule: Rule, fallback?: number): number {
  if (value === undefined && fallback !== undefined) return fallback;
  const { whole, min = 0, max = Infinity, infinity } = rule;
  if (
    typeof value !== 'number' ||
    !(value >= min && (value === Infinity ? infinity : value <= max && (!whole || Number.isSafeInteger(value))))
  ) {
    invalid(
      where,
      name,
      value,
      DEV
        ? (rule.expected ??
            (whole
              ? `a whole number >= ${min}${infinity ? ' (or Infinity)' : ''}`
              : infinity
                ? `a number >= ${min} (or Infinity for no limit)`
                : max === Infinity
                  ? `a finite number >= ${min}`
                  : `a number from ${min} to ${max}`))
        : '',
      DEV
        ? (rule.fix ??
            (whole ? undefined : infinity ? 'Leave it out for no limit.' : 'Durations are milliseconds, such as 500.'))
        : '',
    );
  }
  return value;
}

/*
 * The positional helpers below predate the rules and stay while modules outside backoff/ call
 * them (the executor's `retry/options.ts` and `retry/poll.ts`, and http/, rate/, resilience/,
 * redis/, sim/); each is one rule. In them, `fallback` is what an omitted (undefined) option
 * means; a fallback of NaN marks the option as required.
 */

const given = (fallback: number) => (Number.isNaN(fallback) ? undefined : fallback);

/**
 * A number of milliseconds, or any other non-negative quantity, with an inclusive lower bound.
 * `allowInfinity` admits `Infinity` as "no limit". Same as `check()` with `{ infinity, fix }`.
 */
export function nonNegative(
  where: string,
  name: string,
  value: unknown,
  fallback: number,
  allowInfinity = false,
  fix?: string,
): number {
  return check(where, name, value, { infinity: allowInfinity, fix }, given(fallback));
}

/** A finite number in [min, max]. Same as `check()` with `{ min, max, fix }`. */
export function inRange(
  where: string,
  name: string,
  value: unknown,
  fallback: number,
  min: number,
  max: number,
  fix: string,
): number {
  return check(where, name, value, { min, max, fix }, given(fallback));
}

/** A whole number >= `min`; `Infinity` is admitted when `allowInfinity`. Same as `check()` with `{ whole, min, infinity, fix }`. */
export function count(
  where: string,
  name: string,
  value: unknown,
  fallback: number,
  min: number,
  allowInfinity: boolean,
  fix: string,
): number {
  return check(where, name, value, { whole: true, min, infinity: allowInfinity, fix }, given(fallback));
}
