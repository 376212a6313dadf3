import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

/** The pages a user reads: the READMEs, docs/ and the guides (not the maintainers' notebook, docs/dev/). */
const PAGES = [
  'README.md',
  'packages/ebb/README.md',
  'packages/ebb-cli/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...readdirSync(join(ROOT, 'docs', 'guides'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/guides/${f}`),
];

/** Every `code` an ebb error carries: what each class's brand getter returns, read from the source. */
function codesInSource(dir: string): Set<string> {
  const codes = new Set<string>();
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.includes('.test.')) continue;
    const text = readFileSync(join(entry.parentPath, entry.name), 'utf8');
    for (const m of text.matchAll(/get \[EBB_ERROR\]\(\): string \{\s*return '(EBB_[A-Z_]+)';/g))
      codes.add(m[1] as string);
  }
  return codes;
}

describe('error codes the docs name', () => {
  it("every 'EBB_…' code a page quotes is one an ebb error carries (a user compares err.code with it)", () => {
    const codes = codesInSource(join(ROOT, 'packages', 'ebb', 'src'));
    // The brand getters are found: the check below cannot pass on an empty set.
    expect(codes.size).toBeGreaterThanOrEqual(7);
    const wrong: string[] = [];
    for (const page of PAGES) {
      const text = readFileSync(join(ROOT, page), 'utf8');
      for (const m of text.matchAll(/'(EBB_[A-Z_]+)'/g)) {
        if (!codes.has(m[1] as string)) wrong.push(`${page}: '${m[1]}'`);
      }
    }
    expect(wrong, `known codes: ${[...codes].sort().join(', ')}`).toEqual([]);
  });
});
