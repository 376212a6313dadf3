import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WORK } from '../../packages/ebb-cli/src/simulate-cost.js';
import { ebb, ROOT } from '../support/cli.js';

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** The rows of the first Markdown table after `heading`, as cells. */
function tableAfter(text: string, heading: string): string[][] {
  const rest = text.slice(text.indexOf(heading));
  const lines = rest.split('\n').map((l) => l.trim());
  const first = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split(/\|(?=(?:[^`]*`[^`]*`)*[^`]*$)/)
        .map((c) => c.trim()),
    );
  }
  return rows;
}

/** The names docs/structure.md lists for one entry point (held equal to its exports by test/structure). */
function exportsOf(entry: string): Set<string> {
  const doc = read('docs/structure.md');
  const section = doc.slice(doc.indexOf(`### \`${entry}\`\n`)).split('\n### ')[0] as string;
  return new Set([...section.matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((m) => m[1] as string));
}

describe("the ebb package's README", () => {
  const rows = tableAfter(read('packages/ebb/README.md'), '## Entry points');

  it('lists every subpath of package.json `exports`, once, in its entry-points table', () => {
    const pkg = JSON.parse(read('packages/ebb/package.json')) as { exports: Record<string, unknown> };
    const subpaths = Object.keys(pkg.exports)
      .filter((k) => k !== './package.json')
      .map((k) => (k === '.' ? 'ebb' : `ebb/${k.slice(2)}`));
    expect(rows.map((r) => r[0]?.replace(/`/g, '')).sort()).toEqual(subpaths.sort());
  });

  it('names in each row only what that entry point exports', () => {
    for (const [entry, what] of rows) {
      const name = String(entry).replace(/`/g, '');
      const exported = exportsOf(name);
      const named = [...String(what).matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((m) => m[1] as string);
      expect(named.length, name).toBeGreaterThan(0);
      for (const n of named) expect(exported.has(n), `${n} in the ${name} row`).toBe(true);
    }
  });
});

describe("the CLI's README", () => {
  const readme = read('packages/ebb-cli/README.md');

  it('lists every command and every model of ebb simulate that the help lists', async () => {
    const help = (await ebb(['help', 'simulate'])).stdout;
    const models = [...help.matchAll(/^ {2}([a-z-]+) \[options\]/gm)].map((m) => m[1] as string);
    expect(models).toHaveLength(9);
    const table = tableAfter(readme, '- **`ebb simulate <model>`**').map((r) => r[0]?.replace(/`/g, ''));
    expect(table).toEqual(models);
    const usage = (await ebb(['--help'])).stdout;
    for (const [, command] of usage.matchAll(/^ {2}(schedule|run|simulate|demo)\b/gm))
      expect(readme).toContain(`**\`ebb ${command}`);
  });

  it("states the cost rule with the CLI's own rates, for every model", () => {
    const table = tableAfter(readme, '## How long a simulation takes');
    const stated = new Map<string, number>();
    for (const row of table) {
      for (const [, model] of String(row[0]).matchAll(/`([a-z-]+)`/g))
        stated.set(model as string, Number(String(row.at(-1)).replace(/,/g, '')));
    }
    expect([...stated.keys()].sort()).toEqual(Object.keys(WORK).sort());
    for (const [model, unit] of Object.entries(WORK)) expect(stated.get(model), model).toBe(unit.perSecond);
  });
});
