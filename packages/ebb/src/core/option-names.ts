/**
 * Refuses an option whose name is known to be wrong — one ebb 1.0 renamed or moved, or another
 * library's name for an option — with a `TypeError` saying what to write instead: `lead(key)`
 * opens the sentence ({@link RENAMED}, {@link MOVED}, {@link ELSEWHERE}) and `names[key]`, the
 * advice, ends it. Call it before `checkKeys()` (core/validate.ts), whose "did you mean" guesses by spelling and
 * would guess wrong for these (`failureThreshold`, a count, is no `failureRate`, a share).
 * @internal
 */
export function refuseNamed(
  where: string,
  options: object,
  names: Readonly<Record<string, string>>,
  lead: (key: string) => string,
): void {
  for (const key in names) {
    if (key in options) throw new TypeError(`${where}: ${lead(key)} ${names[key]}`);
  }
}

/** {@link refuseNamed}'s lead for an option ebb 1.0 renamed. @internal */
export const RENAMED = (key: string): string => `\`${key}\` was renamed in 1.0:`;
/** {@link refuseNamed}'s lead for an option of 0.x that moved to another place. @internal */
export const MOVED = (key: string): string => `\`${key}\` moved;`;
/** {@link refuseNamed}'s lead for another library's name for an option. @internal */
export const ELSEWHERE = (key: string): string => `unknown option \`${key}\` (another library's);`;
