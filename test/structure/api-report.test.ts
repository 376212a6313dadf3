import { execFile } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

describe('the public API report (api/*.api.md)', () => {
  it('matches the declarations the package ships: a change to an export or a signature fails until `npm run api -- --update` rewrites the report in the same commit', async () => {
    const run = await promisify(execFile)(process.execPath, ['scripts/api-report.mjs'], { cwd: root }).then(
      (r) => ({ code: 0, out: r.stdout + r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
    );
    expect(run.out).not.toMatch(/differs from/);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/\.: api\/ebb\.api\.md matches/);
  }, 180_000);
});
