// ebb simulate outage | brownout | slow-tail as a process: one JSON document on stdout with the
// mechanism beside "no mechanism", and the charts as SVG and PNG.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ebb } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'ebb-simulate-resilience-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('ebb simulate outage | brownout | slow-tail, run as a process', () => {
  it('outage --json --svg --png: the breaker lets one probe per open period through', async () => {
    const svg = join(dir, 'outage.svg');
    const png = join(dir, 'outage.png');
    const r = await ebb([
      'simulate',
      'outage',
      '--duration',
      '20s',
      '--outage',
      '10s',
      '--json',
      '--svg',
      svg,
      '--png',
      png,
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as {
      model: string;
      results: { subject: string; deadRequests: number; openPeriods: { sent: number }[] }[];
    };
    expect(doc.model).toBe('outage');
    const [none, breaker] = doc.results;
    expect(breaker?.openPeriods.every((p) => p.sent <= 1)).toBe(true);
    expect((breaker?.deadRequests ?? Infinity) * 50).toBeLessThan(none?.deadRequests ?? 0);
    expect(readFileSync(svg, 'utf8')).toContain('requests reaching the service');
    expect([...readFileSync(png).subarray(1, 4)].map((c) => String.fromCharCode(c)).join('')).toBe('PNG');
  });

  it('brownout and slow-tail print their tables; a bad flag is one line on stderr, exit 2', async () => {
    const brownout = await ebb(['simulate', 'brownout', '--duration', '5s', '--algorithms', 'gradient2']);
    expect(brownout.code).toBe(0);
    expect(brownout.stdout).toMatch(/gradient2 +120\/s/);
    const tail = await ebb(['simulate', 'slow-tail', '--duration', '5s', '--delay', '20ms']);
    expect(tail.code).toBe(0);
    expect(tail.stdout).toContain('hedged (20 ms, budget 5.0 %)');
    const bad = await ebb(['simulate', 'slow-tail', '--budget', '2']);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toContain('--budget');
  });

  it.each([
    ['brownout', '100ms'],
    ['slow-tail', '10ms'],
  ])('%s --service 0ms: the usage error alone, before any estimate of the run', async (model, example) => {
    const r = await ebb(['simulate', model, '--service', '0ms', '--duration', '1h']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`ebb: --service must be longer than 0, got "0ms": such as ${example}\n`);
  });
});
