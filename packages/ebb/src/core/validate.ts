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
 */

/** Renders a value the way a reader would type it: strings quoted, numbers as JS prints them. */
export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value == null) return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  return `an ${typeof value}`;
}

/** Throws a `TypeError` or `RangeError` naming `where`, the option, the value and a fix. */
export function invalid(where: string, name: string, value: unknown, expected: string, fix?: string): never {
  const message = `${where}: expected \`${name}\` to be ${expected}, got ${show(value)}.${fix ? ` ${fix}` : ''}`;
  throw typeof value === 'number' ? new RangeError(message) : new TypeError(message);
}

/** Options a constructor does not know are typos until proven otherwise: reject them. */
export function checkKeys(where: string, options: object, known: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      const hint = known.find((k) => k.toLowerCase().startsWith(key.toLowerCase().slice(0, 4)));
      throw new TypeError(
        `${where}: unknown option \`${key}\`.${hint ? ` Did you mean \`${hint}\`?` : ''} Known options: ${known.join(', ')}.`,
      );
    }
  }
}

/** Checks that `options` is a plain options object (or undefined) and returns it. */
export function optionsObject<T extends object>(where: string, options: T | undefined): T | Record<string, never> {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`${where}: expected an options object, got ${show(options)}.`);
  }
  return options;
}

/*
 * In the checks below, `fallback` is what an omitted (undefined) option means; a fallback of
 * NaN marks the option as required, so that undefined is reported like any other bad value.
 */

/**
 * A number of milliseconds, or any other non-negative quantity, with an inclusive lower bound.
 * `allowInfinity` admits `Infinity` as "no limit".
 */
export function nonNegative(
  where: string,
  name: string,
  value: unknown,
  fallback: number,
  allowInfinity = false,
  fix?: string,
): number {
  if (value === undefined && !Number.isNaN(fallback)) return fallback;
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0 || (!allowInfinity && value === Infinity)) {
    invalid(
      where,
      name,
      value,
      allowInfinity ? 'a number >= 0 (or Infinity for no limit)' : 'a finite number >= 0',
      fix ?? (allowInfinity ? 'Leave it out for no limit.' : 'Durations are milliseconds, such as 500.'),
    );
  }
  return value;
}

/** A finite number in [min, max]. */
export function inRange(
  where: string,
  name: string,
  value: unknown,
  fallback: number,
  min: number,
  max: number,
  fix: string,
): number {
  if (value === undefined && !Number.isNaN(fallback)) return fallback;
  if (typeof value !== 'number' || !(value >= min && value <= max) || !Number.isFinite(value)) {
    invalid(where, name, value, max === Infinity ? `a finite number >= ${min}` : `a number from ${min} to ${max}`, fix);
  }
  return value;
}

/** A whole number >= `min`; `Infinity` is admitted when `allowInfinity`. */
export function count(
  where: string,
  name: string,
  value: unknown,
  fallback: number,
  min: number,
  allowInfinity: boolean,
  fix: string,
): number {
  if (value === undefined && !Number.isNaN(fallback)) return fallback;
  if (
    typeof value !== 'number' ||
    !(value >= min) ||
    (value === Infinity ? !allowInfinity : !Number.isSafeInteger(value))
  ) {
    invalid(where, name, value, `a whole number >= ${min}${allowInfinity ? ' (or Infinity)' : ''}`, fix);
  }
  return value;
}
