import {
  type Backoff,
  constant,
  defaultBackoff,
  describeRow,
  describePolicy as describeSchedule,
  equalJitter,
  exponential,
  findPreset,
  fullJitter,
  linear,
  noJitter,
  presets,
  proportionalJitter,
  type ScheduleRow,
  sequence,
  withOptions,
} from 'ebb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, type DemoSettings, demo, demoPolicies, policySentence, shapeOf } from './demo.js';
import type { PolicyShape } from './demo-policy.js';
import { formatDuration } from './duration.js';

/** Every number written in `text`. */
const numbersIn = (text: string) => [...text.matchAll(/\d+(?:\.\d+)?/g)].map((m) => Number(m[0]));

/** The schedule's rows as [delay, min, max, mean], up to where the policy stops. */
const rowsOf = (b: Backoff) =>
  describeSchedule(b, b.maxAttempts).rows.map((r) => [r.delayMs, r.minDelayMs, r.maxDelayMs, r.meanDelayMs]);

/** The library's own one-line summary of its default, written from the values (backoff/default.ts). */
const librarySummary = () => {
  const title = findPreset('default')?.title as string;
  expect(title).toMatch(/^ebb's default: /);
  return title.replace(/^ebb's default: /, '').split(', ');
};

describe("the demo's policy and words are ebb's default, read from it", () => {
  it("with the default's first wait, the jittered crowd runs defaultBackoff itself; the other its schedule without jitter", () => {
    const [plain, jittered] = demoPolicies(DEFAULT_SETTINGS.baseDelayMs);
    expect(jittered?.backoff).toBe(defaultBackoff);
    expect(DEFAULT_SETTINGS.policy).toBe(defaultBackoff);
    expect(DEFAULT_SETTINGS.baseDelayMs).toBe(describeSchedule(defaultBackoff, 1).rows[0]?.delayMs);
    const plainRows = describeSchedule(plain?.backoff as Backoff, 1_000);
    const defaultRows = describeSchedule(defaultBackoff, 1_000);
    expect(plainRows.stopsAfterAttempt).toBe(defaultRows.stopsAfterAttempt);
    expect(plainRows.rows.map((r) => [r.delayMs, r.minDelayMs, r.maxDelayMs])).toEqual(
      defaultRows.rows.map((r) => [r.delayMs, r.delayMs, r.delayMs]),
    );
  });

  it('with another first wait, both keep the rest of the default: growth, cap, stop; only the jitter differs', () => {
    const first = describeSchedule(defaultBackoff, 1).rows[0] as ScheduleRow;
    const cap = describeRow(defaultBackoff, Number.MAX_SAFE_INTEGER).delayMs;
    for (const base of [1, 37, 500, 5_000]) {
      const [plain, jittered] = demoPolicies(base);
      const scale = base / first.delayMs;
      // Row n of the default from another first wait: the default's row scaled, under the same cap.
      const expected = describeSchedule(
        withOptions(defaultBackoff, { maxDelayMs: Number.POSITIVE_INFINITY }),
        1_000,
      ).rows.map((r) => {
        const d = Math.min(cap, r.delayMs * scale);
        return [d, (r.minDelayMs / r.delayMs) * d, (r.maxDelayMs / r.delayMs) * d];
      });
      const j = describeSchedule(jittered?.backoff as Backoff, 1_000);
      const p = describeSchedule(plain?.backoff as Backoff, 1_000);
      expect(j.rows.map((r) => [r.delayMs, r.minDelayMs, r.maxDelayMs])).toEqual(expected);
      expect(p.rows.map((r) => [r.delayMs, r.minDelayMs, r.maxDelayMs])).toEqual(expected.map(([d]) => [d, d, d]));
      expect(j.stopsAfterAttempt).toBe(defaultBackoff.maxAttempts);
      expect(p.stopsAfterAttempt).toBe(defaultBackoff.maxAttempts);
      expect(jittered?.backoff.maxElapsedMs).toBe(defaultBackoff.maxElapsedMs);
    }
  });

  it("says what the library's own summary of its default says, and no number it does not have", () => {
    const phrases = librarySummary(); // e.g. "100 ms ×2", "20 s cap", "full jitter", "5 attempts"
    const allowed = new Set(phrases.flatMap(numbersIn));
    const sentence = policySentence(DEFAULT_SETTINGS.baseDelayMs);
    const [plain, jittered] = demoPolicies(DEFAULT_SETTINGS.baseDelayMs);
    for (const phrase of phrases) {
      expect(sentence).toContain(phrase);
      expect(jittered?.description).toContain(phrase);
      if (!phrase.endsWith('jitter')) expect(plain?.description).toContain(phrase);
    }
    expect(plain?.description).toContain('no jitter');
    for (const text of [sentence, plain?.description, jittered?.description])
      for (const n of numbersIn(text as string)) expect(allowed, `${n} in "${text}"`).toContain(n);
  });

  it("reads the default's numbers back from its schedule exactly (the same as the library's summary)", () => {
    const s = shapeOf(defaultBackoff);
    const phrases = librarySummary();
    expect(phrases).toContain(`${formatDuration(s.initialDelayMs)} ×${s.multiplier}`);
    expect(phrases).toContain(`${formatDuration(s.maxDelayMs)} cap`);
    expect(phrases).toContain(`${s.jitter} jitter`);
    expect(phrases).toContain(`${s.maxAttempts} attempts`);
    expect(s.maxElapsedMs).toBe(defaultBackoff.maxElapsedMs);
  });
});

// What a change of the default in one place would do: the same code given another policy.
const exponentials = fc
  .record({
    initialDelayMs: fc.integer({ min: 1, max: 5_000 }),
    // Growth factors as people write them (1.5, 1.6, 2, 3.25): read back exactly. Any double is
    // the next test's.
    multiplier: fc.oneof(
      fc.constantFrom(1, 1.5, 1.6, 2, 3),
      fc.integer({ min: 100, max: 400 }).map((k) => k / 100),
    ),
    capFactor: fc.double({ min: 1, max: 1e6, noNaN: true }),
    maxAttempts: fc.integer({ min: 2, max: 12 }),
    maxElapsedMs: fc.oneof(fc.constant(Number.POSITIVE_INFINITY), fc.integer({ min: 1, max: 3_600_000 })),
    jitter: fc.constantFrom('full' as const, 'equal' as const),
  })
  .map(({ capFactor, ...o }) => ({
    ...o,
    // At least the second wait, so that the first two rows show the growth; a flat curve (×1)
    // never meets a cap above its first wait, so its only readable cap is that wait.
    maxDelayMs: o.multiplier === 1 ? o.initialDelayMs : Math.ceil(o.initialDelayMs * o.multiplier * capFactor),
  }));

/** The policy a shape describes: its jitter is named in the shape ('full', 'equal'). */
const policyOf = ({ jitter, ...o }: PolicyShape): Backoff =>
  exponential({ ...o, jitter: jitter === 'full' ? fullJitter : equalJitter });

describe('given another default, every number and word of the demo follows it', () => {
  it('reads the policy back exactly; both policies are the same curve and limits from the --base wait; the words quote only its numbers', () => {
    fc.assert(
      fc.property(exponentials, fc.integer({ min: 1, max: 5_000 }), (o, drawn) => {
        // --base at most the policy's cap: a curve refuses a cap below its first wait (ebb's
        // default caps at 20 s; --base goes up to 5 s).
        const base = Math.min(drawn, o.maxDelayMs);
        const policy = policyOf(o);
        expect(shapeOf(policy)).toEqual(o);
        expect(demoPolicies(o.initialDelayMs, policy)[1]?.backoff).toBe(policy);
        const [plain, jittered] = demoPolicies(base, policy);
        const expected = { ...o, initialDelayMs: base };
        expect(rowsOf(jittered?.backoff as Backoff)).toEqual(rowsOf(policyOf(expected)));
        expect(rowsOf(plain?.backoff as Backoff)).toEqual(rowsOf(exponential({ ...expected, jitter: noJitter })));
        expect(jittered?.backoff.maxElapsedMs).toBe(o.maxElapsedMs);
        expect(plain?.backoff.maxElapsedMs).toBe(o.maxElapsedMs);

        const words = [
          formatDuration(base),
          `×${o.multiplier}`,
          `${formatDuration(o.maxDelayMs)} cap`,
          `${o.maxAttempts} attempts`,
        ];
        if (Number.isFinite(o.maxElapsedMs)) words.push(`${formatDuration(o.maxElapsedMs)} budget`);
        const allowed = new Set([...words, formatDuration(o.initialDelayMs)].flatMap(numbersIn));
        const sentence = policySentence(base, policy);
        for (const text of [sentence, plain?.description as string, jittered?.description as string]) {
          for (const w of words.slice(1)) expect(text).toContain(w);
          for (const n of numbersIn(text)) expect(allowed, `${n} in "${text}"`).toContain(n);
        }
        expect(sentence).toContain(`${o.jitter} jitter`);
        expect(sentence).toContain(formatDuration(base));
        expect(jittered?.description.startsWith(`${formatDuration(base)} ×${o.multiplier}, ${o.jitter} jitter`)).toBe(
          true,
        );
        expect(plain?.description.startsWith(`${formatDuration(base)} ×${o.multiplier}, no jitter`)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('reads any growth factor back to within a few units in the last place, and the schedule exactly', () => {
    fc.assert(
      // Above ×1.001 a curve meets any cap before row 2^53, the last row describeRow computes (below,
      // 1 × (1 + 2^-52)^(2^53) is e^2: a cap of 8 ms is never met, and reads as e^2 ms).
      fc.property(exponentials, fc.double({ min: 1.001, max: 4, noNaN: true }), (o, multiplier) => {
        const maxDelayMs = Math.max(o.maxDelayMs, Math.ceil(o.initialDelayMs * multiplier));
        const policy = policyOf({ ...o, multiplier, maxDelayMs });
        const s = shapeOf(policy);
        expect({ ...s, multiplier }).toEqual({
          ...o,
          multiplier,
          maxDelayMs: multiplier === 1 ? o.initialDelayMs : maxDelayMs,
        });
        expect(Math.abs(s.multiplier - multiplier)).toBeLessThanOrEqual(4 * Number.EPSILON * multiplier);
        expect(rowsOf(policyOf({ ...s, maxDelayMs: s.maxDelayMs }))).toEqual(rowsOf(policy));
      }),
      { numRuns: 300 },
    );
  });

  it('reads a constant policy as the exponential curve ×1 it equals', () => {
    const policy = constant({ delayMs: 300, maxAttempts: 4, jitter: equalJitter });
    expect(shapeOf(policy)).toEqual({
      initialDelayMs: 300,
      multiplier: 1,
      maxDelayMs: 300,
      maxAttempts: 4,
      maxElapsedMs: Number.POSITIVE_INFINITY,
      jitter: 'equal',
    });
  });

  it('refuses a default it cannot restate, saying what it found: no jitter, another jitter or curve, no stop', () => {
    const cases: [Backoff, RegExp][] = [
      [
        withOptions(defaultBackoff, { jitter: noJitter }),
        /full or equal jitter; this one draws its first wait from \[100, 100\]/,
      ],
      [
        withOptions(defaultBackoff, { jitter: proportionalJitter(0.5) }),
        /full or equal jitter; this one draws its first wait from \[50, 150\] around a first wait of 100 ms/,
      ],
      [presets.googleHttpClient, /full or equal jitter/],
      [presets.awsPolling, /full or equal jitter/],
      [linear({ initialDelayMs: 100, incrementMs: 100, maxAttempts: 5, jitter: fullJitter }), /exponential curve/],
      [sequence({ delaysMs: [100, 300, 200], maxAttempts: 5, jitter: fullJitter }), /exponential curve/],
      [withOptions(defaultBackoff, { maxAttempts: Number.POSITIVE_INFINITY }), /no `maxAttempts`/],
    ];
    for (const [policy, message] of cases) {
      expect(() => shapeOf(policy), String(message)).toThrow(TypeError);
      expect(() => shapeOf(policy)).toThrow(message);
      expect(() => demoPolicies(100, policy)).toThrow(message);
    }
  });
});

// Real sockets, virtual time: a busy machine makes this slower, never different.
describe('demo with another default (a small crowd against a real server on 127.0.0.1)', { timeout: 60_000 }, () => {
  it('the printed policy and each run follow that policy: its words, and no more attempts than it allows', async () => {
    const policy = exponential({
      initialDelayMs: 250,
      multiplier: 3,
      maxDelayMs: 7_000,
      maxAttempts: 3,
      jitter: equalJitter,
    });
    const settings: DemoSettings = { ...DEFAULT_SETTINGS, clients: 20, baseDelayMs: 250, policy };
    const { stdout, runs } = await demo(settings, false, { write: () => true });
    expect(stdout).toContain(policySentence(250, policy));
    expect(stdout).toContain('(250 ms ×3, 7 s cap, 3 attempts); one without its equal jitter.');
    expect(runs.map((r) => r.policy)).toEqual(demoPolicies(250, policy).map((p) => p.description));
    for (const r of runs) {
      expect(r.requests).toBeGreaterThanOrEqual(20);
      expect(r.requests).toBeLessThanOrEqual(20 * 3);
    }
    // None of the default's own words, unless this policy shares them.
    for (const phrase of librarySummary())
      if (!policySentence(250, policy).includes(phrase)) expect(stdout).not.toContain(phrase);
  });
});
