import { type Backoff, describePolicy, GoogleBackoff, presetCatalog, type Schedule, sample, seeded } from 'ebb';
import { formatDuration, parseNumber, parseSeed } from './duration.js';
import { type PolicyFlags, policyFromFlags } from './policy.js';
import { table } from './table.js';
import { UsageError } from './usage-error.js';

/**
 * The most rows `--attempts` prints: a table longer than this is not read by anyone, and the
 * bound keeps a typo such as `--attempts 1e9` from exhausting memory.
 */
export const MAX_ROWS = 10_000;

/** Flags of `ebb schedule`. */
export interface ScheduleFlags extends PolicyFlags {
  readonly list?: boolean;
  readonly attempts?: string;
  readonly json?: boolean;
  readonly sample?: boolean;
  readonly seed?: string;
}

/** What the command prints: one document on stdout. */
export interface Output {
  readonly stdout: string;
}

/** `ebb schedule`: the exact schedule of a preset or custom policy, or one sampled run. */
export function schedule(
  flags: ScheduleFlags,
  randomSeed: () => number = () => Math.floor(Math.random() * 2 ** 32),
): Output {
  if (flags.list) return list(flags.json === true);
  const rows = flags.attempts === undefined ? 10 : parseNumber('--attempts', flags.attempts);
  if (!Number.isSafeInteger(rows) || rows < 0 || rows > MAX_ROWS) {
    throw new UsageError(`--attempts expects a whole number of rows from 0 to ${MAX_ROWS}, got "${flags.attempts}"`);
  }
  if (flags.seed !== undefined && !flags.sample) throw new UsageError('--seed only applies with --sample');
  const { name, info, backoff, summary } = policyFromFlags(flags);
  if (flags.sample) {
    const seed = flags.seed === undefined ? randomSeed() : parseSeed(flags.seed);
    return sampled(name, backoff, rows, seed, flags.json === true);
  }
  const s = describePolicy(backoff, rows);
  if (flags.json) {
    const doc = { name, rows: s.rows, stopsAfterAttempt: s.stopsAfterAttempt, maxElapsedMs: timeBudgetMs(backoff) };
    return { stdout: `${JSON.stringify(doc, null, 2)}\n` };
  }
  const head = info
    ? [
        `${info.id} — ${info.title}`,
        `source: ${info.source}`,
        ...(info.note ? [`note: ${info.note}`] : []),
        // Limit flags changed the preset: the title describes the preset, this line what runs.
        ...(backoff !== info.backoff ? [`with the flags given: ${String(backoff)}`] : []),
      ]
    : [`${name} — ${summary}`];
  const body = table(
    ['attempt', 'delay', 'min', 'max', 'mean'],
    s.rows.map((r) => [
      String(r.attempt),
      formatDuration(r.delayMs),
      formatDuration(r.minDelayMs),
      formatDuration(r.maxDelayMs),
      formatDuration(r.meanDelayMs),
    ]),
  );
  return { stdout: `${[...head, '', body, '', stops(backoff, s)].join('\n')}\n` };
}

function list(json: boolean): Output {
  if (json) {
    const doc = presetCatalog.map(({ id, key, title, source, note }) => ({
      id,
      key,
      title,
      source,
      note: note ?? null,
    }));
    return { stdout: `${JSON.stringify(doc, null, 2)}\n` };
  }
  const width = Math.max(...presetCatalog.map((p) => p.id.length));
  const indent = ' '.repeat(width + 2);
  return {
    stdout: `${presetCatalog.map((p) => `${p.id.padEnd(width)}  ${p.title}\n${indent}source: ${p.source}`).join('\n')}\n`,
  };
}

