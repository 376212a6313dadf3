// The policy `ebb demo` runs, and the words that name it, read from the library's default policy.
// The default's numbers are written once (ebb's backoff/default.ts); the demo restates none of them:
// it reads them back from the policy's own exact description (describeRow), rebuilds the curve
// from them only to change the first wait (--base), and writes its sentences from the same values.
import {
  type Backoff,
  defaultBackoff,
  describeRow,
  equalJitter,
  exponential,
  fullJitter,
  noJitter,
  withOptions,
} from 'ebb';
import { formatDuration } from './duration.js';

/** What the demo needs to know of the policy it compares with and without its jitter. */
export interface PolicyShape {
  /** The first wait (before jitter), in ms. */
  readonly initialDelayMs: number;
  readonly multiplier: number;
  /** The cap on the un-randomized wait, in ms. */
  readonly maxDelayMs: number;
  /** Calls in all. */
  readonly maxAttempts: number;
  /** Time budget of one operation in ms; `Infinity` for none. */
  readonly maxElapsedMs: number;
  readonly jitter: 'full' | 'equal';
}

/** Past this many rows an exponential curve has long met its cap (or the test stops looking). */
const ROWS_CHECKED = 1_100;

/** The same curve and limits as `shape`, from another first wait. */
function rebuild(shape: PolicyShape, initialDelayMs: number): Backoff {
  const { multiplier, maxDelayMs, maxAttempts, maxElapsedMs, jitter } = shape;
  return exponential({
    initialDelayMs,
    multiplier,
    maxDelayMs,
    maxAttempts,
    maxElapsedMs,
    jitter: jitter === 'full' ? fullJitter : equalJitter,
  });
}

const sameRow = (a: ReturnType<typeof describeRow>, b: ReturnType<typeof describeRow>) =>
  a.delayMs === b.delayMs &&
  a.minDelayMs === b.minDelayMs &&
  a.maxDelayMs === b.maxDelayMs &&
  a.meanDelayMs === b.meanDelayMs;

/**
 * Reads an exponential policy's numbers back from its exact schedule: the first wait, the growth
 * between the first two, the cap (a far row), the jitter from the first row's range. Then checks
 * the reading: the curve rebuilt from those numbers must give the same rows, row by row until the
 * cap, and the same limits. A default that is not such a policy (another curve, another jitter,
 * no jitter at all: nothing for the demo to compare) is refused with what the demo found.
 */
export function shapeOf(policy: Backoff): PolicyShape {
  const first = describeRow(policy, 1);
  const initialDelayMs = first.delayMs;
  const growth = describeRow(policy, 2).delayMs / initialDelayMs;
  const maxDelayMs = describeRow(policy, Number.MAX_SAFE_INTEGER).delayMs;
  const { maxAttempts, maxElapsedMs } = policy;
  const span = `[${first.minDelayMs}, ${first.maxDelayMs}] around a first wait of ${first.delayMs} ms`;
  let jitter: PolicyShape['jitter'];
  if (first.minDelayMs === 0 && first.maxDelayMs === first.delayMs) jitter = 'full';
  else if (first.minDelayMs === first.delayMs / 2 && first.maxDelayMs === first.delayMs) jitter = 'equal';
  else {
    throw new TypeError(
      `ebb demo compares a policy with and without its full or equal jitter; this one draws its first wait from ${span}.`,
    );
  }
  if (!Number.isFinite(maxAttempts)) {
    throw new TypeError('ebb demo needs a policy that stops: this one has no `maxAttempts`.');
  }
  // The quotient of two rows can be off in the last bits (3 × 1.1 / 3 is 1.1000000000000001): the
  // multiplier read to 15 digits is tried first, then the quotient and its nearest neighbours.
  const candidates = [Number(growth.toPrecision(15)), growth, ...[-1, 1, -2, 2].map((k) => ulpsAway(growth, k))];
  for (const multiplier of candidates) {
    const shape: PolicyShape = { initialDelayMs, multiplier, maxDelayMs, maxAttempts, maxElapsedMs, jitter };
    if (sameSchedule(policy, rebuild(shape, initialDelayMs), maxDelayMs)) return shape;
  }
  throw new TypeError(
    `ebb demo reads the default as an exponential curve (${formatDuration(initialDelayMs)} ×${growth}, ` +
      `${formatDuration(maxDelayMs)} cap, ${jitter} jitter), but that curve's schedule differs from the policy's.`,
  );
}

