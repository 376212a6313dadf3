import { check, checkKeys, DURATION_MS, optionsObject } from '../core/validate.js';
import { awsStandardBackoff } from './aws.js';
import type { Backoff } from './backoff.js';
import { chain } from './chain.js';
import { constant } from './constant.js';
import { defaultBackoff } from './default.js';
import { exponential } from './exponential.js';
import { googleExponentialBackoff } from './google.js';
import { additiveJitter } from './jitter-additive.js';
import { fullJitter } from './jitter-full.js';
import { noJitter } from './jitter-none.js';
import { proportionalJitter } from './jitter-proportional.js';
import { slotted } from './slotted.js';

// Each preset states its source's jitter, cap and stop explicitly, so that ebb's defaults (full
// jitter, a 20 s cap on exponential(), 5 attempts) never change what a preset reproduces.

/** Options of {@link truncatedBinary}. */
export interface TruncatedBinaryOptions {
  /** N: the failure count after which delays stop growing. Default 10. */
  readonly ceiling?: number;
  /** T: the longest delay, reached at row N, in ms. Default 10 000. */
  readonly maxDelayMs?: number;
}

/**
 * Truncated binary exponential backoff as the Qiita article "'リトライ'の実装: Truncated Binary
 * Exponential Backoff" (2016) derives it: row n waits U[0, a·2^(min(n,N)−1)) with
 * a = T / 2^(N−1), so that the delay stops growing at failure N and never exceeds T.
 * With N = 10 and T = 10 s, a = 19.53125 ms and the maxima are 19.5, 39, 78, 156, 312.5, 625,
 * 1250, 2500, 5000, 10 000, 10 000, … ms — the article's printed table. No attempt limit: the
 * article's loops retry until success, so the policy says `maxAttempts: Infinity` explicitly and
 * `retry()` runs it until success (capped and jittered, it cannot stampede).
 */
export function truncatedBinary(options?: TruncatedBinaryOptions): Backoff {
  const where = 'truncatedBinary()';
  const o = optionsObject(where, options) as TruncatedBinaryOptions;
  checkKeys(where, o, ['ceiling', 'maxDelayMs']);
  const n = check(where, 'ceiling', o.ceiling, { whole: true, min: 1, fix: 'N is a failure count such as 10.' }, 10);
  const t = check(where, 'maxDelayMs', o.maxDelayMs, DURATION_MS, 10_000);
  return exponential({
    initialDelayMs: t / 2 ** (n - 1),
    multiplier: 2,
    ceiling: n,
    maxDelayMs: Infinity,
    jitter: fullJitter,
    maxAttempts: Infinity,
  });
}

/**
 * The backoff schemes of real systems, each reproducing its source's numbers (each entry's
 * documentation names its source and where the seed articles differ from it), and `default`,
 * ebb's own. In the CLI they are addressed by kebab-case id: `ebb schedule google-http-client`.
 */
