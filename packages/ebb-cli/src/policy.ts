import {
  type Backoff,
  constant,
  exponential,
  findPreset,
  type Jitter,
  jitterNamed,
  type LimitOptions,
  linear,
  type PresetInfo,
  presetCatalog,
  slotted,
  withOptions,
} from 'ebb';
import { parseDuration, parseNumber } from './duration.js';
import { UsageError } from './usage-error.js';

/** The policy flags shared by `ebb schedule` and `ebb run`, as commander hands them over. */
export interface PolicyFlags {
  readonly preset?: string;
  readonly curve?: string;
  readonly initial?: string;
  readonly multiplier?: string;
  readonly increment?: string;
  readonly delay?: string;
  readonly slot?: string;
  readonly cwMin?: string;
  readonly cwMax?: string;
  readonly jitter?: string;
  readonly maxDelay?: string;
  readonly maxInterval?: string;
  readonly maxAttempts?: string;
  readonly maxElapsed?: string;
  readonly ceiling?: string;
}

/** Flags that define a curve; they cannot be combined with a preset. */
const CURVE_FLAGS = {
  curve: '--curve',
  initial: '--initial',
  multiplier: '--multiplier',
  increment: '--increment',
  delay: '--delay',
  slot: '--slot',
  cwMin: '--cw-min',
  cwMax: '--cw-max',
} as const;

/** Which curve flags each curve accepts. */
const CURVE_ACCEPTS: Record<string, readonly (keyof typeof CURVE_FLAGS)[]> = {
  exponential: ['curve', 'initial', 'multiplier'],
  linear: ['curve', 'initial', 'increment'],
  constant: ['curve', 'delay'],
  slotted: ['curve', 'slot', 'cwMin', 'cwMax'],
};

/**
 * Parses `--jitter`: none, full, equal, decorrelated, proportional:0.5, additive:1s — the library's
 * jitter names (`jitterNamed`), with the CLI's durations (and unit check) for `additive`.
 */
export function parseJitter(text: string): Jitter {
  const [kind = '', arg, ...rest] = text.split(':');
  const known = arg === undefined ? ['none', 'full', 'equal', 'decorrelated'] : ['proportional', 'additive'];
  if (rest.length === 0 && known.includes(kind)) {
    if (kind === 'proportional' && arg !== undefined) parseNumber('--jitter proportional:FACTOR', arg);
    return jitterNamed(
      kind === 'additive' && arg !== undefined ? `additive:${parseDuration('--jitter additive:DURATION', arg)}` : text,
    );
  }
  throw new UsageError(
    `--jitter expects none, full, equal, decorrelated, proportional:FACTOR or additive:DURATION, got "${text}"`,
  );
}

/** The preset used when the flags name none and define no curve. */
export const DEFAULT_PRESET = 'default';

/** The name shown for a custom policy. */
export const CUSTOM = 'custom';

/**
 * What a custom curve gets when its flags leave these out, so that `ebb run --initial 1ms -- cmd`
 * neither retries forever nor in lockstep with every other copy started at the same moment:
 * full jitter (as ebb's default policy) and 5 attempts in all. Ask for the opposite explicitly:
 * `--jitter none`, `--max-attempts Infinity` (forever) or a `--max-elapsed` budget instead.
 */
export const CUSTOM_DEFAULTS = { jitter: 'full', maxAttempts: 5 } as const;

/**
 * Builds the policy the flags describe — the one builder behind both `ebb schedule` and
 * `ebb run`, so that a schedule previews exactly what a run does. No flags: ebb's default
 * preset. Limit flags alone (`--max-attempts 8`): the default preset with those limits. A preset
 * (`--preset`, or the positional id of `ebb schedule`) with limit and jitter overrides. Curve
 * flags: a custom curve, jittered and bounded by {@link CUSTOM_DEFAULTS} unless told otherwise.
 * Library validation errors (TypeError, RangeError) pass through for the caller to print.
 */
