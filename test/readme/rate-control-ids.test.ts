// docs/rate-control.md states the rate law once: the code (packages/ebb/src/rate/law.ts) is its
// precise form, and the page explains each rule by the id the code's branch carries. This holds
// the two to the same ids, so a rule added to the code is explained, and the page names no rule
// the code lacks.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

const ids = (text: string, pattern: RegExp): string[] =>
  [...new Set([...text.matchAll(pattern)].map((m) => m[1] as string))].sort();

it('docs/rate-control.md explains every rule id rate/law.ts carries, and names none it does not', () => {
  const source = readFileSync(join(ROOT, 'packages/ebb/src/rate/law.ts'), 'utf8');
  const page = readFileSync(join(ROOT, 'docs/rate-control.md'), 'utf8');
  const inCode = ids(source, /\[([a-z]+(?:[.-][a-z]+)*)\]/g);
  expect(inCode).toContain('fall.relapse');
  expect(ids(page, /`\[([a-z]+(?:[.-][a-z]+)*)\]`/g)).toEqual(inCode);
});
