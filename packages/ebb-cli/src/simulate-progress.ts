/** Where a progress bar is drawn: stderr, or a stand-in in tests. */
export interface ProgressStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(text: string): unknown;
}

/** A progress bar for a simulation: `update(done, total)` as it runs, `finish()` at the end. */
export interface ProgressBar {
  update(done: number, total: number): void;
  finish(): void;
}

/**
 * A progress bar on `stream` that appears only on a terminal, and only once a run has taken
 * more than a second (short runs print nothing extra); it redraws at most ten times a second
 * and erases itself when the run ends, so stdout and pipes stay clean.
 */
export function progressBar(
  stream: ProgressStream,
  label: string,
  now: () => number = () => performance.now(),
): ProgressBar {
  const start = now();
  let drawnAt = -Infinity;
  let drawn = false;
  return {
    update(done, total) {
      if (!stream.isTTY) return;
      const t = now();
      if (t - start < 1_000 || t - drawnAt < 100) return;
      drawnAt = t;
      drawn = true;
      const share = total > 0 ? Math.min(1, Math.max(0, done / total)) : 0;
      const width = Math.max(10, Math.min(40, (stream.columns ?? 80) - label.length - 12));
      const full = Math.round(share * width);
      stream.write(`\r${label} [${'#'.repeat(full)}${'.'.repeat(width - full)}] ${Math.floor(share * 100)}%`);
    },
    finish() {
      if (drawn) stream.write('\r\x1b[2K');
      drawn = false;
    },
  };
}
