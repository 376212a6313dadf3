/**
 * The library's shape, checked against docs/structure.md: the layers hold (no source file
 * imports from a layer above its own), every public export is listed there with the reason it
 * is public (and nothing is listed that is not exported), and every source file over 250 lines
 * is listed with the reason it is not split.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { expect, it, describe as suite } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const src = path.join(root, 'packages/ebb/src');
const doc = readFileSync(path.join(root, 'docs/structure.md'), 'utf8');

/** Layer of each folder of packages/ebb/src: a file may import only from its own folder or a lower layer. */
const LAYERS: Record<string, number> = {
  core: 1,
  backoff: 2,
  retry: 3,
  rate: 4,
  resilience: 5,
  redis: 5,
  http: 6,
  sim: 6,
  otel: 6,
  clients: 7,
  middleware: 7,
};

const ENTRIES: Record<string, string> = {
  ebb: 'index.ts',
  'ebb/http': 'http/index.ts',
  'ebb/rate': 'rate/index.ts',
  'ebb/redis': 'redis/index.ts',
  'ebb/resilience': 'resilience/index.ts',
  'ebb/sim': 'sim/index.ts',
  'ebb/otel': 'otel/index.ts',
  'ebb/undici': 'clients/undici.ts',
  'ebb/clients': 'clients/index.ts',
  'ebb/middleware': 'middleware/index.ts',
};

const isSource = (f: string): boolean => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.includes('test-helpers');

/** Lines as `wc -l` counts them. */
const lineCount = (file: string): number => readFileSync(file, 'utf8').split('\n').length - 1;

function sourceFiles(): string[] {
  const files: string[] = [];
  for (const dir of readdirSync(src, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const f of readdirSync(path.join(src, dir.name))) if (isSource(f)) files.push(`${dir.name}/${f}`);
  }
  return files.sort();
}

/** The rows of the markdown table under the heading `heading` (first cell, backticked names only). */
function tableNames(heading: string): string[] {
  const start = doc.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`docs/structure.md has no heading "${heading}"`);
  const rest = doc.slice(start + heading.length + 2);
  const end = rest.search(/\n#{2,4} /);
  const section = end < 0 ? rest : rest.slice(0, end);
  const names: string[] = [];
  for (const line of section.split('\n')) {
    if (!line.startsWith('|') || /^\|\s*-/.test(line)) continue;
    const first = line.split('|')[1] ?? '';
    for (const m of first.matchAll(/`([^`]+)`/g)) names.push(m[1] as string);
  }
  return names;
}

function exportsOf(entries: Record<string, string>): Map<string, string[]> {
  const files = Object.values(entries).map((f) => path.join(src, f));
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const out = new Map<string, string[]>();
  for (const [entry, file] of Object.entries(entries)) {
    const sf = program.getSourceFile(path.join(src, file));
    const symbol = sf && checker.getSymbolAtLocation(sf);
    if (!symbol) throw new Error(`cannot read the exports of ${file}`);
    out.set(
      entry,
      checker
        .getExportsOfModule(symbol)
        .map((s) => s.name)
        .sort(),
    );
  }
  return out;
}

suite('the layers', () => {
  it('every folder of packages/ebb/src has a layer', () => {
    const folders = readdirSync(src, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    expect(folders).toEqual(Object.keys(LAYERS).sort());
  });

  it('no source file imports from its own layer or above, outside its own folder', () => {
    const wrong: string[] = [];
    for (const file of sourceFiles()) {
      const folder = file.split('/')[0] as string;
      const text = readFileSync(path.join(src, file), 'utf8');
      for (const m of text.matchAll(/from '\.\.\/([a-z-]+)\//g)) {
        const target = m[1] as string;
        const layer = LAYERS[target];
        if (layer === undefined || layer >= (LAYERS[folder] as number)) wrong.push(`${file} imports ../${target}/`);
      }
    }
    expect(wrong).toEqual([]);
  });
});

/** Files held to a ceiling of lines (docs/structure.md says why): each was one class of several concepts, split by concept. */
const CEILINGS: Record<string, number> = {
  'rate/adaptive-rate.ts': 350,
  'redis/shared-rate.ts': 350,
};

suite('files over 250 lines', () => {
  const listed = tableNames('### Files over 250 lines');
  it('every source file over 250 lines is listed with its reason, and every listed one is', () => {
    const long = sourceFiles().filter((f) => lineCount(path.join(src, f)) > 250);
    expect(listed.sort()).toEqual(long.sort());
  });

  it('the pacer (adaptiveRate) and the fleet member (sharedRate) stay within 350 lines each: read in one sitting', () => {
    const over = Object.entries(CEILINGS)
      .map(([file, ceiling]) => ({ file, lines: lineCount(path.join(src, file)), ceiling }))
      .filter((f) => f.lines > f.ceiling);
    expect(over).toEqual([]);
  });
});

suite('the public exports', () => {
  const actual = exportsOf(ENTRIES);
  for (const entry of Object.keys(ENTRIES)) {
    it(`${entry}: every export has its row in docs/structure.md, and every row names an export`, () => {
      const documented = [...new Set(tableNames(`### \`${entry}\``))].sort();
      expect(documented).toEqual(actual.get(entry));
    });
  }

  it('the counts stated in docs/structure.md are the real ones', () => {
    for (const [entry, names] of actual) {
      expect(doc, `${entry} count`).toContain(`### \`${entry}\`\n\n${names.length} exports`);
    }
  });
});
