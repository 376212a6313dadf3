import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultBackoff } from 'ebb';
import { describe, expect, it } from 'vitest';
import { shapeOf } from '../../packages/ebb-cli/src/demo-policy.js';
import { ROOT } from '../support/cli.js';

// The default policy's numbers are written once, in the library (backoff/default.ts). The docs
// restate them in prose; this reads them back from the policy's own exact schedule (the same
// reading `ebb demo` uses) and checks every paragraph of the docs that restates them.
const DOCS = [
  'README.md',
  'packages/ebb/README.md',
  'packages/ebb-cli/README.md',
  'docs/retry.md',
  'docs/policies.md',
  ...readdirSync(join(ROOT, 'docs/guides'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/guides/${f}`),
];

/**
 * The units of text that speak of the default policy and give its first wait: a code line, a
 * table row, or one sentence of prose (a list item counts as prose), so that a number elsewhere in
 * the same paragraph cannot stand in for a wrong one.
 */
function restatements(): { where: string; text: string }[] {
  const found: { where: string; text: string }[] = [];
  for (const file of DOCS) {
    for (const p of readFileSync(join(ROOT, file), 'utf8').split(/\n\s*\n/)) {
      const units =
        p.startsWith('```') || p.startsWith('|')
          ? p.split('\n')
          : p.split(/\n(?=- )/).flatMap((item) => item.replace(/\s*\n\s*/g, ' ').split(/(?<=\.)\s+(?=[A-Z`*])/));
      for (const text of units) {
        if (/ebb's `?default|presets\.default|default policy/.test(text) && /\d+ ?ms ?×/.test(text))
          found.push({ where: file, text });
      }
    }
  }
  return found;
}

describe("the docs' restatements of the default policy", () => {
  const shape = shapeOf(defaultBackoff);
  const found = restatements();

  it('are found (README ×2, the library README, the CLI README, docs/retry.md, docs/policies.md ×2, a guide)', () => {
    expect(found.map((f) => f.where).sort()).toEqual([
      'README.md',
      'README.md',
      'docs/guides/retry-http.md',
      'docs/policies.md',
      'docs/policies.md',
      'docs/retry.md',
      'packages/ebb-cli/README.md',
      'packages/ebb/README.md',
    ]);
  });

  it.each(found)('$where: "$text" gives the default policy’s numbers', ({ text }) => {
    expect(text).toMatch(new RegExp(`\\b${shape.initialDelayMs} ?ms ?× ?${shape.multiplier}`));
    if (/\bcap/.test(text))
      expect(text).toMatch(new RegExp(`\\b${shape.maxDelayMs / 1000} ?s,? cap|capped at ${shape.maxDelayMs / 1000} s`));
    if (/attempts/.test(text)) expect(text).toMatch(new RegExp(`\\b${shape.maxAttempts} attempts`));
    if (/jitter/.test(text)) expect(text).toMatch(new RegExp(`\\b${shape.jitter} jitter`));
  });
});
