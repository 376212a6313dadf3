import { DEV } from '../core/dev.js';
import { brief, check, checkKeys, optionsObject } from '../core/validate.js';
import { Backoff, notABackoff } from './backoff.js';
import { policyOf } from './chain.js';
import { jitterOption } from './jitter.js';
import { LIMITS, type LimitOptions } from './limits.js';
import { SEGMENTS, type Segment } from './segment.js';

/** Checks the combinations a segment cannot honour, so that no option is silently ignored. */
function checkSegment(where: string, s: Segment): Segment {
  s.curve.check?.(where, s);
  s.jitter.check?.(where, s);
  return s;
}

/**
 * The key of a policy's own way to take new options (Google's and AWS's policies keep their
 * source's rules for the options those rules cover): `(options, apply) => Backoff`, where
 * `apply` is ebb's rule for any policy. @internal
 */
export const DERIVE: unique symbol = /* @__PURE__ */ Symbol();

/** A policy with its own way to take new options. @internal */
export type Derives = Backoff & {
  readonly [DERIVE]: (options: LimitOptions, apply: (b: Backoff) => Backoff) => Backoff;
};

/**
 * The same policy with other limits or another jitter: the options given replace the policy's,
 * the others stay. Takes the options every curve takes besides its own (`jitter`, `ceiling`,
 * `maxIntervalMs`, `maxDelayMs`, `maxAttempts`, `maxElapsedMs`), checked as the curves check
 * them; `Infinity` lifts a limit. A new value is returned; `backoff` is unchanged.
 *
 * For a preset whose source has its own rules: Google's policy keeps them for `maxAttempts` and
 * `maxElapsedMs` (the budget stays Google's, checked before each wait), the AWS standard mode for
 * `maxAttempts`; any other option gives an ordinary ebb policy over the same delays.
 *
 * Lifting the time budget of a policy that only its budget stops needs `maxAttempts` too
 * (`Infinity` to retry until success), so that nothing becomes endless by accident.
 *
 * @example
 * withOptions(presets.grpcConnect, { maxAttempts: 8 }) // the gRPC schedule, 8 attempts in all
 * withOptions(defaultBackoff, { jitter: noJitter }) // 100, 200, 400, 800 ms exactly
 */
export function withOptions(backoff: Backoff, options: LimitOptions): Backoff {
  const where = 'withOptions()';
  if (!(backoff instanceof Backoff)) notABackoff(where, 'backoff', backoff);
  const o = optionsObject(where, options) as LimitOptions;
  checkKeys(where, o, ['jitter', ...Object.keys(LIMITS)]);
  const limit = (name: keyof typeof LIMITS, now: number) => check(where, name, o[name], LIMITS[name], now);
  const apply = (b: Backoff): Backoff => {
    if (o.ceiling !== undefined && b[SEGMENTS].length > 1) {
      throw new TypeError(
        DEV
          ? `${where}: a chained policy has no single ceiling; set \`ceiling\` on its parts.`
          : brief(where, 'ceiling', o.ceiling),
      );
    }
    const segments = b[SEGMENTS].map((s) =>
      checkSegment(where, {
        ...s,
        jitter: jitterOption(where, o.jitter, s.jitter),
        ceiling: limit('ceiling', s.ceiling),
        maxIntervalMs: limit('maxIntervalMs', s.maxIntervalMs),
        maxDelayMs: limit('maxDelayMs', s.maxDelayMs),
      }),
    );
    const maxAttempts = limit('maxAttempts', b.maxAttempts);
    const maxElapsedMs = limit('maxElapsedMs', b.maxElapsedMs);
    if (
      maxElapsedMs === Infinity &&
      b.maxElapsedMs < Infinity &&
      maxAttempts === Infinity &&
      o.maxAttempts === undefined
    ) {
      throw new RangeError(
        `${where}: \`maxElapsedMs: Infinity\` lifts the only limit of this policy, so it would never stop; give \`maxAttempts\` too (Infinity to retry until success).`,
      );
    }
    return policyOf(segments, maxAttempts, maxElapsedMs);
  };
  const own = (backoff as Partial<Derives>)[DERIVE];
  return own ? own.call(backoff, o, apply) : apply(backoff);
}
