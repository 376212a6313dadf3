import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';
import { FILE_LIMIT_MS, idleMs, limitFromEnv, procStat, stalledFiles } from '../support/stall-guard.js';
import { vitestIn, vitestProject } from '../support/vitest-run.js';

// A project of its own in a temporary folder, with this repository's vitest and the guard as its
// reporter (beside the default one); each run below sets its limit.
const dir = vitestProject(
  'ebb-stall-guard-',
  `import { defineConfig } from 'vitest/config';
import { StallGuard } from ${JSON.stringify(join(ROOT, 'test/support/stall-guard.ts'))};
export default defineConfig({ test: { reporters: ['default', new StallGuard()], include: ['*.test.ts'] } });
`,
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the stall guard: which files have run too long', () => {
  it('names every file started at least the limit ago, longest first, and no other', () => {
    const started = new Map([
      ['a.test.ts', 1_000],
      ['b.test.ts', 4_000],
      ['c.test.ts', 0],
    ]);
    expect(stalledFiles(started, 5_000, 1_000)).toEqual([
      { file: 'c.test.ts', ms: 5_000 },
      { file: 'a.test.ts', ms: 4_000 },
      { file: 'b.test.ts', ms: 1_000 },
    ]);
    expect(stalledFiles(started, 4_999, 1_000)).toEqual([
      { file: 'c.test.ts', ms: 4_999 },
      { file: 'a.test.ts', ms: 3_999 },
    ]);
    expect(stalledFiles(new Map(), 1e12, 1)).toEqual([]);
  });

  it('counts the run idle from the last file that ended while none runs, and never while one runs or before any ended', () => {
    expect(idleMs(new Map(), 1_000, 5_000)).toBe(4_000);
    expect(idleMs(new Map([['a.test.ts', 4_000]]), 1_000, 5_000)).toBe(0);
    expect(idleMs(new Map(), undefined, 5_000)).toBe(0);
  });

  it('takes its limit from EBB_TEST_FILE_LIMIT_S in seconds, 10 minutes when unset, and refuses nonsense naming the variable', () => {
    expect(FILE_LIMIT_MS).toBe(600_000);
    expect(limitFromEnv(undefined)).toBe(600_000);
    expect(limitFromEnv('')).toBe(600_000);
    expect(limitFromEnv('2')).toBe(2_000);
    expect(limitFromEnv('0.5')).toBe(500);
    for (const bad of ['0', '-3', 'abc', 'Infinity', 'NaN']) {
      expect(() => limitFromEnv(bad)).toThrow(RangeError);
      expect(() => limitFromEnv(bad)).toThrow(/^EBB_TEST_FILE_LIMIT_S: expected a positive number of seconds, got "/);
    }
  });
});

describe('the stall guard in a real vitest run', () => {
  // A test in an endless synchronous loop: its own timeout (1 s) cannot fire. It leaves its pid.
  writeFileSync(
    join(dir, 'stuck.test.ts'),
    `import { writeFileSync } from 'node:fs';
import { it } from 'vitest';
it('never ends', () => {
  writeFileSync(${JSON.stringify(join(dir, 'stuck.pid'))}, String(process.pid));
  for (;;) {}
}, 1000);
`,
  );
  // A file that loads for 3 s in a synchronous loop before any test: also stuck, for a limit of 2 s.
  writeFileSync(
    join(dir, 'slow-import.test.ts'),
    `import { it } from 'vitest';
const end = Date.now() + 3000;
while (Date.now() < end) {}
it('comes after a slow import', () => {});
`,
  );
  writeFileSync(
    join(dir, 'fine.test.ts'),
    `import { expect, it } from 'vitest';
it('takes half a second', async () => { await new Promise((r) => setTimeout(r, 500)); expect(1).toBe(1); });
`,
  );

  const vitest = (files: string[], limitS: string) => vitestIn(dir, files, { EBB_TEST_FILE_LIMIT_S: limitS });

  it('ends a run with a file stuck in an endless loop: exit 1, the file named, its worker process gone', async () => {
    const r = await vitest(['stuck.test.ts'], '2');
    expect(r.code, r.out).toBe(1);
    expect(r.out).toMatch(
      /npm test stopped: stuck\.test\.ts \(\d+ s\) ran for longer than the 2 s a test file may take/,
    );
    expect(r.out).toContain('Run it alone to see where: npx vitest run stuck.test.ts');
    const pid = Number(readFileSync(join(dir, 'stuck.pid'), 'utf8'));
    expect(pid).toBeGreaterThan(0);
    // The looping worker was killed with the run, not left spinning: gone, or a zombie its new
    // parent has not reaped yet (Linux's process table, /proc/PID/stat: the state after the name).
    await new Promise((resolve) => setTimeout(resolve, 200));
    const state = procStat(pid)?.state ?? 'gone';
    expect(['gone', 'Z']).toContain(state);
  });

  it('counts a file from when its worker begins it, so a file stuck while loading is stopped too', async () => {
    const r = await vitest(['slow-import.test.ts'], '2');
    expect(r.code, r.out).toBe(1);
    expect(r.out).toMatch(/npm test stopped: slow-import\.test\.ts \(\d+ s\)/);
  });

  it('lets a run whose files all end within the limit pass, and says nothing', async () => {
    const r = await vitest(['fine.test.ts', 'slow-import.test.ts'], '10');
    expect(r.code, r.out).toBe(0);
    expect(r.out).not.toContain('npm test stopped');
    expect(r.out).toMatch(/Tests {2}2 passed/);
  });
});