export function policyFromFlags(flags: PolicyFlags): {
  name: string;
  info?: PresetInfo;
  backoff: Backoff;
  /** A custom policy's parameters in one line (presets have `info`). */
  summary?: string;
} {
  const curveFlags = (Object.keys(CURVE_FLAGS) as (keyof typeof CURVE_FLAGS)[]).filter((k) => flags[k] !== undefined);
  const limits: { -readonly [K in keyof LimitOptions]: LimitOptions[K] } = {};
  if (flags.jitter !== undefined) limits.jitter = parseJitter(flags.jitter);
  if (flags.maxDelay !== undefined) limits.maxDelayMs = parseDuration('--max-delay', flags.maxDelay, true);
  if (flags.maxInterval !== undefined) limits.maxIntervalMs = parseDuration('--max-interval', flags.maxInterval, true);
  if (flags.maxAttempts !== undefined) limits.maxAttempts = parseNumber('--max-attempts', flags.maxAttempts, true);
  if (flags.maxElapsed !== undefined) limits.maxElapsedMs = parseDuration('--max-elapsed', flags.maxElapsed, true);
  if (flags.ceiling !== undefined) limits.ceiling = parseNumber('--ceiling', flags.ceiling, true);

  // No curve flags: a preset, ebb's default unless one is named.
  const presetId = flags.preset ?? (curveFlags.length === 0 ? DEFAULT_PRESET : undefined);
  if (presetId !== undefined) {
    const info = findPreset(presetId);
    if (!info) {
      throw new UsageError(`unknown preset "${presetId}"; presets: ${presetCatalog.map((p) => p.id).join(', ')}`);
    }
    if (curveFlags.length > 0) {
      throw new UsageError(
        `${CURVE_FLAGS[curveFlags[0] as keyof typeof CURVE_FLAGS]} defines a custom curve and cannot be combined with the preset "${info.id}"; limit flags (--max-attempts, --max-delay, …) and --jitter can`,
      );
    }
    const b = Object.keys(limits).length > 0 ? withOptions(info.backoff, limits) : info.backoff;
    return { name: info.id, info, backoff: b };
  }

  if (limits.maxAttempts === undefined && limits.maxElapsedMs === undefined) {
    limits.maxAttempts = CUSTOM_DEFAULTS.maxAttempts;
  }
  const curve =
    flags.curve ?? (flags.slot !== undefined ? 'slotted' : flags.delay !== undefined ? 'constant' : 'exponential');
  const accepted = CURVE_ACCEPTS[curve];
  if (!accepted) throw new UsageError(`--curve expects exponential, linear, constant or slotted, got "${curve}"`);
  const stray = curveFlags.find((k) => !accepted.includes(k));
  if (stray) throw new UsageError(`${CURVE_FLAGS[stray]} does not apply to --curve ${curve}`);
  if (curve !== 'slotted' && limits.jitter === undefined) limits.jitter = jitterNamed(CUSTOM_DEFAULTS.jitter);

  const duration = (flag: string, v: string | undefined, fallback: number) =>
    v === undefined ? fallback : parseDuration(flag, v);
  const number = (flag: string, v: string | undefined, fallback: number) =>
    v === undefined ? fallback : parseNumber(flag, v);
  // Every curve value is passed explicitly (CURVE_DEFAULTS where a flag is left out); the summary
  // is the policy's own description (its toString), so it states what was built, defaults included.
  const d = CURVE_DEFAULTS;
  let backoff: Backoff;
  if (curve === 'exponential') {
    const initialDelayMs = duration('--initial', flags.initial, d.initialDelayMs);
    const multiplier = number('--multiplier', flags.multiplier, d.multiplier);
    backoff = exponential({ ...limits, initialDelayMs, multiplier });
  } else if (curve === 'linear') {
    const initialDelayMs = duration('--initial', flags.initial, d.initialDelayMs);
    const incrementMs = duration('--increment', flags.increment, initialDelayMs);
    backoff = linear({ ...limits, initialDelayMs, incrementMs });
  } else if (curve === 'constant') {
    const delayMs = duration('--delay', flags.delay, d.delayMs);
    backoff = constant({ ...limits, delayMs });
  } else {
    if (flags.slot === undefined) throw new UsageError('--curve slotted needs --slot, such as --slot 51.2us');
    if (limits.jitter !== undefined)
      throw new UsageError('--jitter does not apply to --curve slotted: the slot draw is its jitter');
    // No jitter default here: the slot draw is the jitter.
    const slotMs = parseDuration('--slot', flags.slot);
    const cwMin = number('--cw-min', flags.cwMin, d.cwMin);
    const cwMax = number('--cw-max', flags.cwMax, Math.max(d.cwMax, cwMin));
    backoff = slotted({ ...limits, slotMs, cwMin, cwMax });
  }
  return { name: CUSTOM, backoff, summary: String(backoff) };
}

/** What a custom curve's flags mean when left out (the library's own defaults, passed explicitly). */
const CURVE_DEFAULTS = { initialDelayMs: 100, multiplier: 2, delayMs: 100, cwMin: 0, cwMax: 1023 } as const;
