import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

// The project's own record — which issue asked for a change, which run measured it, which round
// wrote it — goes in commit messages and the maintainers' notebook (docs/dev/), not in what a
// user or a reader of the code meets: the user docs, the code's comments, the test titles. Those
// say what and why.

/** Words that name the project's history rather than the thing itself. */
const HISTORY: readonly RegExp[] = [
  /\bissues? ?#?\d+/i, // an issue by its number
  /\bMust show\b/, // an issue's acceptance list, as issues write it ("a case must show" is English)
  /\bdefect \d+/i, // an issue's list of defects
  /\b[Rr]uns? [A-Z]\b/, // a run named by its letter
  /\bround of (?!requests\b)/i, // a round by its date (a round of requests is the rate law's term)
  /\b(this|last|previous|earlier) round\b/i,
  /\bround-by-round\b|\bper-round\b/i,
  /\b(morning|afternoon|evening) rounds?\b/i,
];

/** The allow list: the maintainers' notebook. */
const NOTEBOOK = 'docs/dev/';

const files = (dir: string, keep: (path: string) => boolean): string[] =>
  readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .filter((p) => !p.includes('node_modules') && !p.includes('/dist/') && keep(p));

/** Each offending line of `text`, as "file:line: text". */
function offences(file: string, text: string, firstLine = 1): string[] {
  return text
    .split('\n')
    .flatMap((line, i) => (HISTORY.some((p) => p.test(line)) ? [`${file}:${firstLine + i}: ${line.trim()}`] : []));
}

const lineOf = (source: ts.SourceFile, pos: number) => source.getLineAndCharacterOfPosition(pos).line + 1;

/** Every comment of a TypeScript or JavaScript file, with its first line (from the parsed tree). */
function comments(file: string): { text: string; line: number }[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const seen = new Map<number, { text: string; line: number }>();
  const add = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) seen.set(r.pos, { text: text.slice(r.pos, r.end), line: lineOf(source, r.pos) });
  };
  const visit = (node: ts.Node) => {
    add(ts.getLeadingCommentRanges(text, node.getFullStart()));
    add(ts.getTrailingCommentRanges(text, node.getEnd()));
    ts.forEachChild(node, visit);
  };
  visit(source);
  add(ts.getLeadingCommentRanges(text, source.endOfFileToken.getFullStart()));
  return [...seen.values()];
}

const TEST_CALLS = new Set(['describe', 'it', 'test', 'suite']);

/** Every test and suite title of a test file (the first argument of describe/it/test, however chained). */
function titles(file: string): { text: string; line: number }[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: { text: string; line: number }[] = [];
  const root = (e: ts.Expression): string | undefined => {
    if (ts.isIdentifier(e)) return e.text;
    if (ts.isPropertyAccessExpression(e)) return root(e.expression);
    if (ts.isCallExpression(e)) return root(e.expression);
    return undefined;
  };
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && TEST_CALLS.has(root(node.expression) ?? '')) {
      const first = node.arguments[0];
      if (
        first &&
        (ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first) || ts.isTemplateExpression(first))
      )
        out.push({ text: first.getText(source), line: lineOf(source, first.getStart(source)) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

const userDocs = [
  'README.md',
  ...files('packages', (p) => /^packages\/[^/]+\/README\.md$/.test(p)),
  ...files('docs', (p) => p.endsWith('.md') && !p.startsWith(NOTEBOOK)),
];
const code = [
  ...files('packages', (p) => /^packages\/[^/]+\/src\/.*\.ts$/.test(p)),
  ...files('test', (p) => /\.(ts|mjs|mts)$/.test(p)),
  ...['vitest.config.ts', 'stryker.conf.mjs', 'stryker.backoff.conf.mjs'],
];
const tests = code.filter((p) => /\.test\.ts$/.test(p));

describe('the project record stays in docs/dev/ and the commit messages', () => {
  it('the patterns catch the record and leave technical words alone', () => {
    const caught = (s: string) => HISTORY.some((p) => p.test(s));
    for (const s of [
      'issue 13, Must show 2',
      'Run K moves to the history',
      'since run L',
      'the round of 22 November',
      'before this round',
      'issue 10, defect 7',
      'the afternoon rounds',
      'issues 10 and 14',
    ])
      expect(caught(s), s).toBe(true);
    for (const s of [
      'one round trip',
      'rounds to whole milliseconds',
      'a round-trip time',
      'one cut per round of requests',
      'Issue a request',
      'run Node 20',
      'the run ends',
    ])
      expect(caught(s), s).toBe(false);
  });

  it('no user doc outside docs/dev/ names an issue, a run or a round (README, package READMEs, docs/)', () => {
    expect(userDocs.length).toBeGreaterThan(8);
    expect(userDocs.flatMap((f) => offences(f, readFileSync(join(ROOT, f), 'utf8')))).toEqual([]);
  });

  it('no comment in the source or the tests does', () => {
    expect(code.length).toBeGreaterThan(200);
    expect(code.flatMap((f) => comments(f).flatMap((c) => offences(f, c.text, c.line)))).toEqual([]);
  });

  it('no test title does', () => {
    expect(tests.length).toBeGreaterThan(150);
    expect(tests.flatMap((f) => titles(f).flatMap((t) => offences(f, t.text, t.line)))).toEqual([]);
  });
});
