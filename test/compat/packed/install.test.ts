import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { install, pack, project, run } from './pack.js';

let dir: string;
let app: string;
let tarballs: Record<string, string>;

/** Bytes of every file under `path` (what `du --apparent-size -b` counts). */
function bytes(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.size;
  return readdirSync(path).reduce((n, f) => n + bytes(join(path, f)), 0);
}

/** Installed packages: every directory holding a package.json directly under a node_modules. */
function packages(nodeModules: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(nodeModules)) {
    if (entry.startsWith('.')) continue;
    const names = entry.startsWith('@') ? readdirSync(join(nodeModules, entry)).map((e) => `${entry}/${e}`) : [entry];
    for (const name of names) {
      if (existsSync(join(nodeModules, name, 'package.json'))) found.push(name);
      if (existsSync(join(nodeModules, name, 'node_modules')))
        found.push(...packages(join(nodeModules, name, 'node_modules')));
    }
  }
  return found;
}

beforeAll(async () => {
  ({ dir, tarballs } = await pack(['ebb', 'ebb-cli']));
  app = project(join(dir, 'app'));
  const r = await install(app, [tarballs.ebb as string, tarballs['ebb-cli'] as string]);
  expect(r.code, r.stderr).toBe(0);
}, 180_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the packed packages, installed as the README says in a new project', () => {
  it('both tarballs carry the LICENSE and a README', async () => {
    for (const tarball of Object.values(tarballs)) {
      const r = await run('tar', ['-tzf', tarball], dir);
      expect(r.stdout.split('\n')).toEqual(expect.arrayContaining(['package/LICENSE', 'package/README.md']));
    }
  });

  it('npx ebb schedule default and npx ebb run -- true work', async () => {
    const schedule = await run('npx', ['--no', 'ebb', 'schedule', 'default'], app);
    expect(schedule.code, schedule.stderr).toBe(0);
    expect(schedule.stdout).toMatch(/^default — /);
    expect(schedule.stdout).toMatch(/stops: after attempt 5 \(maxAttempts\)/);
    const ok = await run('npx', ['--no', 'ebb', 'run', '--', 'true'], app);
    expect(ok.code, ok.stderr).toBe(0);
    const fails = await run('npx', ['--no', 'ebb', 'run', '--max-delay', '1ms', '--', 'false'], app);
    expect(fails.code).toBe(1);
    expect(fails.stderr).toMatch(/giving up after 5 attempts/);
  });

  it('installs no charting stack; --svg says in one line what to add', async () => {
    const nodeModules = join(app, 'node_modules');
    const names = packages(nodeModules).sort();
    expect(names).toEqual(['commander', 'ebb', 'ebb-cli']);
    // The ebb the CLI uses is the packed one, not a namesake from the registry.
    const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8'));
    expect(lock.packages['node_modules/ebb'].resolved).toMatch(/^file:/);
    const size = bytes(nodeModules);
    // Reported for the README (the figure it quotes comes from this line).
    console.log(`ebb + ebb-cli install: ${names.length} packages, ${(size / 1024).toFixed(0)} KiB in node_modules`);
    const r = await run('npx', ['--no', 'ebb', 'simulate', 'ethernet', '--svg', join(dir, 'x.svg')], app);
    expect(r.code).toBe(2);
    // npm itself may warn about the environment's config; the rest is ebb's one line.
    expect(r.stderr.replace(/^npm warn .*\n/gm, '')).toBe(
      'ebb: --svg and --png need vega, which ebb-cli does not install by itself: npm i vega vega-lite @resvg/resvg-js\n',
    );
  });
});
