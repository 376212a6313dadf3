/**
 * Reports how far a simulation has got: `done` out of `total` units of its work (slots, runs,
 * requests, or milliseconds of simulated time where the load is steady). Where the total can only
 * be estimated (the overload model's requests), `total` is the estimate, raised to `done` if the
 * run goes past it and equal to `done` at the end. Called a few hundred times a run at most, so
 * that a caller can draw a progress bar; it must not throw.
 */
export type ProgressCallback = (done: number, total: number) => void;

/** Checks an `onProgress` option. @internal */
export function progressOption(where: string, value: unknown): ProgressCallback | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'function') {
    throw new TypeError(
      `${where}: expected \`onProgress\` to be a function (done, total) => void, got ${typeof value}.`,
    );
  }
  return value as ProgressCallback;
}
