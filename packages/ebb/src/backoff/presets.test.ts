import { describe, expect, it } from 'vitest';
import { seeded } from '../core/random.js';
import { findPreset, presetCatalog } from './catalog.js';
import { describePolicy, describeRow } from './describe.js';
import { googleExponentialBackoff } from './google.js';
import { fullJitter } from './jitter-full.js';
import { presets, truncatedBinary } from './presets.js';
import { sample } from './sample.js';
import { SEGMENTS } from './segment.js';
import { always, NEXT_BELOW_ONE, run } from './test-helpers.js';

const column = (
  name: keyof typeof presets,
  n: number,
  field: 'delayMs' | 'minDelayMs' | 'maxDelayMs' | 'meanDelayMs',
) => describePolicy(presets[name], n).rows.map((r) => r[field]);

describe('presets reproduce their sources', () => {
  it('google-http-client: the Javadoc intervals, exactly (Java int arithmetic), ±50 %, 15 min budget', () => {
    expect(column('googleHttpClient', 13, 'delayMs')).toEqual([
      500, 750, 1125, 1687, 2530, 3795, 5692, 8538, 12807, 19210, 28815, 43222, 60000,
    ]);
    const rows = describePolicy(presets.googleHttpClient, 10).rows;
    // Whole-ms waits (Java's (int) of min + r·(max − min + 1)): from floor(d/2) to floor(1.5·d + 1 − 2^−53·…).
    for (const r of rows) {
      expect(r.minDelayMs).toBe(Math.floor(r.delayMs * 0.5));
      expect(r.maxDelayMs).toBe(Math.floor(r.delayMs * 0.5 + (1 - 2 ** -53) * (r.delayMs + 1)));
    }
    // The seed's table (seconds): rows 1–9 within 1 %.
    const seed = [0.5, 0.75, 1.12, 1.69, 2.53, 3.8, 5.7, 8.54, 12.81];
    seed.forEach((s, i) => {
      expect(Math.abs((rows[i]?.delayMs ?? 0) / 1000 - s) / s).toBeLessThan(0.01);
    });
    // Only the 15-minute budget stops it; the interval cap is not a cap on the delay.
    expect(describePolicy(presets.googleHttpClient, 10).stopsAfterAttempt).toBeNull();
    // Google's budget is the run's rule (checked before each wait), not the executor's deadline.
    expect(presets.googleHttpClient.maxElapsedTimeMs).toBe(900_000);
    expect(presets.googleHttpClient.maxElapsedMs).toBe(Infinity);
    expect(describeRow(presets.googleHttpClient, 50).maxDelayMs).toBe(90_001);
    expect(describeRow(presets.googleHttpClient, 3)).toMatchObject({ minDelayMs: 562, maxDelayMs: 1688 });
  });

  it('googleExponentialBackoff: every builder option is honoured', () => {
    const b = googleExponentialBackoff({
      initialIntervalMs: 100,
      randomizationFactor: 0.1,
      multiplier: 2,
      maxIntervalMs: 350,
      maxElapsedTimeMs: 5_000,
    });
    expect(describePolicy(b, 4).rows.map((r) => [r.delayMs, r.minDelayMs, r.maxDelayMs])).toEqual([
      // Java's (int) (min + r·(max − min + 1)) at r = 1 − 2^−53 rounds up to max + 1: 111, not 110.
      [100, 90, 111],
      [200, 180, 221],
      [350, 315, 386],
      [350, 315, 386],
    ]);
    expect(b.maxElapsedTimeMs).toBe(5_000);
    expect(() => googleExponentialBackoff({ randomizationFactor: 1 })).toThrow(/`randomizationFactor`/);
    expect(() => googleExponentialBackoff({ maxIntervalMs: 100 })).toThrow(/`maxIntervalMs`.*from 500 to/);
    expect(() => googleExponentialBackoff({ initialIntervalMs: 0.5 })).toThrow(/`initialIntervalMs`/);
  });

  it('google-drive: 2^n s + U[0, 1000] ms, 32 s cap, 6 attempts', () => {
    const rows = describePolicy(presets.googleDrive, 10).rows;
    expect(rows.map((r) => [r.minDelayMs, r.maxDelayMs, r.meanDelayMs])).toEqual([
      [1_000, 2_000, 1_500],
      [2_000, 3_000, 2_500],
      [4_000, 5_000, 4_500],
      [8_000, 9_000, 8_500],
      [16_000, 17_000, 16_500],
    ]);
    expect(describePolicy(presets.googleDrive, 10).stopsAfterAttempt).toBe(6);
    // Past the retries the seed lists, the cap holds: min(32 s + U, 32 s) = 32 s.
    expect(describeRow(presets.googleDrive, 6)).toMatchObject({ minDelayMs: 32_000, maxDelayMs: 32_000 });
    expect(run(presets.googleDrive, 6, 0.5)).toEqual([1_500, 2_500, 4_500, 8_500, 16_500, -1]);
  });

  it("aws-simpledb: U[0, 4^n × 100 ms), no cap; the source names no limit, so ebb's default of 5 attempts", () => {
    expect(column('awsSimpleDb', 9, 'maxDelayMs')).toEqual([400, 1_600, 6_400, 25_600]);
    expect(column('awsSimpleDb', 9, 'minDelayMs')).toEqual([0, 0, 0, 0]);
    expect(column('awsSimpleDb', 3, 'meanDelayMs')).toEqual([200, 800, 3_200]);
    // No cap: row 9 (past the default's stop) is still 4^9 × 100 ms.
    expect(describeRow(presets.awsSimpleDb, 9).maxDelayMs).toBe(4 ** 9 * 100);
    expect(describePolicy(presets.awsSimpleDb, 9).stopsAfterAttempt).toBe(5);
  });

  it('aws-polling: 2^n × 100 ms after the n-th poll, no jitter, 60 s cap, 10 polls', () => {
    expect(column('awsPolling', 20, 'delayMs')).toEqual([200, 400, 800, 1_600, 3_200, 6_400, 12_800, 25_600, 51_200]);
    expect(run(presets.awsPolling, 3, 0.99)).toEqual([200, 400, 800]);
    expect(describeRow(presets.awsPolling, 10).delayMs).toBe(60_000);
  });

  it('aws-standard: full jitter on 50 ms × 2^i (the SDK default since 2026), cap 20 s before jitter, 3 attempts', () => {
    expect(describePolicy(presets.awsStandard, 5)).toEqual({
      rows: [
        { attempt: 1, delayMs: 50, minDelayMs: 0, maxDelayMs: 50, meanDelayMs: 25 },
        { attempt: 2, delayMs: 100, minDelayMs: 0, maxDelayMs: 100, meanDelayMs: 50 },
      ],
      stopsAfterAttempt: 3,
    });
    expect([1, 2, 3, 4].map((n) => describeRow(presets.awsStandard, n).maxDelayMs)).toEqual([50, 100, 200, 400]);
    expect(describeRow(presets.awsStandard, 16).maxDelayMs).toBe(20_000);
    // Before 2026 (smithy's own test: with random = 1, attempts 0..3 give 100, 200, 400, 800).
    expect([1, 2, 3, 4].map((n) => describeRow(presets.awsStandardPre2026, n).maxDelayMs)).toEqual([
      100, 200, 400, 800,
    ]);
  });

  it('truncated-binary: the Qiita maxima 19.5, 39, 78, 156, 312, 625, 1250, 2500, 5000, 10000, 10000 … ms', () => {
    const maxima = column('truncatedBinary', 14, 'maxDelayMs');
    expect(maxima.map((m) => Math.floor(m))).toEqual([
      19, 39, 78, 156, 312, 625, 1_250, 2_500, 5_000, 10_000, 10_000, 10_000, 10_000, 10_000,
    ]);
    expect(maxima[0]).toBe(10_000 / 512);
    expect(describeRow(presets.truncatedBinary, Number.MAX_SAFE_INTEGER).maxDelayMs).toBe(10_000);
    expect(presets.truncatedBinary.maxAttempts).toBe(Infinity);
    // both N and T are settable
    expect(describePolicy(truncatedBinary({ ceiling: 3, maxDelayMs: 1_000 }), 4).rows.map((r) => r.maxDelayMs)).toEqual(
      [250, 500, 1_000, 1_000],
    );
    expect(() => truncatedBinary({ ceiling: 0 })).toThrow(/`ceiling`/);
  });

  it('truncatedBinary(): a = T / 2^(N−1), ×2, full jitter, truncated at N, forever on purpose; exact messages', () => {
    const segment = {
      curve: { type: 'exponential', initialDelayMs: 10_000 / 512, multiplier: 2 },
      jitter: fullJitter,
      ceiling: 10,
      maxIntervalMs: Infinity,
      maxDelayMs: Infinity,
      rows: Infinity,
    };
    expect(truncatedBinary()[SEGMENTS]).toEqual([segment]);
    expect(truncatedBinary({ ceiling: 10 })[SEGMENTS]).toEqual([segment]);
    expect(truncatedBinary({ maxDelayMs: 10_000 })[SEGMENTS]).toEqual([segment]);
    expect(truncatedBinary({ ceiling: 1, maxDelayMs: 8 })[SEGMENTS][0]).toEqual({
      ...segment,
      curve: { type: 'exponential', initialDelayMs: 8, multiplier: 2 },
      ceiling: 1,
    });
    const b = truncatedBinary({ ceiling: 2 });
    expect([b.maxAttempts, b.maxElapsedMs]).toEqual([Infinity, Infinity]);
    const w = 'truncatedBinary()';
    expect(() => truncatedBinary({ ceiling: Infinity })).toThrow(
      new RangeError(
        `${w}: expected \`ceiling\` to be a whole number >= 1, got Infinity. N is a failure count such as 10.`,
      ),
    );
    expect(() => truncatedBinary({ maxDelayMs: Infinity })).toThrow(
      new RangeError(
        `${w}: expected \`maxDelayMs\` to be a finite number >= 0, got Infinity. Durations are milliseconds, such as 500.`,
      ),
    );
    expect(() => truncatedBinary({ max: 1 } as never)).toThrow(
      new TypeError(`${w}: unknown option \`max\`. Did you mean \`maxDelayMs\`? Known options: ceiling, maxDelayMs.`),
    );
    expect(() => truncatedBinary(1 as never)).toThrow(new TypeError(`${w}: expected an options object, got 1.`));
  });

  it('ethernet: max (2^min(c,10) − 1) × 51.2 µs, mean E(c) = (2^c − 1)/2 slots, 16 attempts', () => {
    const s = describePolicy(presets.ethernet, 100);
    expect(s.rows).toHaveLength(15);
    expect(s.stopsAfterAttempt).toBe(16);
    for (const r of s.rows) {
      const c = r.attempt;
      expect(r.maxDelayMs).toBeCloseTo((2 ** Math.min(c, 10) - 1) * 0.0512, 12);
      expect(r.minDelayMs).toBe(0);
      expect(r.meanDelayMs / 0.0512).toBeCloseTo((2 ** Math.min(c, 10) - 1) / 2, 9);
    }
    expect(s.rows[2]?.meanDelayMs).toBeCloseTo(3.5 * 0.0512, 12); // the article's c = 3 example
  });

  it('wifi: CW 31, 63, …, 1023 slots of 9 µs after each failure, 7 transmissions', () => {
    const s = describePolicy(presets.wifi, 100);
    expect(s.stopsAfterAttempt).toBe(7);
    expect(s.rows.map((r) => Math.round(r.maxDelayMs / 0.009))).toEqual([31, 63, 127, 255, 511, 1023]);
    expect(Math.round(describeRow(presets.wifi, 9).maxDelayMs / 0.009)).toBe(1023);
  });

  it('sip: 500 ms doubling to T2 = 4 s; 11 transmissions before Timer F (32 s)', () => {
    expect(column('sip', 8, 'delayMs')).toEqual([500, 1_000, 2_000, 4_000, 4_000, 4_000, 4_000, 4_000]);
    const waits = sample(presets.sip, { count: 100 });
    expect(waits).toHaveLength(10);
    let t = 0;
    const sends = [0, ...waits.map((w) => (t += w))];
    expect(sends.map((x) => x / 1000)).toEqual([0, 0.5, 1.5, 3.5, 7.5, 11.5, 15.5, 19.5, 23.5, 27.5, 31.5]);
  });

  it('sip-invite: 500 ms doubling without cap; 7 transmissions before Timer B (32 s)', () => {
    expect(column('sipInvite', 7, 'delayMs')).toEqual([500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000]);
    const waits = sample(presets.sipInvite, { count: 100 });
    expect(waits).toEqual([500, 1_000, 2_000, 4_000, 8_000, 16_000]);
  });

  it('grpc-connect: 1 s without jitter, then 1.6^(n−1) s ±20 %, cap 120 s before jitter', () => {
    const rows = describePolicy(presets.grpcConnect, 4).rows;
    expect(rows[0]).toEqual({ attempt: 1, delayMs: 1_000, minDelayMs: 1_000, maxDelayMs: 1_000, meanDelayMs: 1_000 });
    expect(rows.slice(1).map((r) => [r.delayMs, r.minDelayMs, r.maxDelayMs].map((x) => +x.toFixed(6)))).toEqual([
      [1_600, 1_280, 1_920],
      [2_560, 2_048, 3_072],
      [4_096, 3_276.8, 4_915.2],
    ]);
    expect(describeRow(presets.grpcConnect, 100)).toMatchObject({ delayMs: 120_000, maxDelayMs: 144_000 });
    expect(run(presets.grpcConnect, 2, 0)).toEqual([1_000, 1_280]);
    expect(presets.grpcConnect.maxAttempts).toBe(Infinity);
  });

  it('default: [0, 100), [0, 200), [0, 400), [0, 800) ms, 5 attempts', () => {
    expect(describePolicy(presets.default, 10).rows.map((r) => [r.minDelayMs, r.maxDelayMs])).toEqual([
      [0, 100],
      [0, 200],
      [0, 400],
      [0, 800],
    ]);
    expect(describeRow(presets.default, 20).maxDelayMs).toBe(20_000);
    expect(sample(presets.default, { random: always(NEXT_BELOW_ONE) }).every((d, i) => d < 100 * 2 ** i)).toBe(true);
    expect(sample(presets.default, { random: seeded(3) })).toHaveLength(4);
  });
});