function sampled(name: string, backoff: Backoff, count: number, seed: number, json: boolean): Output {
  const delays = sample(backoff, { count, random: seeded(seed) });
  let elapsed = 0;
  const rows = delays.map((delayMs, i) => {
    elapsed += delayMs;
    return { attempt: i + 1, delayMs, elapsedMs: elapsed };
  });
  const reason =
    delays.length === count
      ? `shown: the first ${count} waits (--attempts)`
      : backoff.maxAttempts !== Infinity && delays.length === backoff.maxAttempts - 1
        ? `then gives up: attempt ${backoff.maxAttempts} is the last (maxAttempts)`
        : backoff instanceof GoogleBackoff
          ? `then stops: more than ${formatDuration(backoff.maxElapsedTimeMs)} had passed when the next wait was due (maxElapsedTimeMs, checked before each wait)`
          : `then gives up: the next wait would end past the ${formatDuration(backoff.maxElapsedMs)} budget (maxElapsedMs)`;
  if (json) return { stdout: `${JSON.stringify({ name, seed, rows }, null, 2)}\n` };
  const body = table(
    ['attempt', 'wait', 'elapsed'],
    rows.map((r) => [String(r.attempt), formatDuration(r.delayMs), formatDuration(r.elapsedMs)]),
  );
  return {
    stdout: `${name} — one run with seed ${seed}, every attempt failing at once\n\n${body}\n\n${reason}\n`,
  };
}

/**
 * Where the policy stops. For a time budget it also says, assuming attempts that fail at once,
 * after which attempt the budget ends the run: exactly for deterministic policies, as a range
 * (longest waits first, shortest waits last) for randomized ones.
 */
function stops(b: Backoff, s: Schedule): string {
  const parts: string[] = [];
  if (s.stopsAfterAttempt !== null) parts.push(`stops: after attempt ${s.stopsAfterAttempt} (maxAttempts)`);
  if (b.maxElapsedMs !== Infinity) {
    // Where the budget never binds in the rows, maxAttempts (when there is one) ends the run first.
    const [early = b.maxAttempts, late = b.maxAttempts] = budgetEnds(b);
    const when =
      early === Infinity
        ? ''
        : early === b.maxAttempts && late === b.maxAttempts
          ? `;\n       with attempts that fail at once, it never does: maxAttempts ends the run first`
          : early === late
            ? `;\n       with attempts that fail at once, attempt ${early} is the last`
            : `;\n       with attempts that fail at once, the last attempt is between ${early} and ${late === Infinity ? 'later' : late}`;
    parts.push(`stops: rather than wait past ${formatDuration(b.maxElapsedMs)} in all (maxElapsedMs)${when}`);
  }
  if (b instanceof GoogleBackoff && b.maxElapsedTimeMs !== Infinity) {
    // Google's own rule (backoff/google.ts): the budget is checked before each wait, not after.
    parts.push(
      `stops: once more than ${formatDuration(b.maxElapsedTimeMs)} have passed when a wait is due (maxElapsedTimeMs; the last wait may end past it)`,
    );
  }
  if (parts.length === 0) parts.push('never stops by itself: add --max-attempts or --max-elapsed');
  return parts.join('\n');
}

/**
 * The time budget that stops a policy, in ms, or null when none does: its `maxElapsedMs`, or for
 * Google's policies their `maxElapsedTimeMs` (checked before each wait; such a policy's
 * `maxElapsedMs` is Infinity). With `stopsAfterAttempt`, it tells "stops at the budget" from
 * "never stops by itself" (both null) in `--json`.
 */
export function timeBudgetMs(b: Backoff): number | null {
  const ms = b instanceof GoogleBackoff ? Math.min(b.maxElapsedMs, b.maxElapsedTimeMs) : b.maxElapsedMs;
  return ms === Infinity ? null : ms;
}

/** The last attempt when every attempt fails instantly: with the longest and the shortest waits. */
function budgetEnds(b: Backoff): [number | undefined, number | undefined] {
  const limit = Math.min(b.maxAttempts - 1, 10_000);
  const rows = describePolicy(b, limit).rows;
  const last = (pick: (r: (typeof rows)[number]) => number): number | undefined => {
    let t = 0;
    for (const r of rows) {
      t += pick(r);
      if (t > b.maxElapsedMs) return r.attempt;
    }
    return undefined;
  };
  return [last((r) => r.maxDelayMs), last((r) => r.minDelayMs)];
}
