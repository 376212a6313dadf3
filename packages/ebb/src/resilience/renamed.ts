/**
 * Refuses an option that ebb 1.0 renamed, saying what to write instead — before the check for
 * unknown options, whose "did you mean" could not know it. `names` maps each old name to the
 * advice. @internal
 */
export function renamed(where: string, options: object, names: Readonly<Record<string, string>>): void {
  for (const key in names) {
    if (key in options) throw new TypeError(`${where}: \`${key}\` was renamed in 1.0: ${names[key]}`);
  }
}

/**
 * Refuses another library's name for an option (opossum's, cockatiel's, Polly's, resilience4j's),
 * saying what ebb takes instead — before the check for unknown options, whose "did you mean"
 * guesses by spelling (`failureThreshold` → `failureRate`, a share, where a count was meant). @internal
 */
export function elsewhere(where: string, options: object, names: Readonly<Record<string, string>>): void {
  for (const key in names) {
    if (key in options) throw new TypeError(`${where}: unknown option \`${key}\` (another library's); ${names[key]}`);
  }
}
