// ebb simulate fleet-breaker as a process: the real sharedCircuitBreaker members against a model
// of Redis beside one local circuitBreaker per process; a table, one JSON document with --json, a
// chart with --svg; each flag changes the run; equal seeds give equal runs; a bad flag is one line
// on stderr with exit 2.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ebb } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'ebb-simulate-fleet-breaker-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Counts {
  reachedInOutage: number;
  reachedAfterOpen: number;
  openedAfterMs: number | null;
  firstSuccessAfterMs: number | null;
  refusedWhileUp: number;
  partitionedRefused: number;
  commandsPerCall: number;
}
interface Doc {
  model: string;
  processes: number;
  outageFromMs: number;
  outageToMs: number;
  partitioned: number;
  seed: number;
  shared: Counts;
  local: Counts;
}

async function run(args: string[]): Promise<{ doc: Doc; stdout: string }> {
  const r = await ebb(['simulate', 'fleet-breaker', ...args, '--json']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return { doc: JSON.parse(r.stdout) as Doc, stdout: r.stdout };
}

describe('ebb simulate fleet-breaker, run as a process', () => {
  it('50 processes through a 10-s outage: after opening the shared breaker lets through at most a probe a period for the fleet, the local ones one each', async () => {
    const svg = join(dir, 'fleet.svg');
    const { doc } = await run(['--processes', '50', '--calls-per-second', '20', '--duration', '25s', '--svg', svg]);
    expect(doc).toMatchObject({ model: 'fleet-breaker', processes: 50, outageFromMs: 5000, outageToMs: 15_000 });
    // The default open periods (5 s doubling, equal jitter) leave room for two probes in the 5 s after opening.
    expect(doc.shared.reachedAfterOpen).toBeLessThanOrEqual(2);
    expect(doc.local.reachedAfterOpen).toBeGreaterThanOrEqual(49);
    // The partitioned process stops on its own; nobody healthy is refused before the outage.
    expect(doc.shared.refusedWhileUp).toBe(0);
    expect(doc.shared.partitionedRefused).toBeGreaterThan(0);
    expect(doc.shared.commandsPerCall).toBeGreaterThan(0);
    expect(doc.local.commandsPerCall).toBe(0);
    expect(readFileSync(svg, 'utf8')).toContain('Requests reaching a dead service');
  });

  it('prints the table: the shared breaker beside the local ones, by count', async () => {
    const r = await ebb(['simulate', 'fleet-breaker', '--processes', '10']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^fleet breaker — 10 processes × 10 calls a second, the service down from 5 s for 10 s/);
    expect(r.stdout).toMatch(/sharedCircuitBreaker +10 local circuitBreakers/);
    expect(r.stdout).toMatch(/… after every process was refused +\d+ +\d+\n/);
    expect(r.stdout).toMatch(/Redis commands per call +0\.\d{3} +0\.000\n/);
  });

  it('--min-members 1 with --member-failure-rate 0 lets a lone partitioned process open the fleet for a healthy one; either default alone stops it', async () => {
    const naive = await run([
      '--processes',
      '2',
      '--partitioned',
      '1',
      '--min-members',
      '1',
      '--member-failure-rate',
      '0',
    ]);
    expect(naive.doc.shared.refusedWhileUp).toBeGreaterThan(0);
    const share = await run(['--processes', '2', '--partitioned', '1', '--min-members', '1']);
    expect(share.doc.shared.refusedWhileUp).toBe(0);
    const two = await run(['--processes', '2', '--partitioned', '1', '--member-failure-rate', '0']);
    expect(two.doc.shared.refusedWhileUp).toBe(0);
  });

  it('2 partitioned of 20 (minMembers met, far from a majority) open nothing by default; with --member-failure-rate 0 they open the fleet for the other 18', async () => {
    const safe = await run(['--processes', '20', '--partitioned', '2']);
    expect(safe.doc.shared.refusedWhileUp).toBe(0);
    expect(safe.doc.shared.firstSuccessAfterMs).not.toBeNull();
    const naive = await run(['--processes', '20', '--partitioned', '2', '--member-failure-rate', '0']);
    expect(naive.doc.shared.refusedWhileUp).toBeGreaterThan(0);
  });

  it('--partitioned, --outage-start and --outage change the run', async () => {
    const none = await run(['--processes', '10', '--partitioned', '0']);
    expect(none.doc.shared.partitionedRefused).toBe(0);
    expect(none.doc.local.partitionedRefused).toBe(0);
    const one = await run(['--processes', '10']);
    expect(one.doc.local.partitionedRefused).toBeGreaterThan(0);
    const short = await run(['--processes', '10', '--outage-start', '2s', '--outage', '4s']);
    expect(short.doc).toMatchObject({ outageFromMs: 2000, outageToMs: 6000 });
    expect(short.doc.local.reachedInOutage).toBeLessThan(one.doc.local.reachedInOutage);
  });

  it('equal seeds give equal runs; another seed draws other open periods', async () => {
    const a = await run(['--processes', '20', '--seed', '2']);
    const b = await run(['--processes', '20', '--seed', '2']);
    const c = await run(['--processes', '20', '--seed', '3']);
    expect(a.stdout).toBe(b.stdout);
    expect(a.doc.seed).toBe(2);
    expect({ ...c.doc, seed: 2 }).not.toEqual(a.doc);
  });

  it.each([
    [['--processes', '5000'], '--processes'],
    [['--processes', '3', '--partitioned', '3'], '--partitioned'],
    [['--calls-per-second', '0'], '--calls-per-second'],
    [['--outage', 'soon'], '--outage'],
    [['--seed', '-1'], '--seed'],
    [['--member-failure-rate', '1'], '--member-failure-rate'],
    [['--member-failure-rate', 'half'], '--member-failure-rate'],
  ])('%j: one line on stderr naming the flag, exit 2', async (args, flag) => {
    const r = await ebb(['simulate', 'fleet-breaker', ...args]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(flag);
  });
});
