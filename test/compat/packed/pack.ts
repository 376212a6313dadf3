import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../support/cli.js';

/** Runs a command and collects its output; never rejects (the caller asserts on `code`). */
export function run(
  file: string,
  args: readonly string[],
  cwd: string,
  timeoutMs = 120_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

/**
 * Packs the workspace packages as they would be published (the built `dist/` must be current:
 * `npm test` builds first) into a fresh directory outside the repository, so nothing the
 * repository has installed can be found from there. Returns the tarballs by package name.
 */
export async function pack(names: readonly string[]): Promise<{ dir: string; tarballs: Record<string, string> }> {
  const dir = mkdtempSync(join(tmpdir(), 'ebb-packed-'));
  const out = join(dir, 'tarballs');
  mkdirSync(out);
  const args = ['pack', ...names.flatMap((n) => ['--workspace', n]), '--pack-destination', out];
  const r = await run('npm', args, ROOT);
  if (r.code !== 0) throw new Error(`npm pack failed: ${r.stderr}`);
  const tarballs: Record<string, string> = {};
  for (const file of readdirSync(out)) {
    const name = names.find((n) => file.startsWith(`${n}-`) && /^\d/.test(file.slice(n.length + 1)));
    if (name) tarballs[name] = join(out, file);
  }
  return { dir, tarballs };
}

/** A new npm project in `dir`, with only a package.json. */
export function project(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'app', private: true }, null, 2)}\n`);
  return dir;
}

/**
 * The packed `names` installed in a new project `app` (default `app`) of a fresh directory `dir`:
 * what a user has after `npm install` of the published tarballs. Throws with npm's stderr when
 * the install fails.
 */
export async function packedProject(names: readonly string[], app = 'app'): Promise<{ dir: string; app: string }> {
  const { dir, tarballs } = await pack(names);
  const path = project(join(dir, app));
  const r = await install(
    path,
    names.map((n) => tarballs[n] as string),
  );
  if (r.code !== 0) throw new Error(`npm install of the packed ${names.join(', ')} failed: ${r.stderr}`);
  return { dir, app: path };
}

/** `npm install` of local tarballs: no audit, no funding notice, the local cache first. */
export function install(dir: string, specs: readonly string[]) {
  return run('npm', ['install', ...specs, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], dir);
}
