// The API reference lists every export of every entry point, each with its doc comment. The list
// of exports (the API report) is what TypeScript sees in the built declarations a user's compiler
// reads (packages/ebb/dist/<entry>.d.ts); the reference is TypeDoc's, built from the same files
// with the site's settings (site/typedoc.json) into a temporary folder.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

const ENTRIES = [
  'index',
  'http',
  'rate',
  'resilience',
  'redis',
  'sim',
  'otel',
  'clients',
  'middleware',
  'undici',
] as const;
const DIST = join(ROOT, 'packages', 'ebb', 'dist');

/** The names each entry's declaration file exports, as the compiler resolves them. */
function apiReport(): Record<string, string[]> {
  const files = ENTRIES.map((e) => join(DIST, `${e}.d.ts`));
  const program = ts.createProgram(files, { noEmit: true, skipLibCheck: true, types: [] });
  const checker = program.getTypeChecker();
  const report: Record<string, string[]> = {};
  ENTRIES.forEach((entry, i) => {
    const source = program.getSourceFile(files[i] as string);
    const symbol = source && checker.getSymbolAtLocation(source);
    if (!symbol) throw new Error(`${files[i]} is not a module`);
    report[entry] = checker
      .getExportsOfModule(symbol)
      .map((s) => s.getName())
      .sort();
  });
  return report;
}

interface Reflection {
  readonly id: number;
  readonly name: string;
  /** A re-export (TypeDoc's "Reference"): the reflection it points to, documented where it is declared. */
  readonly target?: number;
  readonly comment?: { readonly summary: readonly { readonly text: string }[] };
  readonly signatures?: readonly Reflection[];
  readonly getSignature?: Reflection;
  readonly children?: readonly Reflection[];
}

const byId = new Map<number, Reflection>();

/** The summary of a reflection's doc comment, from itself or its first signature (a re-export: its target's). */
function summary(r: Reflection): string {
  if (r.target !== undefined) {
    const target = byId.get(r.target);
    return target ? summary(target) : '';
  }
  const c = r.comment ?? r.signatures?.find((s) => s.comment)?.comment ?? r.getSignature?.comment;
  return (c?.summary ?? [])
    .map((p) => p.text)
    .join('')
    .trim();
}

describe('the API reference', () => {
  let dir: string;
  let modules: readonly Reflection[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ebb-api-'));
    const bin = join(ROOT, 'node_modules', 'typedoc', 'bin', 'typedoc');
    const args = [
      bin,
      '--options',
      join(ROOT, 'site', 'typedoc.json'),
      '--out',
      join(dir, 'html'),
      '--json',
      join(dir, 'api.json'),
    ];
    await new Promise<void>((resolve, reject) =>
      execFile(process.execPath, args, { cwd: join(ROOT, 'site'), timeout: 180_000 }, (error, _out, stderr) =>
        error ? reject(new Error(`typedoc failed: ${stderr}`)) : resolve(),
      ),
    );
    modules = (JSON.parse(readFileSync(join(dir, 'api.json'), 'utf8')) as Reflection).children ?? [];
    for (const m of modules) for (const c of m.children ?? []) byId.set(c.id, c);
  }, 240_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('has one module per entry point: ebb, ebb/http, ebb/rate, ebb/resilience, ebb/redis, ebb/sim, ebb/otel, ebb/clients, ebb/middleware, ebb/undici', () => {
    expect(modules.map((m) => m.name).sort()).toEqual([...ENTRIES].sort());
  });

  it.each(ENTRIES)('lists every export of the %s entry (the API report of its declarations)', (entry) => {
    const report = apiReport()[entry] ?? [];
    expect(report.length).toBeGreaterThan(0);
    const listed = (modules.find((m) => m.name === entry)?.children ?? []).map((c) => c.name).sort();
    expect(listed).toEqual(report);
  });

  it.each(ENTRIES)('documents every export of the %s entry with a doc comment', (entry) => {
    const undocumented = (modules.find((m) => m.name === entry)?.children ?? [])
      .filter((c) => summary(c) === '')
      .map((c) => c.name);
    expect(undocumented).toEqual([]);
  });
});