export const presets = /* @__PURE__ */ Object.freeze({
  /**
   * ebb's own, {@link defaultBackoff} (its values, and why).
   * Pairs with `standard` from `ebb/http` (`withRetry()`'s default classifier).
   */
  default: defaultBackoff,
  /**
   * Google HTTP Client for Java, `ExponentialBackOff` with its defaults: intervals 500 ms ×1.5
   * (integer arithmetic: 500, 750, 1125, 1687, 2530, …), capped at 60 s, each randomized ±50 %
   * (so a delay may reach 90 s: the cap is on the interval), stopping once 15 minutes have
   * elapsed. Pair with `googleHttpClient` from `ebb/http` (5xx for `HttpBackOffUnsuccessfulResponseHandler`;
   * 500 and 503 for the older `ExponentialBackOffPolicy`).
   *
   * Where the seed differs: the memo reads the Javadoc's "STOP" on the 10th try as a rule and gives
   * the elapsed budget as 15 seconds. The Javadoc's table is an example "assuming we go over the
   * max_elapsed_time on the 10th try"; the default budget is 15 minutes (900 000 ms), and the
   * nine waits before the 10th try total about 37 s on average. So `stopsAfterAttempt` is null:
   * only the time budget stops this policy.
   */
  googleHttpClient: /* @__PURE__ */ googleExponentialBackoff(),
  /**
   * Google Drive API ("Usage limits", exponential backoff): `min(2^n s + random_ms, maximum_backoff)`
   * with n = 0, 1, 2, … — waits of 1, 2, 4, 8, 16 s, each plus U[0, 1000] ms, capped at 32 s
   * (maximum_backoff, "typically 32 or 64 seconds"); 5 retries, so 6 attempts in all.
   * Pair with `googleDrive` from `ebb/http` (rate-limit 403s, 429, 5xx).
   *
   * Where the seed differs: the memo writes 2^n in milliseconds ([1, 1002] ms …); Drive's docs
   * mean seconds plus up to 1000 ms. The "5 retries" is the seed's (and Google's older Analytics
   * recipe); Drive's page leaves the count to the caller.
   */
  googleDrive: /* @__PURE__ */ exponential({
    initialDelayMs: 1_000,
    multiplier: 2,
    jitter: /* @__PURE__ */ additiveJitter(1_000),
    maxDelayMs: 32_000,
    maxAttempts: 6,
  }),
  /**
   * Amazon SimpleDB ("Error Retries and Exponential Backoff", SimpleDB Developer Guide): the n-th
   * retry waits a random time in [0, 4^n × 100 ms): [0, 400), [0, 1600), [0, 6400) … ms. The
   * source names no attempt limit and no cap: the preset has no cap and ebb's default of 5
   * attempts (`withOptions(presets.awsSimpleDb, { maxAttempts })` for another count); it retries
   * 5xx only. Pairs with `aws` from `ebb/http` (5xx, 429 and throttling codes, no other 4xx).
   */
  awsSimpleDb: /* @__PURE__ */ exponential({
    initialDelayMs: 400,
    multiplier: 4,
    maxDelayMs: Infinity,
    jitter: fullJitter,
    maxAttempts: 5,
  }),
  /**
   * The polling loop of the AWS General Reference's "Error retries and exponential backoff in
   * AWS": wait `2^retries × 100 ms`, no jitter (the page: collisions are not the concern there),
   * capped at `MAX_WAIT_INTERVAL`. Row n, after the n-th not-ready poll, is 2^n × 100 ms: 200,
   * 400, 800 … ms; the sample also waits 100 ms before the first poll (`poll()`'s
   * `initialDelayMs`). The page leaves `MAX_WAIT_INTERVAL` and `MAX_RETRIES` undefined; ebb uses
   * 60 s and 10 polls.
   */
  awsPolling: /* @__PURE__ */ exponential({
    initialDelayMs: 200,
    multiplier: 2,
    maxDelayMs: 60_000,
    jitter: noJitter,
    maxAttempts: 10,
  }),
  /**
   * The AWS SDKs' standard retry mode as the published SDK for JavaScript computes it today
   * (`@smithy/util-retry` 4.6.2, its code in `@smithy/core` 3.41.0, where "the 2026 retry
   * behaviour" is on by default since 3.40.0): retry i (from 0) waits
   * `floor(random · min(base · 2^i, 20 s))` — full jitter, the cap before it — with base 50 ms,
   * or 1 s after a throttling error; a server hint raises the wait by at most 5 s; 3 attempts.
   * See {@link awsStandardBackoff}. Pairs with `aws` from `ebb/http` and `awsRetryQuota()` from
   * `ebb/rate` (the SDK's retry quota: a throttling retry costs 5, any other 14).
   */
  awsStandard: /* @__PURE__ */ awsStandardBackoff(),
  /** The same value as `awsStandard`: the 2026 behaviour is the SDK's default now. */
  awsStandard2026: /* @__PURE__ */ awsStandardBackoff(),
  /**
   * The standard mode as the SDK did it by default before the 2026 behaviour (`@smithy/core`
   * up to 3.39.0 without `SMITHY_NEW_RETRIES_2026=true`): base 100 ms, 500 ms after a throttling
   * error, 20 s cap, 3 attempts. Pair with `awsRetryQuota({ behaviour: 'pre-2026' })`.
   */
  awsStandardPre2026: /* @__PURE__ */ awsStandardBackoff({ behaviour: 'pre-2026' }),
  /**
   * IEEE 802.3 CSMA/CD truncated binary exponential backoff: after the c-th collision wait k
   * slots, k uniform in 0 … 2^min(c, 10) − 1 (backoffLimit 10), slot 512 bit times = 51.2 µs at
   * 10 Mb/s; give up after 16 attempts (attemptLimit, the first transmission included). Mean
   * after c collisions (c <= 10): (2^c − 1)/2 slots, the Wikipedia article's E(c).
   */
  ethernet: /* @__PURE__ */ slotted({ slotMs: 0.0512, cwMin: 0, cwMax: 1023, maxAttempts: 16 }),
  /**
   * IEEE 802.11 DCF, OFDM PHY (802.11a/g): slot 9 µs, CWmin 15, CWmax 1023; after each failure
   * CW ← min(2(CW+1) − 1, CWmax), and the backoff is uniform in 0 … CW slots; a frame is dropped
   * after dot11ShortRetryLimit = 7 transmissions (the limit counts transmissions, not retries, as
   * Linux mac80211 notes). Rows start after the first failure (CW 31); the initial backoff from
   * CWmin = 15 happens before the first attempt, which an executor does not wait for.
   */
  wifi: /* @__PURE__ */ slotted({ slotMs: 0.009, cwMin: 15, cwMax: 1023, maxAttempts: 7 }),
  /**
   * SIP non-INVITE client transaction over UDP (RFC 3261 §17.1.2.2): Timer E starts at
   * T1 = 500 ms and doubles up to T2 = 4 s; Timer F (64·T1 = 32 s) ends the transaction. With
   * instant failures that is 11 transmissions, at 0, 0.5, 1.5, 3.5, 7.5, 11.5 … 31.5 s.
   */
  sip: /* @__PURE__ */ exponential({
    initialDelayMs: 500,
    multiplier: 2,
    maxDelayMs: 4_000,
    jitter: noJitter,
    maxElapsedMs: 32_000,
  }),
  /**
   * SIP INVITE client transaction over UDP (RFC 3261 §17.1.1.2): Timer A starts at T1 = 500 ms
   * and doubles with no cap; Timer B (64·T1 = 32 s) ends it: 7 transmissions, at 0, 0.5, 1.5,
   * 3.5, 7.5, 15.5 and 31.5 s.
   */
  sipInvite: /* @__PURE__ */ exponential({
    initialDelayMs: 500,
    multiplier: 2,
    maxDelayMs: Infinity,
    jitter: noJitter,
    maxElapsedMs: 32_000,
  }),
  /**
   * gRPC connection backoff (grpc/grpc doc/connection-backoff.md): INITIAL_BACKOFF 1 s,
   * MULTIPLIER 1.6, JITTER ±20 %, MAX_BACKOFF 120 s. The first wait is exactly 1 s (the spec sets
   * the first deadline without jitter; grpc-go's `Backoff(0)` returns the base delay), later ones
   * `min(1 s · 1.6^(n−1), 120 s) · U[0.8, 1.2]` — jitter after the cap, so up to 144 s. The spec's
   * waits are deadlines measured from the start of each connection attempt (with a 20 s
   * MIN_CONNECT_TIMEOUT); as a retry schedule they are the waits between attempts. No limit: a
   * channel reconnects until it succeeds, so the preset says `maxAttempts: Infinity` explicitly
   * and `retry()` runs it until success (`withOptions(presets.grpcConnect, { maxAttempts })` to
   * stop earlier).
   */
  grpcConnect: /* @__PURE__ */ chain(
    /* @__PURE__ */ constant({ delayMs: 1_000, jitter: noJitter, maxAttempts: 2 }),
    /* @__PURE__ */ exponential({
      initialDelayMs: 1_600,
      multiplier: 1.6,
      maxIntervalMs: 120_000,
      maxDelayMs: Infinity,
      jitter: /* @__PURE__ */ proportionalJitter(0.2),
      maxAttempts: Infinity,
    }),
  ),
  /** The Qiita article's truncated binary exponential backoff with N = 10, T = 10 s. See {@link truncatedBinary}. */
  truncatedBinary: /* @__PURE__ */ truncatedBinary(),
});

/** The name of a preset, as a key of `presets`. */
export type PresetName = keyof typeof presets;
