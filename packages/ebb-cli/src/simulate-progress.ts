import { formatDuration } from './duration.js';

/** Where a progress bar is drawn: stderr, or a stand-in in tests. */
export interface ProgressStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(text: string): unknown;
}

/** A progress bar for a simulation: `update(done, total)` as it runs, `finish()` at the end. */
export interface ProgressBar {
  /** `done` of `total` units of work (not of simulated time): the share drawn, and the time left. */
  update(done: number, total: number): void;
  finish(): void;
}

/** The bar's timing: silent for the first second; the time left once this share is done. */
const BAR = { quietMs: 1_000, redrawMs: 100, estimateAfterShare: 0.01 } as const;

/**
 * The time left, from the time taken so far and the share of the work done, when the work goes
 * at a steady pace: `elapsed × (1 − share) ÷ share`. Undefined before there is enough to go on.
 */
export function timeLeftMs(elapsedMs: number, share: number): number | undefined {
  if (!(share >= BAR.estimateAfterShare) || !(elapsedMs > 0)) return undefined;
  return share >= 1 ? 0 : (elapsedMs * (1 - share)) / share;
}

/** "about 1 min 20 s left", "about 8 s left", "under a second left". */
export function timeLeftWords(ms: number | undefined): string {
  if (ms === undefined) return 'estimating the time left';
  if (ms < 1_000) return 'under a second left';
  if (ms < 60_000) return `about ${Math.round(ms / 1_000)} s left`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms - minutes * 60_000) / 10_000) * 10;
  return `about ${formatDuration(minutes * 60_000)}${seconds > 0 && minutes < 10 ? ` ${seconds} s` : ''} left`;
}

/**
 * A progress bar on `stream` that appears only on a terminal, and only once a run has taken
 * more than a second (short runs print nothing extra); it redraws at most ten times a second,
 * shows the share of the work done and the time left at that pace, and erases itself when the
 * run ends, so stdout and pipes stay clean.
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
      if (t - start < BAR.quietMs || t - drawnAt < BAR.redrawMs) return;
      drawnAt = t;
      drawn = true;
      const share = total > 0 ? Math.min(1, Math.max(0, done / total)) : 0;
      const left = timeLeftWords(timeLeftMs(t - start, share));
      const width = Math.max(10, Math.min(40, (stream.columns ?? 80) - label.length - left.length - 15));
      const full = Math.round(share * width);
      stream.write(
        `\r\x1b[2K${label} [${'#'.repeat(full)}${'.'.repeat(width - full)}] ${Math.floor(share * 100)}% · ${left}`,
      );
    },
    finish() {
      if (drawn) stream.write('\r\x1b[2K');
      drawn = false;
    },
  };
}
