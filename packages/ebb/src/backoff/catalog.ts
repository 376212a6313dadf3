import type { Backoff } from './backoff.js';
import { defaultSummary } from './default.js';
import { type PresetName, presets } from './presets.js';

/** What the CLI and documentation show of a preset. */
export interface PresetInfo {
  /** The kebab-case id used on the command line: `google-http-client`. */
  readonly id: string;
  /** The key in `presets`: `googleHttpClient`. */
  readonly key: PresetName;
  /** One line: the system and its rule. */
  readonly title: string;
  /** Where the numbers come from. */
  readonly source: string;
  /** Where a seed article or a common reading differs from the source, if anywhere. */
  readonly note?: string;
  /** The policy itself. */
  readonly backoff: Backoff;
}

const entries: ReadonlyArray<readonly [id: string, key: PresetName, title: string, source: string, note?: string]> = [
  ['default', 'default', `ebb's default: ${defaultSummary()}`, 'ebb (see presets.default)'],
  [
    'google-http-client',
    'googleHttpClient',
    'Google HTTP Client ExponentialBackOff: 500 ms ×1.5 (integer ms), ±50 %, 60 s interval cap, 15 min budget',
    'google-http-java-client, com.google.api.client.util.ExponentialBackOff',
    "The Javadoc table's STOP at try 10 is its example of the elapsed budget running out, not a rule; the default budget is 15 minutes.",
  ],
  [
    'google-drive',
    'googleDrive',
    'Google Drive: 2^n s + U[0, 1000] ms, 32 s cap, 6 attempts (5 retries)',
    'developers.google.com/drive/api/guides/limits (exponential backoff)',
    "Drive's 2^n is in seconds (the memo reads milliseconds); 5 retries is the seed's count, Drive leaves it to the caller.",
  ],
  [
    'aws-simpledb',
    'awsSimpleDb',
    'Amazon SimpleDB: U[0, 4^n × 100 ms) after the n-th retry',
    'SimpleDB Developer Guide, API error retries',
  ],
  [
    'aws-polling',
    'awsPolling',
    'AWS polling sample: 2^n × 100 ms, no jitter, 60 s cap, 10 polls',
    'AWS General Reference, "Error retries and exponential backoff in AWS"',
  ],
  [
    'aws-standard',
    'awsStandard',
    'AWS SDK standard mode (today): full jitter on 50 ms × 2^i (1 s after throttling), 20 s cap, 3 attempts',
    '@smithy/util-retry 4.6.2 / @smithy/core 3.41.0, StandardRetryStrategy (the 2026 behaviour, default since 3.40.0)',
  ],
  [
    'aws-standard-2026',
    'awsStandard2026',
    'Same as aws-standard: the 2026 behaviour is the SDK default',
    '@smithy/core 3.41.0, StandardRetryStrategy',
  ],
  [
    'aws-standard-pre-2026',
    'awsStandardPre2026',
    'AWS SDK standard mode before 2026: full jitter on 100 ms × 2^i (500 ms after throttling), 20 s cap, 3 attempts',
    '@smithy/core 3.39.0, StandardRetryStrategy without SMITHY_NEW_RETRIES_2026',
  ],
  [
    'truncated-binary',
    'truncatedBinary',
    'Truncated binary exponential: U[0, a·2^(min(n,10)−1)), a = 10 s / 2^9',
    'Qiita, "リトライの実装: Truncated Binary Exponential Backoff" (2016)',
  ],
  [
    'ethernet',
    'ethernet',
    'IEEE 802.3 CSMA/CD: 0 … 2^min(c,10)−1 slots of 51.2 µs, 16 attempts',
    'IEEE 802.3 §4.2.3.2.5, §4.4.2',
  ],
  [
    'wifi',
    'wifi',
    'IEEE 802.11 DCF (OFDM): CW 15 → 1023 doubling, 9 µs slots, 7 transmissions',
    'IEEE 802.11 DCF; dot11ShortRetryLimit',
  ],
  ['sip', 'sip', 'SIP non-INVITE Timer E: 500 ms doubling to 4 s, until Timer F (32 s)', 'RFC 3261 §17.1.2.2'],
  ['sip-invite', 'sipInvite', 'SIP INVITE Timer A: 500 ms doubling, until Timer B (32 s)', 'RFC 3261 §17.1.1.2'],
  [
    'grpc-connect',
    'grpcConnect',
    'gRPC connection backoff: 1 s, then 1.6 s ×1.6 ±20 %, 120 s cap',
    'grpc/grpc doc/connection-backoff.md',
  ],
];

/** Every preset with its CLI id, a one-line title and its source, in documentation order. */
export const presetCatalog: readonly PresetInfo[] = /* @__PURE__ */ Object.freeze(
  /* @__PURE__ */ entries.map(([id, key, title, source, note]) =>
    Object.freeze({ id, key, title, source, ...(note === undefined ? {} : { note }), backoff: presets[key] }),
  ),
);

/** The preset with CLI id `id` (`google-http-client`) or `presets` key (`googleHttpClient`), if any. */
export function findPreset(id: string): PresetInfo | undefined {
  return presetCatalog.find((p) => p.id === id || p.key === id);
}
