import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

// What `npm ci` on a fresh clone prints: nothing a user must learn to ignore. .ci/run's install
// step fails on any line but npm's banner and summary; these hold the causes one by one.

/**
 * Whether `version` (x.y.z) meets an engines range, as npm reads it: ranges joined by `||`, each
 * a list of comparators (`>=20.19.0`, `^22.13.0`, `~1.2`, `20`, `<24`, `*`). Throws on anything
 * else, so that a range this cannot read fails the test rather than passing it.
 */
function satisfies(version: string, range: string): boolean {
  const v = version.replace(/^v/, '').split('.').map(Number) as [number, number, number];
  const cmp = ([a0 = 0, a1 = 0, a2 = 0]: number[], [b0 = 0, b1 = 0, b2 = 0]: number[]) => a0 - b0 || a1 - b1 || a2 - b2;
  const one = (c: string): boolean => {
    if (c === '*' || c === '') return true;
    const m = /^(\^|~|>=|<=|>|<|=)?v?(\d+)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?$/.exec(c);
    if (!m) throw new Error(`an engines range this test cannot read: ${range}`);
    const [, op = '', major, minor, patch] = m;
    const given = [Number(major), Number(minor ?? 0) || 0, Number(patch ?? 0) || 0];
    const wildMinor = minor === undefined || minor === 'x' || minor === '*';
    const wildPatch = patch === undefined || patch === 'x' || patch === '*';
    const d = cmp(v, given);
    if (op === '>=') return d >= 0;
    if (op === '>') return d > 0;
    if (op === '<=') return d <= 0;
    if (op === '<') return d < 0;
    if (op === '^') return d >= 0 && v[0] === given[0] && (given[0] !== 0 || v[1] === given[1]);
    if (op === '~') return d >= 0 && v[0] === given[0] && (wildMinor || v[1] === given[1]);
    // A bare or `=` version: equal in every part it names.
    return v[0] === given[0] && (wildMinor || v[1] === given[1]) && (wildPatch || v[2] === given[2]);
  };
  // `>= 22` is `>=22`: npm allows a space after the operator.
  const sets = range.replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1').split('||');
  return sets.some((set) => set.trim().split(/\s+/).every(one));
}

const json = (file: string) => JSON.parse(readFileSync(join(ROOT, file), 'utf8'));
const lock = json('package-lock.json') as {
  packages: Record<string, { name?: string; engines?: { node?: string } | string[]; hasInstallScript?: boolean }>;
};
const installed = Object.entries(lock.packages).filter(
  ([key]) => key.startsWith('node_modules/') || key.includes('/node_modules/'),
);
const nameOf = (key: string, entry: { name?: string }) =>
  entry.name ?? key.slice(key.lastIndexOf('node_modules/') + 13);

describe('npm ci on a fresh clone prints no warning the project could avoid', () => {
  it('reads engines ranges as npm does', () => {
    expect(satisfies('v20.20.2', '^20.19.0 || >=22.12.0')).toBe(true);
    expect(satisfies('v20.18.0', '^20.19.0 || >=22.12.0')).toBe(false);
    expect(satisfies('v20.20.2', '>=23.5.0 || ^22.13.0 || ^20.17.0')).toBe(true);
    expect(satisfies('v20.20.2', '18 || 20 || >=22')).toBe(true);
    expect(satisfies('v20.20.2', '>=22')).toBe(false);
    expect(satisfies('v24.1.0', '>= 22')).toBe(true);
    expect(satisfies('v20.20.2', '>= 20.0.0')).toBe(true);
    expect(satisfies('v20.20.2', '>=14.17 <21')).toBe(true);
    expect(() => satisfies('v20.20.2', '20.x - 22')).toThrow(/cannot read/);
  });

  it('every package it installs allows this Node.js in its engines (else npm warns EBADENGINE)', () => {
    const refused = installed
      .filter(([, e]) => !Array.isArray(e.engines) && typeof e.engines?.node === 'string')
      .filter(([, e]) => !satisfies(process.version, (e.engines as { node: string }).node))
      .map(([key, e]) => `${key} (${(e.engines as { node: string }).node})`);
    expect(installed.length).toBeGreaterThan(100);
    expect(refused).toEqual([]);
  });

  it('every package with an install script is allowed or denied in package.json allowScripts (else npm lists it)', () => {
    const allow = (json('package.json') as { allowScripts?: Record<string, boolean> }).allowScripts ?? {};
    const scripted = installed.filter(([, e]) => e.hasInstallScript).map(([key, e]) => nameOf(key, e));
    expect(scripted.length).toBeGreaterThan(0);
    expect(scripted.filter((name) => !(name in allow))).toEqual([]);
  });

  describe('the build that prepare runs prints nothing when it succeeds', () => {
    // A copy of the CLI package at the same depth under .tmp/, so that its tsconfig's ../../ and
    // the workspace's node_modules resolve as they do in place, and the real dist/ is not touched
    // while other tests use it.
    const copy = join(ROOT, '.tmp', `build-check-${process.pid}`);
    afterAll(() => rmSync(copy, { recursive: true, force: true }));

    it('scripts/build-package.mjs on the CLI package: no file listing, no notice, and the files are written', async () => {
      const pkg = join(copy, 'packages', 'ebb-cli');
      mkdirSync(pkg, { recursive: true });
      cpSync(join(ROOT, 'tsconfig.base.json'), join(copy, 'tsconfig.base.json'));
      for (const f of ['src', 'package.json', 'tsconfig.json', 'tsdown.config.ts'])
        cpSync(join(ROOT, 'packages', 'ebb-cli', f), join(pkg, f), { recursive: true });
      const { stdout, stderr } = await promisify(execFile)(
        process.execPath,
        [join(ROOT, 'scripts', 'build-package.mjs')],
        {
          cwd: pkg,
          timeout: 120_000,
        },
      );
      expect(stdout).toBe('');
      expect(stderr).toBe('');
      expect(existsSync(join(pkg, 'dist', 'index.js'))).toBe(true);
    });

    it('prepare runs the build silently, and each package builds through that script', () => {
      expect(json('package.json').scripts.prepare).toBe('npm run --silent build');
      for (const p of ['packages/ebb/package.json', 'packages/ebb-cli/package.json'])
        expect(json(p).scripts.build, p).toBe('node ../../scripts/build-package.mjs');
    });
  });
});
