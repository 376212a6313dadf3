import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ebb } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'ebb-simulate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function json<T>(args: string[]): Promise<T> {
  const r = await ebb(['simulate', ...args, '--json']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as T;
}

describe('ebb simulate, run as a process', () => {
  it('wifi --json: transmitProbability and collisionProbability beside Bianchi, within 3 % and 5 %', async () => {
    const doc = await json<{
      transmitProbability: number;
      collisionProbability: number;
      bianchi: { transmitProbability: number; collisionProbability: number };
    }>(['wifi', '--stations', '20', '--cw-min', '15', '--stages', '6', '--slots', '500000', '--seed', '9']);
    expect(Math.abs(doc.collisionProbability / doc.bianchi.collisionProbability - 1)).toBeLessThan(0.03);
    expect(Math.abs(doc.transmitProbability / doc.bianchi.transmitProbability - 1)).toBeLessThan(0.05);
    const text = await ebb([
      'simulate',
      'wifi',
      '--stations',
      '20',
      '--cw-min',
      '15',
      '--stages',
      '6',
      '--slots',
      '500000',
      '--seed',
      '9',
    ]);
    expect(text.stdout).toContain(doc.bianchi.collisionProbability.toFixed(4));
    expect(text.stdout).toContain(doc.collisionProbability.toFixed(4));
  });

  it('ethernet --sweep-ceiling 1..16 --svg --png: the trade-off as JSON and as charts', async () => {
    const svg = join(dir, 'ceiling.svg');
    const png = join(dir, 'ceiling.png');
    const doc = await json<{ points: { ceiling: number; collisionProbability: number; latencyStdDevSlots: number }[] }>(
      ['ethernet', '--sweep-ceiling', '1..16', '--slots', '100000', '--svg', svg, '--png', png],
    );
    expect(doc.points.map((p) => p.ceiling)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    const [first, last] = [doc.points[0], doc.points[15]];
    expect(last?.collisionProbability).toBeLessThan((first?.collisionProbability ?? 0) - 0.3);
    expect(last?.latencyStdDevSlots).toBeGreaterThan(10 * (first?.latencyStdDevSlots ?? 0));
    const text = readFileSync(svg, 'utf8');
    expect(text).toMatch(/^<svg /);
    for (const t of [
      'Choosing the backoff ceiling',
      'collision probability',
      'frame latency (slots, log scale)',
      'standard deviation',
    ]) {
      expect(text).toContain(t);
    }
    expect([...readFileSync(png).subarray(1, 4)].map((c) => String.fromCharCode(c)).join('')).toBe('PNG');
  });

  it('contention --json at 50 clients: jitter wins on time and work', async () => {
    const doc = await json<{ points: { results: { strategy: string; calls: number; timeMs: number }[] }[] }>([
      'contention',
      '--runs',
      '30',
    ]);
    const by = Object.fromEntries((doc.points[0]?.results ?? []).map((r) => [r.strategy, r]));
    expect(by.full?.timeMs).toBeLessThan((by.exponential?.timeMs ?? 0) / 5);
    expect(by.decorrelated?.timeMs).toBeLessThan((by.exponential?.timeMs ?? 0) / 5);
    expect(by.full?.calls).toBeLessThan(by.exponential?.calls ?? 0);
  });

  it('overload --json: the un-jittered spike, the jittered spread', async () => {
    const doc = await json<{
      results: { strategy: string; peakOfferedPerSecondAfterRecovery: number; amplification: number }[];
    }>(['overload', '--clients', '500', '--capacity', '50', '--queue', '50', '--outage', '10s']);
    const [plain, full] = doc.results;
    expect(plain?.strategy).toBe('exponential');
    expect(plain?.peakOfferedPerSecondAfterRecovery).toBeGreaterThan(4 * 50);
    expect(full?.peakOfferedPerSecondAfterRecovery).toBeLessThan((plain?.peakOfferedPerSecondAfterRecovery ?? 0) / 2);
  });

  it('delays and bad flags: one line on stderr, exit 2', async () => {
    const ok = await ebb(['simulate', 'delays', 'google-http-client', '--runs', '2000', '--attempts', '3']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^delays — google-http-client/);
    for (const args of [
      ['simulate', 'nope'],
      ['simulate', 'wifi', '--stations', '0'],
      ['simulate', 'ethernet', '--sweep-ceiling', '5..1'],
      ['simulate', 'contention', '--strategies', 'fast'],
      ['simulate', 'overload', '--rate', 'fast'],
      ['simulate', 'ethernet', '--ceiling', '40'],
    ]) {
      const r = await ebb(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stdout).toBe('');
    }
  });

  it.each([
    [['contention', '--base', '0ms'], 'ebb: --base must be a number > 0, got 0. The post uses 5 ms.'],
    [
      ['overload', '--clients', '10', '--capacity', '0'],
      'ebb: --capacity must be a number > 0, got 0. Requests per second, such as 100.',
    ],
    [['brownout', '--slowdown', '0.5'], 'ebb: --slowdown must be a number >= 1, got 0.5. Such as 10.'],
    [['slow-tail', '--spread', '-1'], 'ebb: --spread must be a number from 0 to 3, got -1. Such as 1.'],
    [
      ['contention', '--clients', '10', '--runs', '2', '--base', '1s', '--cap', '1ms'],
      'ebb: --cap (1 ms) is below the first wait (2 s, twice --base), so every wait would be 1 ms. Raise --cap, or lower --base.',
    ],
  ])('a model’s bad value names the flag typed, not the library’s option: %j', async (args, message) => {
    const r = await ebb(['simulate', ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`${message}\n`);
  });
});
