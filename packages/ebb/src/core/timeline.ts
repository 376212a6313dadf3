/**
 * Time made monotonic: the one rule by which every part of ebb that reads a clock takes a reading
 * that goes back (a wall clock stepped by NTP). A pure step over explicit state, with no clock of
 * its own.
 */

/** What {@link rebase} keeps between readings. @internal */
export interface Timeline {
  /** The last time given out; −Infinity before the first. */
  last: number;
  /** Added to every reading: what the clock was set back by, in all. */
  offset: number;
}

/** A timeline before its first reading. @internal */
export const newTimeline = (): Timeline => ({ last: Number.NEGATIVE_INFINITY, offset: 0 });

/**
 * A finite reading `t` of a clock, made monotonic on `timeline`: a reading before the last one
 * means the clock was set back (a wall clock stepped by NTP, say), and time goes on from where it
 * was — the step is added to every later reading — rather than standing still until the clock
 * catches up, which could take as long as the step. A clock that steps back and returns reads
 * as one jump forward on its return. @internal
 */
export function rebase(timeline: Timeline, t: number): number {
  let time = t + timeline.offset;
  if (time < timeline.last) {
    timeline.offset += timeline.last - time;
    time = timeline.last;
  }
  timeline.last = time;
  return time;
}
