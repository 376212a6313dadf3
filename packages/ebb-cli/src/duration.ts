import { UsageError } from './usage-error.js';

const UNITS: Record<string, number> = {
  us: 0.001,
  µs: 0.001,
  ms: 1,
  s: 1_000,
  m: 60_000,
  min: 60_000,
  h: 3_600_000,
};

/**
 * Parses a duration as the CLI accepts it, into milliseconds: `500ms`, `1.5s`, `2m`, `1h`,
 * `51.2us` (or `µs`). The unit is required — `--initial 100` could mean 100 ms or 100 s, so it is
 * refused with a hint (`did you mean 100ms?`) — except for `0`, which needs none. `Infinity` (or
 * `inf`) means no limit where the option allows it.
 */
export function parseDuration(flag: string, text: string, allowInfinity = false): number {
  const t = text.trim();
  if (allowInfinity && /^(inf|infinity)$/i.test(t)) return Infinity;
  const m = /^(\d+(?:\.\d+)?|\.\d+)(?:e([+-]?\d+))?\s*(us|µs|ms|s|m|min|h)?$/.exec(t);
  if (!m) {
    throw new UsageError(
      `${flag} expects a duration such as 500ms, 1.5s, 2m or 51.2us${allowInfinity ? ' (or Infinity)' : ''}, got "${text}"`,
    );
  }
  if (m[3] === undefined && Number(m[1]) !== 0) {
    throw new UsageError(`${flag} needs a unit: did you mean ${t}ms? (or ${t}s; units: us, ms, s, m, h)`);
  }
  const value = Number(m[1]) * 10 ** Number(m[2] ?? 0) * (UNITS[m[3] ?? 'ms'] as number);
  if (!Number.isFinite(value)) throw new UsageError(`${flag}: "${text}" is too large`);
  return value;
}

/**
 * Parses a duration that must be longer than 0, such as a service time that a simulation's size
 * is divided by; `example` is a value to suggest (`10ms`).
 */
export function positiveDuration(flag: string, text: string, example: string): number {
  const ms = parseDuration(flag, text);
  if (ms === 0) throw new UsageError(`${flag} must be longer than 0, got "${text}": such as ${example}`);
  return ms;
}

/** The longest delay Node.js's timers keep, 2^31 − 1 ms (about 596 h). */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Parses a duration that the CLI arms a Node.js timer with (`--attempt-timeout`, `--kill-after`):
 * as {@link parseDuration}, and refused above {@link MAX_TIMER_MS}, since Node.js fires a longer
 * timer at once (after 1 ms, with a TimeoutOverflowWarning).
 */
export function timerMs(flag: string, text: string): number {
  const ms = parseDuration(flag, text);
  if (ms > MAX_TIMER_MS) {
    throw new UsageError(
      `${flag} must be at most 596h (${MAX_TIMER_MS} ms, the longest timer Node.js keeps), got "${text}"`,
    );
  }
  return ms;
}

/** Parses a plain number option (`--multiplier 1.5`), refusing anything that is not one. */
export function parseNumber(flag: string, text: string, allowInfinity = false): number {
  const t = text.trim();
  if (allowInfinity && /^(inf|infinity)$/i.test(t)) return Infinity;
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i.test(t)) {
    throw new UsageError(`${flag} expects a number${allowInfinity ? ' (or Infinity)' : ''}, got "${text}"`);
  }
  return Number(t);
}

/** Parses `--seed`: a whole number (`ebb schedule --sample`, `ebb run`, `ebb demo`). */
export function parseSeed(text: string): number {
  const seed = parseNumber('--seed', text);
  if (!Number.isSafeInteger(seed)) throw new UsageError(`--seed expects a whole number, got "${text}"`);
  return seed;
}

/** Formats milliseconds for a table: 51.2 µs, 843.5 ms, 1.687 s, 2.5 min, 1.25 h. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  const abs = Math.abs(ms);
  if (abs === 0) return '0 ms';
  if (abs < 1) return `${trim(ms * 1_000)} µs`;
  if (abs < 1_000) return `${trim(ms)} ms`;
  if (abs < 60_000) return `${trim(ms / 1_000)} s`;
  if (abs < 3_600_000) return `${trim(ms / 60_000)} min`;
  if (abs < 86_400_000 * 1_000) return `${trim(ms / 3_600_000)} h`;
  return `${(ms / 86_400_000 / 365.25).toPrecision(4)} years`;
}

/** Up to three decimals, without trailing zeros. */
function trim(x: number): string {
  return String(Number(x.toFixed(3)));
}
