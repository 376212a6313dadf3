/** The units `formatMs` chooses from, largest first: [ms per unit, symbol]. */
const UNITS: readonly (readonly [number, string])[] = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'min'],
  [1_000, 's'],
  [1, 'ms'],
  [0.001, 'µs'],
];

/**
 * A duration in milliseconds as a person reads it: three significant digits in the largest unit
 * that keeps the number at 1 or more — `91.6 ms`, `1.5 s`, `2 min`, `51.2 µs`, `3 h`, `116 d`.
 * Trailing zeros are dropped (`20 s`, not `20.0 s`), and the unit is chosen after rounding, so
 * 59,999 ms reads `1 min` rather than `60 s`. Zero is `0 ms`; a negative duration keeps its sign
 * (`-1 ms`); `NaN` and `±Infinity` read `NaN ms`, `Infinity ms`. Units are SI symbols (`min`
 * for minutes, `d` for days) after a space.
 *
 * @example
 * formatMs(91.566) // '91.6 ms'
 * formatMs(120_000) // '2 min'
 */
export function formatMs(ms: number): string {
  const rounded = Math.abs(+ms.toPrecision(3));
  const [size, unit] = UNITS.find(([size]) => rounded >= size && rounded < Infinity) ?? [1, 'ms'];
  return `${+(ms / size).toPrecision(3)} ${unit}`;
}
