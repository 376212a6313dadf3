import { spawn } from 'node:child_process';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './cli.js';
import { killGroup } from './process-group.mjs';

/**
 * A vitest project of its own in a new temporary folder (named from `prefix`): this repository's
 * `node_modules` linked in, and `config` as its `vitest.config.mts`. Returns the folder; the
 * caller writes its test files there and removes it.
 */
export function vitestProject(prefix: string, config: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'vitest.config.mts'), config);
  return dir;
}

/**
 * Runs this repository's vitest on `files` in `dir` (a project of its own: {@link vitestProject}),
 * with `env` added to this process's environment and colour off. The run is a process group of
 * its own: if it has not ended after `timeoutMs`, the whole group — vitest and its workers, which
 * may be spinning in a synchronous loop — is killed (SIGKILL) and `code` is null.
 */
export function vitestIn(
  dir: string,
  files: readonly string[],
  env: Readonly<Record<string, string>>,
  timeoutMs = 50_000,
): Promise<{ code: number | null; out: string; ms: number }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(
      process.execPath,
      [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', 'vitest.config.mts', ...files],
      {
        cwd: dir,
        env: { ...process.env, ...env, NO_COLOR: '1', FORCE_COLOR: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (out += d));
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      killGroup(child);
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: killed ? null : code, out, ms: Date.now() - t0 });
    });
  });
}
