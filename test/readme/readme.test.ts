import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../compat/packed/pack.js';
import { ebb, ROOT } from '../support/cli.js';
import { type Block, blocksOf, ebbCommands } from './blocks.js';

/** The user manual: every guide's blocks are checked as the READMEs' are. */
const GUIDES = readdirSync(join(ROOT, 'docs', 'guides'))
  .filter((f) => f.endsWith('.md'))
  .sort()
  .map((f) => `docs/guides/${f}`);
/** Pages that keep the README's longer tour and figures, checked as the README is. */
const PAGES = ['docs/policies.md', 'docs/measured.md'];
const READMES = ['README.md', 'packages/ebb/README.md', 'packages/ebb-cli/README.md', ...PAGES, ...GUIDES];
const blocks = READMES.flatMap((f) => blocksOf(join(ROOT, f)));
const name = (b: Block) => `${b.file.slice(ROOT.length)}:${b.line}`;
const typescript = blocks.filter((b) => b.lang === 'ts' && b.pending === undefined);
/** Blocks that use a 1.0 name landing on another branch: each checked on its own, so a failure names it. */
const pending = blocks.filter((b) => b.lang === 'ts' && b.pending !== undefined);
const shell = blocks.filter((b) => b.lang === 'sh');
const outputs = blocks.filter((b) => b.output !== undefined);

// Under the repository's node_modules, so that `ebb`, `ebb/http`… resolve to the workspace's
// built packages exactly as they resolve for a user who installed them.
mkdirSync(join(ROOT, 'node_modules', '.cache'), { recursive: true });
const dir = mkdtempSync(join(ROOT, 'node_modules', '.cache', 'ebb-readme-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The block as a module: its prelude, then its code; `export {}` makes top-level await legal. */
const source = (b: Block) => `${b.prelude}\n${b.code}\nexport {};\n`;

/** Type-checks `list` as one strict program against the built packages; each problem as "file:line: message". */
function typeErrors(list: readonly Block[], prefix: string): string[] {
  const files = list.map((b, i) => {
    const file = join(dir, `${prefix}-${i}.ts`);
    writeFileSync(file, source(b));
    return file;
  });
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules', '@types')],
    skipLibCheck: true,
    noUnusedLocals: false,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const i = d.file ? files.indexOf(d.file.fileName) : -1;
    const where = i >= 0 ? name(list[i] as Block) : (d.file?.fileName ?? '');
    return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

describe('the user manual (docs/guides)', () => {
  it('the README is one a newcomer reads in ten minutes: at most 250 lines', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(250);
  });

  it.each(GUIDES.filter((f) => !f.endsWith('/README.md')))(
    '%s has the guide shape: what it is for, when to use it and not, gotchas, an example with imports',
    (f) => {
      const text = readFileSync(join(ROOT, f), 'utf8');
      expect(text).toMatch(/\*\*What it is for\.\*\*/);
      expect(text).toMatch(/\*\*Use it when\*\*/);
      expect(text).toMatch(/\*\*Do not use it\*\*/);
      expect(text).toMatch(/^## Gotchas$/m);
      const code = blocksOf(join(ROOT, f)).filter((b) => b.lang === 'ts');
      expect(code.length, `${f} has a TypeScript example`).toBeGreaterThan(0);
      for (const b of code)
        expect(b.code, `${name(b)} imports what it uses`).toMatch(/^import .* from 'ebb(\/\w+)?';$/m);
    },
  );

  it("the manual's index links every guide", () => {
    const index = readFileSync(join(ROOT, 'docs/guides/README.md'), 'utf8');
    for (const f of GUIDES.filter((g) => !g.endsWith('/README.md')))
      expect(index).toContain(`(${f.slice('docs/guides/'.length)})`);
  });
});

describe('README code blocks', () => {
  it('every block is one this test knows how to check', () => {
    expect(blocks.length).toBeGreaterThan(10);
    for (const b of blocks) {
      // ts: type-checked (and run); sh: each `npx ebb` line run; text: output compared or plain text.
      expect(['ts', 'sh', 'text'], `${name(b)} is \`\`\`${b.lang}`).toContain(b.lang);
      if (b.run) expect(b.lang, `${name(b)}: only ts blocks run`).toBe('ts');
    }
    expect(typescript.length).toBeGreaterThan(5);
    expect(outputs.length).toBeGreaterThan(2);
  });

  it("the READMEs speak of sources as sources, not of the project's history", () => {
    for (const f of READMES) {
      const text = readFileSync(join(ROOT, f), 'utf8');
      expect(text, f).not.toMatch(/\bmemo\b|seed (article|system|material)s?|the seeds?\b/i);
    }
  });

  it('every TypeScript block type-checks against the built packages (strict)', () => {
    expect(typeErrors(typescript, 'block')).toEqual([]);
  });

  it.each(pending.map((b) => [`${name(b)} (${b.pending})`, b] as const))(
    'the block %s, which uses a 1.0 name landing elsewhere, type-checks',
    (_, b) => {
      expect(typeErrors([b], `pending-${pending.indexOf(b)}`)).toEqual([]);
    },
  );

  it.each([...typescript, ...pending].filter((b) => b.run).map((b) => [name(b), b] as const))(
    'the self-contained block %s runs and exits 0',
    async (_, b) => {
      const js = ts.transpileModule(source(b), {
        compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
      }).outputText;
      const file = join(dir, `run-${blocks.indexOf(b)}.mjs`);
      writeFileSync(file, js);
      const r = await run(process.execPath, [file], dir, 30_000);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      // `console.log(…); // → ok 3` states what the program prints: check it.
      const stated = /console\.log\([^\n]*\); \/\/ → (.+)$/m.exec(b.code);
      if (stated) expect(r.stdout.trim()).toBe(stated[1]);
    },
  );

  it.each(
    shell.flatMap((b) => ebbCommands(b.code).map((args) => [`${name(b)}: ebb ${args.join(' ')}`, args] as const)),
  )('%s works (ebb run lines run `true` in place of their command)', async (_, args) => {
    const dashes = args.indexOf('--');
    const actual = args[0] === 'run' && dashes >= 0 ? [...args.slice(0, dashes + 1), 'true'] : args;
    const r = await ebb(actual, { timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
  });

  it.each(outputs.map((b) => [`${name(b)}: ${b.output?.join(' ')}`, b] as const))(
    'the output shown for %s is what the command prints',
    async (_, b) => {
      const [program, ...args] = b.output as string[];
      expect(program, 'an output directive names an ebb command').toBe('ebb');
      const r = await ebb(args, { timeoutMs: 60_000 });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(b.code.trimEnd());
    },
  );
});