/** The double `k` units in the last place from a positive `x`. */
function ulpsAway(x: number, k: number): number {
  const bits = new Float64Array([x]);
  const word = new BigInt64Array(bits.buffer);
  word[0] = (word[0] as bigint) + BigInt(k);
  return bits[0] as number;
}

/** Whether two policies have the same limits and rows, row by row until the cap and far beyond it. */
function sameSchedule(a: Backoff, b: Backoff, maxDelayMs: number): boolean {
  if (a.maxAttempts !== b.maxAttempts || a.maxElapsedMs !== b.maxElapsedMs) return false;
  for (let n = 1; n <= ROWS_CHECKED; n++) {
    const row = describeRow(a, n);
    if (!sameRow(row, describeRow(b, n))) return false;
    if (row.delayMs >= maxDelayMs) break;
  }
  return sameRow(describeRow(a, Number.MAX_SAFE_INTEGER), describeRow(b, Number.MAX_SAFE_INTEGER));
}

/** One of the two policies of a demo run. */
export interface DemoPolicy {
  /** 'no-jitter' or 'ebb-default'. */
  readonly name: string;
  /** The column heading. */
  readonly label: string;
  readonly backoff: Backoff;
  /** One line: first wait, growth, jitter, cap, attempts (and the time budget, if any). */
  readonly description: string;
}

/** The limits' words, the same for both policies: `20 s cap`, `5 attempts` (and a time budget, if any). */
function limitWords(s: PolicyShape): string[] {
  const words = [`${formatDuration(s.maxDelayMs)} cap`, `${s.maxAttempts} attempts`];
  if (Number.isFinite(s.maxElapsedMs)) words.push(`${formatDuration(s.maxElapsedMs)} budget`);
  return words;
}

/**
 * The two policies: `policy` (ebb's default unless a test passes another) and the same without
 * its jitter. Another `baseDelayMs` changes only the first wait.
 */
export function demoPolicies(baseDelayMs: number, policy: Backoff = defaultBackoff): DemoPolicy[] {
  const s = shapeOf(policy);
  const jittered = baseDelayMs === s.initialDelayMs ? policy : rebuild(s, baseDelayMs);
  const line = (jitter: string) =>
    [`${formatDuration(baseDelayMs)} ×${s.multiplier}`, jitter, ...limitWords(s)].join(', ');
  return [
    {
      name: 'no-jitter',
      label: 'no jitter',
      backoff: withOptions(jittered, { jitter: noJitter }),
      description: line('no jitter'),
    },
    { name: 'ebb-default', label: 'ebb default', backoff: jittered, description: line(`${s.jitter} jitter`) },
  ];
}

/** The sentence under the demo's table that says which policy both crowds ran. */
export function policySentence(baseDelayMs: number, policy: Backoff = defaultBackoff): string {
  const s = shapeOf(policy);
  const limits = limitWords(s).join(', ');
  return baseDelayMs === s.initialDelayMs
    ? `Both crowds run ebb's default policy (${formatDuration(baseDelayMs)} ×${s.multiplier}, ${limits}); one without its ${s.jitter} jitter.`
    : `Both crowds run ebb's default policy (×${s.multiplier}, ${limits}, ${s.jitter} jitter) from a first wait of ${formatDuration(baseDelayMs)}; one without the jitter.`;
}

/** The first wait of ebb's default policy, in ms: the demo's `--base` unless told otherwise. */
export const DEFAULT_BASE_DELAY_MS = shapeOf(defaultBackoff).initialDelayMs;
