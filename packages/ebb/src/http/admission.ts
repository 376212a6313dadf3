import { checkKeys, count, invalid, nonNegative, optionsObject } from '../core/validate.js';

/** Options of `shed` and `shedFetch`. */
export interface ShedOptions {
  /** Requests handled at once (a whole number >= 1). Required. */
  readonly maxConcurrent: number;
  /** Requests allowed to wait, in arrival order, for a free slot (>= 0; `Infinity` for no limit). Default 0. */
  readonly maxQueue?: number;
  /**
   * The `Retry-After` a shed request is answered with, in milliseconds; sent as whole seconds,
   * rounded up (RFC 9110's delay-seconds). Default 1000. `0` sends `Retry-After: 0`: "come back
   * whenever", leaving the wait to the client's own backoff. At most {@link MAX_RETRY_AFTER_MS}
   * (2^31 − 1 s, about 68 years); a larger value throws a `RangeError` rather than send a header
   * some clients cannot read.
   */
  readonly retryAfterMs?: number;
}

/** Counters of a shedding handler, for logs, tests and dashboards. */
export interface ShedStats {
  /** Requests being handled now. */
  readonly running: number;
  /** Requests waiting now. */
  readonly queued: number;
  /** Requests admitted so far (run at once or after waiting). */
  readonly admitted: number;
  /** Requests answered 503 at once because slots and queue were full. */
  readonly shed: number;
  /** Requests whose client went away while they waited (never handled, never answered). */
  readonly left: number;
  /** The most requests handled at once. */
  readonly peakRunning: number;
  /** The longest the queue has been. */
  readonly peakQueued: number;
}

/**
 * The longest `retryAfterMs` that `shed` and `shedFetch` accept: (2^31 − 1) s, in ms.
 *
 * delay-seconds is `1*DIGIT` with no bound in RFC 9110, but the value must be written as digits
 * (`String(1e21)` is `"1e+21"`, which no parser reads as seconds) and read by every client:
 * many parse it into a signed 32-bit integer (Java's `Integer.parseInt` fails above
 * 2,147,483,647 and the hint is then lost, so the client retries at once), and RFC 9111 §1.2.2
 * names 2^31 as the limit a recipient of a delta-seconds may assume. ebb refuses larger values
 * rather than clamp them silently.
 */
export const MAX_RETRY_AFTER_MS = 2_147_483_647_000;

/** The body of a shed response: short, and says what to do. @internal */
export function shedMessage(retryAfterSeconds: number): string {
  return `Service overloaded: retry after ${retryAfterSeconds} s.\n`;
}

/** Where an entry is: waiting, handled now, handled and over, or gone before its turn. @internal */
export type State = 'queued' | 'running' | 'done' | 'left';

/** One request's place in the gate. @internal */
export class Entry {
  state: State = 'queued';
  constructor(readonly start: () => void) {}
}

/**
 * The admission rule both `shed` variants share, with no I/O of its own: up to `maxConcurrent`
 * entries run, up to `maxQueue` wait in order, the rest are refused at once — the AWS seed
 * article's "queue up to a limit, then answer NO WAIT and let the client back off". An entry
 * is released exactly once, whether it ran or left the queue. @internal
 */
export class Admission {
  readonly maxConcurrent: number;
  readonly maxQueue: number;
  readonly retryAfterSeconds: number;
  running = 0;
  queued = 0;
  admitted = 0;
  shed = 0;
  left = 0;
  peakRunning = 0;
  peakQueued = 0;
  // A FIFO: an array read from `head`, compacted when half is spent. Entries that left stay
  // until reached (lazy removal), so leaving is O(1).
  #queue: Entry[] = [];
  #head = 0;

  constructor(where: string, options: ShedOptions) {
    const o = optionsObject(where, options) as ShedOptions;
    checkKeys(where, o, ['maxConcurrent', 'maxQueue', 'retryAfterMs']);
    this.maxConcurrent = count(
      where,
      'maxConcurrent',
      o.maxConcurrent,
      Number.NaN,
      1,
      false,
      'It is how many requests run at once, such as 8.',
    );
    this.maxQueue = count(where, 'maxQueue', o.maxQueue, 0, 0, true, 'Use 0 to shed at once when all slots are busy.');
    const ms = nonNegative(where, 'retryAfterMs', o.retryAfterMs, 1000, false, 'For example 1000 for one second.');
    if (ms > MAX_RETRY_AFTER_MS) {
      invalid(
        where,
        'retryAfterMs',
        ms,
        `at most ${MAX_RETRY_AFTER_MS} (2^31 − 1 seconds)`,
        'Retry-After is sent as whole seconds, and many clients read it as a 32-bit integer.',
      );
    }
    // Rounded up, and never below the wait asked for: ms / 1000 can round down (or underflow to 0
    // for 5e-324), and ceil would then lose the last second.
    let seconds = Math.ceil(ms / 1000);
    if (seconds * 1000 < ms) seconds++;
    this.retryAfterSeconds = seconds;
  }

  /** Runs `entry` now, queues it, or refuses it (false: answer 503 at once). */
  admit(entry: Entry): boolean {
    if (this.running < this.maxConcurrent) {
      this.admitted++;
      this.#run(entry);
      return true;
    }
    if (this.queued < this.maxQueue) {
      this.#queue.push(entry);
      this.queued++;
      if (this.queued > this.peakQueued) this.peakQueued = this.queued;
      return true;
    }
    this.shed++;
    return false;
  }

  /** The entry's request is over (answered, failed, or its client left): frees its place. */
  release(entry: Entry): void {
    if (entry.state === 'running') {
      entry.state = 'done';
      this.running--;
      this.#pump();
    } else if (entry.state === 'queued') {
      entry.state = 'left';
      this.queued--;
      this.left++;
    }
  }

  stats(): ShedStats {
    return {
      running: this.running,
      queued: this.queued,
      admitted: this.admitted,
      shed: this.shed,
      left: this.left,
      peakRunning: this.peakRunning,
      peakQueued: this.peakQueued,
    };
  }

  #run(entry: Entry): void {
    entry.state = 'running';
    this.running++;
    if (this.running > this.peakRunning) this.peakRunning = this.running;
    entry.start();
  }

  #pump(): void {
    while (this.running < this.maxConcurrent && this.#head < this.#queue.length) {
      const next = this.#queue[this.#head++] as Entry;
      if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
      if (next.state !== 'queued') continue;
      this.queued--;
      this.admitted++;
      try {
        this.#run(next);
      } catch (error) {
        // A handler that throws is the handler's bug, reported as it would be without the gate
        // (uncaught), but it must not stop the queue behind it.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}
