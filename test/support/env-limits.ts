// Limits of the test run that the environment may set (EBB_TEST_FILE_LIMIT_S for the stall
// guard, EBB_PROPERTY_LIMIT_S for the unit projects' properties), read one way.

/**
 * A limit in ms from the environment variable `name`: a positive number of seconds, else
 * `defaultMs` when unset or empty; anything else is refused, naming the variable.
 */
export function secondsFromEnv(name: string, value: string | undefined, defaultMs: number): number {
  if (value === undefined || value === '') return defaultMs;
  const s = Number(value);
  if (!(s > 0) || !Number.isFinite(s)) {
    throw new RangeError(
      `${name}: expected a positive number of seconds, got ${JSON.stringify(value)}. Leave it unset for ${defaultMs / 1000} s.`,
    );
  }
  return s * 1000;
}