describe('presetCatalog', () => {
  it('lists every preset once, by kebab-case id', () => {
    expect(presetCatalog.map((p) => p.key).sort()).toEqual(Object.keys(presets).sort());
    expect(new Set(presetCatalog.map((p) => p.id)).size).toBe(presetCatalog.length);
    for (const p of presetCatalog) {
      expect(p.id).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(p.backoff).toBe(presets[p.key]);
      expect(p.title.length).toBeGreaterThan(10);
      expect(p.source.length).toBeGreaterThan(3);
    }
    expect(presetCatalog.map((p) => p.id)).toEqual(
      expect.arrayContaining([
        'google-http-client',
        'google-drive',
        'aws-simpledb',
        'aws-polling',
        'aws-standard',
        'truncated-binary',
        'ethernet',
        'wifi',
        'sip',
        'sip-invite',
        'grpc-connect',
        'default',
      ]),
    );
  });

  it('finds a preset by id or key', () => {
    expect(findPreset('google-http-client')?.backoff).toBe(presets.googleHttpClient);
    expect(findPreset('sipInvite')?.id).toBe('sip-invite');
    expect(findPreset('nope')).toBeUndefined();
    expect(findPreset('')).toBeUndefined();
    expect(findPreset('default')?.key).toBe('default');
    expect(findPreset('awsStandard')?.backoff).toBe(presets.awsStandard);
  });
});
