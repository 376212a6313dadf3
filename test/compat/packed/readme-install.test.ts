// The README's Install section, followed as written: its `npm pack` line in the repository (the
// workspace `npm test` runs in is the clone after its `npm ci`), its `npm i` line in a new
// project, then the README's first program and the `ebb` command there. The pack destination is
// a fresh temporary folder in place of /tmp/ebb, so that two runs cannot meet. The size the
// README states is held against the size measured here.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blocksOf } from '../../readme/blocks.js';
import { ROOT } from '../../support/cli.js';
import { run } from './pack.js';

const README = join(ROOT, 'README.md');
const text = readFileSync(README, 'utf8');
const installSection = text.slice(text.indexOf('## Install'), text.indexOf('\n## ', text.indexOf('## Install') + 1));
const blocks = blocksOf(README);
const installBlock = blocks.find((b) => b.lang === 'sh' && installSection.includes(b.code.trim()));
const firstProgram = blocks.find((b) => b.lang === 'ts' && b.run);

/** Bytes of every file under `path` whose name passes `keep`. */
function bytes(path: string, keep: (name: string) => boolean = () => true): number {
  const s = statSync(path);
  if (!s.isDirectory()) return keep(path) ? s.size : 0;
  return readdirSync(path).reduce((n, f) => n + bytes(join(path, f), keep), 0);
}

let dir: string;
let app: string;
const ran: { line: string; code: number | null; stderr: string }[] = [];

beforeAll(async () => {
  if (!installBlock) throw new Error('README.md: no sh block in the Install section');
  dir = mkdtempSync(join(tmpdir(), 'ebb-readme-install-'));
  const destination = join(dir, 'ebb');
  app = join(dir, 'project');
  mkdirSync(app);
  // "its package.json with "type": "module""
  writeFileSync(
    join(app, 'package.json'),
    `${JSON.stringify({ name: 'project', private: true, type: 'module' }, null, 2)}\n`,
  );
  let cwd = ROOT;
  for (const raw of installBlock.code.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('# in your project')) cwd = app;
    if (line === '' || line.startsWith('#')) continue;
    if (line === 'npm ci') continue; // the workspace this test runs in is that step's result
    const r = await run('bash', ['-c', line.replaceAll('/tmp/ebb', destination)], cwd, 300_000);
    ran.push({ line, code: r.code, stderr: r.stderr });
    if (r.code !== 0) break;
  }
}, 600_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the README's install instructions, followed as written", () => {
  it('are npm ci, then npm pack of both packages in the repository, then npm i of the two tarballs in your project', () => {
    expect(ran.map((r) => r.line.split(' ').slice(0, 2).join(' '))).toEqual(['mkdir -p', 'npm i']);
    expect(installBlock?.code).toMatch(/^npm ci$/m);
    for (const r of ran) expect(r.code, `${r.line}\n${r.stderr}`).toBe(0);
  });

  it("run the README's first program and the ebb command in the new project", async () => {
    const js = ts.transpileModule(firstProgram?.code ?? '', {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
    }).outputText;
    writeFileSync(join(app, 'index.mjs'), js);
    const program = await run(process.execPath, ['index.mjs'], app);
    expect(program.code, program.stderr).toBe(0);
    expect(program.stdout.trim()).toBe(/\/\/ → (.+)$/m.exec(firstProgram?.code ?? '')?.[1]);
    const cli = await run('npx', ['--no', 'ebb', 'schedule', '--list'], app);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/^default /m);
  });

  it('install what the README says they install: 3 packages, the size and the source maps it states (±0.3 MB)', () => {
    const stated = /installs 3 packages[\s\S]*?(\d+\.\d) MB on\s+disk of which (\d+\.\d) MB are source maps/.exec(
      installSection,
    );
    expect(stated, 'the README states the size').not.toBeNull();
    const nodeModules = join(app, 'node_modules');
    expect(
      readdirSync(nodeModules)
        .filter((n) => !n.startsWith('.'))
        .sort(),
    ).toEqual(['commander', 'ebb', 'ebb-cli']);
    const total = bytes(nodeModules) / 1e6;
    const maps = bytes(nodeModules, (n) => n.endsWith('.map')) / 1e6;
    console.log(`README install: ${total.toFixed(2)} MB in node_modules, ${maps.toFixed(2)} MB of source maps`);
    expect(Math.abs(total - Number(stated?.[1]))).toBeLessThanOrEqual(0.3);
    expect(Math.abs(maps - Number(stated?.[2]))).toBeLessThanOrEqual(0.3);
  });
});
