import type { BackoffPolicy } from '../backoff/backoff.js';
import { exponential } from '../backoff/exponential.js';
import { equalJitter } from '../backoff/jitter-equal.js';
import { type Clock, clockOption } from '../core/clock.js';
import { DEV } from '../core/dev.js';
import { ELSEWHERE, RENAMED, refuseNamed } from '../core/option-names.js';
import { type Random, randomOption } from '../core/random.js';
import { brief, checkKeys, count, inRange, invalid, mistyped, nonNegative } from '../core/validate.js';
import type { IsFailure } from '../retry/options.js';
import type { BreakerSnapshot, CircuitBreakerOptions, StateChange } from './breaker-types.js';
import { CountWindow, type FailureWindow, TimeWindow } from './breaker-window.js';
import type { CircuitState } from './errors.js';

/** The default open period: 5 s doubling to 60 s, each period in [d/2, d), for as long as the circuit keeps opening. */
const defaultOpenBackoff = /* @__PURE__ */ exponential({
  initialDelayMs: 5_000,
  maxDelayMs: 60_000,
  jitter: equalJitter,
  maxAttempts: Infinity,
});

const STATES: readonly string[] = ['closed', 'open', 'half-open', 'isolated'];
/** A restored `openings` replays the backoff this many steps at most: a hostile snapshot cannot stall the constructor. */
const MAX_RESTORED_OPENINGS = 10_000;

const KEYS = [
  'consecutiveFailures',
  'failureRate',
  'minCalls',
  'windowCalls',
  'windowMs',
  'slowCallMs',
  'maxHalfOpenProbes',
  'probeTimeoutMs',
  'successesToClose',
  'openBackoff',
  'retriesOnly',
  'isFailure',
  'onStateChange',
  'onListenerError',
  'restore',
  'clock',
  'random',
];

/** A breaker's options, checked, with their defaults. @internal */
export interface BreakerConfig {
  readonly consecutive: number;
  /** NaN: off. */
  readonly failureRate: number;
  readonly minCalls: number;
  readonly slowCallMs: number;
  readonly maxHalfOpenProbes: number;
  /** NaN: the open period before the probe. */
  readonly probeTimeoutMs: number;
  readonly successesToClose: number;
  readonly openBackoff: BackoffPolicy;
  readonly retriesOnly: boolean;
  readonly isFailure: IsFailure | undefined;
  readonly onListenerError: ((error: unknown, change: StateChange) => void) | undefined;
  readonly clock: Clock;
  readonly random: Random | undefined;
  /** Undefined without a `failureRate`. */
  readonly window: FailureWindow | undefined;
}

const OPEN_FOR =
  'use `openBackoff: constant({ delayMs, jitter: noJitter, maxAttempts: Infinity })` for a fixed open period.';

/** Other breakers' option names (opossum, cockatiel, Polly, resilience4j), with ebb's way to say the same. */
const PEERS: Readonly<Record<string, string>> = DEV
  ? {
      failureThreshold: 'failures in a row are `consecutiveFailures`; a share of the calls is `failureRate` (0 to 1).',
      errorThresholdPercentage: 'use `failureRate`, a share from 0 to 1 (50 % is 0.5).',
      failureRateThreshold: 'use `failureRate`, a share from 0 to 1 (50 % is 0.5).',
      volumeThreshold: 'use `minCalls`.',
      minimumThroughput: 'use `minCalls`.',
      minimumNumberOfCalls: 'use `minCalls`.',
      rollingCountTimeout: 'use `windowMs` (or `windowCalls`, a count of calls).',
      samplingDuration: 'use `windowMs` (or `windowCalls`, a count of calls).',
      resetTimeout: OPEN_FOR,
      halfOpenAfter: OPEN_FOR,
      breakDuration: OPEN_FOR,
      waitDurationInOpenState: OPEN_FOR,
      timeout: 'put `timeout(ms)` inside the breaker in a pipeline: `pipeline([breaker, timeout(ms)])`.',
      errorFilter: 'use `isFailure` (false: not a failure).',
      shouldHandle: 'use `isFailure`.',
      onBreak: 'use `onStateChange`.',
      onReset: 'use `onStateChange`.',
      onHalfOpen: 'use `onStateChange`.',
    }
  : {};

