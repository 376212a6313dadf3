import { describe, expect, it } from 'vitest';
import { ebb } from '../support/cli.js';

interface Row {
  attempt: number;
  delayMs: number;
  minDelayMs: number;
  maxDelayMs: number;
  meanDelayMs: number;
}

async function json(args: string[]): Promise<{ name: string; rows: Row[]; stopsAfterAttempt: number | null }> {
  const r = await ebb([...args, '--json']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

describe('ebb schedule, run as a process', () => {
  it("google-http-client --attempts 10 reproduces the seed's table: rows 1–9 within 1 %, ranges ±50 %", async () => {
    const doc = await json(['schedule', 'google-http-client', '--attempts', '10']);
    expect(doc.name).toBe('google-http-client');
    expect(doc.rows).toHaveLength(10);
    expect(doc.stopsAfterAttempt).toBeNull();
    // The memo's table, in seconds (request 10 is its "STOP", the elapsed budget in the Javadoc's example).
    const seed: Array<[number, number, number]> = [
      [0.5, 0.25, 0.75],
      [0.75, 0.38, 1.12],
      [1.12, 0.56, 1.69],
      [1.69, 0.84, 2.53],
      [2.53, 1.27, 3.8],
      [3.8, 1.9, 5.7],
      [5.7, 2.85, 8.54],
      [8.54, 4.27, 12.81],
      [12.81, 6.41, 19.22],
    ];
    seed.forEach(([interval, low, high], i) => {
      const row = doc.rows[i] as Row;
      expect(Math.abs(row.delayMs / 1000 - interval) / interval).toBeLessThan(0.01);
      // The memo rounds its ranges to two decimals (0.375 → 0.38); the range itself is ±50 %.
      expect(Math.abs(row.minDelayMs / 1000 - low)).toBeLessThanOrEqual(0.01);
      expect(Math.abs(row.maxDelayMs / 1000 - high)).toBeLessThanOrEqual(0.01);
      // Whole ms as Google's Java draws them: (int) (d/2 + r·(d + 1)) for r in [0, 1).
      expect(row.minDelayMs).toBe(Math.floor(row.delayMs * 0.5));
      expect(row.maxDelayMs).toBe(Math.floor(row.delayMs * 0.5 + (1 - 2 ** -53) * (row.delayMs + 1)));
    });
    expect(doc.rows[9]?.delayMs).toBe(19_210);
  });

  it('the human table explains the STOP row', async () => {
    const r = await ebb(['schedule', 'google-http-client', '--attempts', '10']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /note: The Javadoc table's STOP at try 10 is its example of the elapsed budget running out/,
    );
    // Google's own stop rule: the budget is checked before each wait.
    expect(r.stdout).toMatch(/stops: once more than 15 min have passed when a wait is due/);
  });

  it('truncated-binary gives the Qiita maxima; --attempts 2000 prints only finite numbers', async () => {
    const doc = await json(['schedule', 'truncated-binary', '--attempts', '12']);
    expect(doc.rows.map((r) => Math.floor(r.maxDelayMs))).toEqual([
      19, 39, 78, 156, 312, 625, 1250, 2500, 5000, 10000, 10000, 10000,
    ]);
    const long = await ebb(['schedule', 'truncated-binary', '--attempts', '2000', '--json']);
    const rows = (JSON.parse(long.stdout) as { rows: Row[] }).rows;
    // JSON would write Infinity and NaN as null; check the text as well as the numbers.
    expect(JSON.stringify(rows)).not.toMatch(/null|Infinity|NaN/);
    expect(rows).toHaveLength(2000);
    for (const r of rows)
      for (const v of [r.delayMs, r.minDelayMs, r.maxDelayMs, r.meanDelayMs]) expect(Number.isFinite(v)).toBe(true);
    const text = await ebb(['schedule', 'truncated-binary', '--attempts', '2000']);
    expect(text.stdout).not.toMatch(/Infinity|NaN/);
  });

  it('ethernet: max (2^min(c,10) − 1) × 51.2 µs, mean E(c) = (2^c − 1)/2 slots, stops after attempt 16', async () => {
    const doc = await json(['schedule', 'ethernet', '--attempts', '20']);
    expect(doc.stopsAfterAttempt).toBe(16);
    expect(doc.rows).toHaveLength(15);
    for (const r of doc.rows) {
      expect(r.maxDelayMs).toBeCloseTo((2 ** Math.min(r.attempt, 10) - 1) * 0.0512, 12);
      expect(r.meanDelayMs / 0.0512).toBeCloseTo((2 ** Math.min(r.attempt, 10) - 1) / 2, 9);
    }
  });

  it('custom flags build the policy the issue spells out', async () => {
    const doc = await json([
      'schedule',
      '--initial',
      '500ms',
      '--multiplier',
      '1.5',
      '--max-delay',
      '60s',
      '--jitter',
      'proportional:0.5',
      '--max-attempts',
      '10',
      '--max-elapsed',
      '15m',
      '--ceiling',
      '10',
    ]);
    expect(doc.name).toBe('custom');
    expect(doc.stopsAfterAttempt).toBe(10);
    expect(doc.rows.map((r) => r.delayMs)).toEqual([
      500, 750, 1125, 1687.5, 2531.25, 3796.875, 5695.3125, 8542.96875, 12814.453125,
    ]);
  });

  it('--sample --seed prints the same run every time', async () => {
    const a = await ebb(['schedule', 'default', '--sample', '--seed', '42', '--json']);
    const b = await ebb(['schedule', 'default', '--sample', '--seed', '42', '--json']);
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    expect(JSON.parse(a.stdout).rows).toHaveLength(4);
  });

  it('no preset and no flags: the default policy, as ebb run uses it', async () => {
    const bare = await json(['schedule']);
    const named = await json(['schedule', 'default']);
    expect(bare).toEqual(named);
    expect(bare.name).toBe('default');
  });

  it('--list lists the presets', async () => {
    const r = await ebb(['schedule', '--list']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean).length).toBeGreaterThanOrEqual(12);
  });

  it.each([
    [['schedule', 'no-such-preset'], /^ebb: unknown preset "no-such-preset"/],
    [['schedule', '--initial', '-5ms'], /^ebb: --initial expects a duration/],
    [['schedule', '--multiplier', '0.5'], /^ebb: --multiplier must be a finite number >= 1, got 0\.5/],
    [['schedule', '--max-attempts', '2.5'], /^ebb: --max-attempts must be a whole number >= 1/],
    [['schedule', '--jitter', 'proportional:1.5'], /^ebb: --jitter proportional:FACTOR must be a number from 0 to 1/],
    [['schedule', '--initial', 'NaN'], /^ebb: --initial expects a duration/],
    [['schedule', 'sip', '--multiplier', '3'], /^ebb: --multiplier defines a custom curve/],
    [
      ['schedule', '--initial', '1s', '--max-delay', '10ms'],
      /^ebb: --max-delay \(10 ms\) is below the first wait \(1 s\), so every wait would be 10 ms\. Raise it, or lower the first wait \(--initial, --delay\)\./,
    ],
    [['schedule', '--no-such-flag'], /^ebb: unknown option '--no-such-flag'/],
    [['frobnicate'], /^ebb: unknown command 'frobnicate'/],
  ])('bad input %j exits 2 with one line on stderr and no stack trace', async (args, message) => {
    const r = await ebb(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('--help prints usage and exits 0', async () => {
    const r = await ebb(['schedule', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Usage: ebb schedule/);
    expect(r.stdout).toMatch(/--max-attempts <n>/);
  });
});
