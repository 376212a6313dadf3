// The settings of `ebb demo`: its flags, its knobs and their defaults, and what one run measures.
// The two policies it compares are read from ebb's default in demo-policy.ts.
import { type Backoff, defaultBackoff } from 'ebb';
import { DEFAULT_BASE_DELAY_MS } from './demo-policy.js';
import { parseDuration, parseNumber, parseSeed } from './duration.js';
import { UsageError } from './usage-error.js';

/** Flags of `ebb demo`. */
export interface DemoFlags {
  readonly clients?: string;
  readonly base?: string;
  readonly seed?: string;
  readonly json?: boolean;
}

/** The demo's knobs (the CLI sets `clients`, `baseDelayMs` and `seed`; tests may set the rest). */
export interface DemoSettings {
  /** Clients that fail together and retry. */
  readonly clients: number;
  /** The first wait of both policies, in ms (by default the first wait of `policy`). */
  readonly baseDelayMs: number;
  /**
   * The policy both crowds run, one of them without its jitter: ebb's default (`defaultBackoff`).
   * The demo's other numbers and words about the policy are read from it (demo-policy.ts).
   */
  readonly policy: Backoff;
  /** The server's capacity: requests handled at once. */
  readonly maxConcurrent: number;
  /** Requests that may wait for a slot; the rest are shed at once. */
  readonly maxQueue: number;
  /** Virtual time the server spends on one request, in ms. */
  readonly workMs: number;
  /** Share of handled requests that fail anyway (a 500, as a flaky backend's do). */
  readonly flakyRate: number;
  /** Seeds the server's flakiness and the clients' jitter. */
  readonly seed: number;
}

/** The settings `ebb demo` runs with unless told otherwise: ebb's real default policy. */
export const DEFAULT_SETTINGS: DemoSettings = {
  clients: 100,
  baseDelayMs: DEFAULT_BASE_DELAY_MS,
  policy: defaultBackoff,
  maxConcurrent: 4,
  maxQueue: 8,
  workMs: 20,
  flakyRate: 0.05,
  seed: 2026,
};

/** Retries are counted in windows this long to find the peak load. */
export const PEAK_WINDOW_MS = 10;

/** What one run measured. Times are virtual ms from the moment the clients fail together. */
export interface RunSummary {
  /** 'no-jitter' or 'ebb-default'. */
  readonly name: string;
  readonly policy: string;
  readonly clients: number;
  /** Clients that got a 200. */
  readonly served: number;
  /** Clients whose attempts ran out first. */
  readonly gaveUp: number;
  /** Requests the server received, first attempts and retries. */
  readonly requests: number;
  /** requests / served; null when no client was served. */
  readonly requestsPerSuccess: number | null;
  /** Requests answered 503 at once because slots and queue were full. */
  readonly shed: number;
  /** Handled requests that failed anyway (the flaky 500s). */
  readonly flaky: number;
  /** The most retries that reached the server within any {@link PEAK_WINDOW_MS}. */
  readonly peakRetries: number;
  /** When the last client got its 200, if every client did; null otherwise. */
  readonly allServedMs: number | null;
  /** When the last client finished, served or not. */
  readonly lastDoneMs: number;
}

/** Where the demo reports progress: stderr, or a stand-in in tests. */
export interface ProgressStream {
  readonly isTTY?: boolean;
  write(text: string): unknown;
}

/** Turns the flags into settings, refusing what is not a number in range. */
export function demoSettings(flags: DemoFlags): DemoSettings {
  let { clients, baseDelayMs, seed } = DEFAULT_SETTINGS;
  if (flags.clients !== undefined) {
    clients = parseNumber('--clients', flags.clients);
    if (!Number.isSafeInteger(clients) || clients < 1 || clients > 2000) {
      throw new UsageError(`--clients expects a whole number from 1 to 2000, got "${flags.clients}"`);
    }
  }
  if (flags.base !== undefined) {
    baseDelayMs = parseDuration('--base', flags.base);
    if (baseDelayMs < 1 || baseDelayMs > 5_000) {
      throw new UsageError(`--base expects a duration from 1ms to 5s, got "${flags.base}"`);
    }
  }
  if (flags.seed !== undefined) seed = parseSeed(flags.seed);
  return { ...DEFAULT_SETTINGS, clients, baseDelayMs, seed };
}