/** Checks a breaker's options (each message names the option, the value and a fix). @internal */
export function breakerConfig(where: string, o: CircuitBreakerOptions): BreakerConfig {
  refuseNamed(where, o, { minimumCalls: 'use `minCalls`.', halfOpenProbes: 'use `maxHalfOpenProbes`.' }, RENAMED);
  if (DEV) refuseNamed(where, o, PEERS, ELSEWHERE);
  checkKeys(where, o, KEYS);
  const consecutive = count(
    where,
    'consecutiveFailures',
    o.consecutiveFailures,
    5,
    1,
    true,
    'For example 5; Infinity opens on the failure rate only.',
  );
  let failureRate = Number.NaN;
  if (o.failureRate !== undefined) {
    failureRate = inRange(where, 'failureRate', o.failureRate, 0, 0, 1, 'For example 0.5 for half the calls.');
    if (failureRate === 0) invalid(where, 'failureRate', 0, 'a number above 0, up to 1', 'For example 0.5.');
  }
  const minCalls = count(where, 'minCalls', o.minCalls, 20, 1, false, 'For example 20.');
  if (o.windowCalls !== undefined && o.windowMs !== undefined) {
    throw new TypeError(`${where}: give \`windowCalls\` or \`windowMs\`, not both.`);
  }
  // The window's options count only for a failure rate: without one they would be ignored.
  if (o.failureRate === undefined) {
    for (const windowed of ['minCalls', 'windowCalls', 'windowMs'] as const) {
      if (o[windowed] !== undefined) {
        throw new TypeError(
          DEV
            ? `${where}: \`${windowed}\` counts only with \`failureRate\`, which is not given. Add failureRate (such as 0.5), or leave ${windowed} out.`
            : brief(where, windowed, o[windowed]),
        );
      }
    }
  }
  const windowCalls = count(where, 'windowCalls', o.windowCalls, 100, 1, false, 'For example 100.');
  if (windowCalls > 1_000_000) invalid(where, 'windowCalls', windowCalls, 'at most 1000000', 'For example 100.');
  let windowMs = Number.NaN;
  if (o.windowMs !== undefined) {
    windowMs = nonNegative(where, 'windowMs', o.windowMs, 0, false, 'For example 10000 for ten seconds.');
    if (windowMs === 0) invalid(where, 'windowMs', 0, 'a finite number > 0', 'For example 10000 for ten seconds.');
  }
  if (!Number.isNaN(failureRate) && minCalls > windowCalls && Number.isNaN(windowMs)) {
    throw new RangeError(
      `${where}: \`minCalls\` (${minCalls}) is more than the window holds (\`windowCalls\` ${windowCalls}); the failure rate could never open the circuit. Lower minCalls or widen the window.`,
    );
  }
  const slowCallMs = nonNegative(where, 'slowCallMs', o.slowCallMs, Infinity, true, 'For example 2000.');
  const maxHalfOpenProbes = count(where, 'maxHalfOpenProbes', o.maxHalfOpenProbes, 1, 1, false, 'For example 1.');
  let probeTimeoutMs = Number.NaN;
  if (o.probeTimeoutMs !== undefined) {
    const fix = 'For example 10000; Infinity waits for every probe.';
    probeTimeoutMs = nonNegative(where, 'probeTimeoutMs', o.probeTimeoutMs, 0, true, fix);
    if (probeTimeoutMs === 0) invalid(where, 'probeTimeoutMs', 0, 'a number > 0 (or Infinity)', fix);
  }
  const successesToClose = count(where, 'successesToClose', o.successesToClose, 1, 1, false, 'For example 1.');
  const openBackoff = o.openBackoff ?? defaultOpenBackoff;
  if (typeof openBackoff !== 'object' || openBackoff === null || typeof openBackoff.start !== 'function') {
    mistyped(where, 'openBackoff', openBackoff, 'a backoff policy', 'Build one with exponential().');
  }
  const retriesOnly = o.retriesOnly ?? false;
  if (typeof retriesOnly !== 'boolean') mistyped(where, 'retriesOnly', retriesOnly, 'a boolean');
  const isFailure = o.isFailure;
  if (isFailure !== undefined && typeof isFailure !== 'function') {
    mistyped(where, 'isFailure', isFailure, "a function (outcome, context) => true, false or 'throttled'");
  }
  if (o.onStateChange !== undefined && typeof o.onStateChange !== 'function') {
    mistyped(where, 'onStateChange', o.onStateChange, 'a function (change) => void');
  }
  const onListenerError = o.onListenerError;
  if (onListenerError !== undefined && typeof onListenerError !== 'function') {
    mistyped(where, 'onListenerError', onListenerError, 'a function (error, change) => void');
  }
  const clock = clockOption(where, o.clock);
  const random = randomOption(where, o.random);

  const window: FailureWindow | undefined = Number.isNaN(failureRate)
    ? undefined
    : Number.isNaN(windowMs)
      ? new CountWindow(windowCalls)
      : new TimeWindow(windowMs);
  return {
    consecutive,
    failureRate,
    minCalls,
    slowCallMs,
    maxHalfOpenProbes,
    probeTimeoutMs,
    successesToClose,
    openBackoff,
    retriesOnly,
    isFailure,
    onListenerError,
    clock,
    random,
    window,
  };
}

/** Checks a snapshot passed as `restore`, field by field. @internal */
export function checkSnapshot(
  where: string,
  snapshot: BreakerSnapshot,
): {
  readonly state: CircuitState;
  readonly openings: number;
  readonly remaining: number;
  readonly consecutiveFailures: number;
} {
  if (typeof snapshot !== 'object' || snapshot === null) {
    mistyped(where, 'restore', snapshot, 'a snapshot from breaker.snapshot()');
  }
  if (!STATES.includes(snapshot.state)) {
    mistyped(where, 'restore.state', snapshot.state, `one of ${STATES.join(', ')}`);
  }
  const n = count(where, 'restore.openings', snapshot.openings, Number.NaN, 0, false, 'Pass a snapshot unchanged.');
  if (n > MAX_RESTORED_OPENINGS) {
    invalid(where, 'restore.openings', n, `at most ${MAX_RESTORED_OPENINGS}`, 'Pass a snapshot unchanged.');
  }
  const remaining = nonNegative(where, 'restore.openRemainingMs', snapshot.openRemainingMs, Number.NaN, true);
  const c = count(
    where,
    'restore.consecutiveFailures',
    snapshot.consecutiveFailures,
    Number.NaN,
    0,
    false,
    'Pass a snapshot unchanged.',
  );
  return { state: snapshot.state, openings: n, remaining, consecutiveFailures: c };
}
