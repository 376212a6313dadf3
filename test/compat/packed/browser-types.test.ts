import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../support/cli.js';
import { packedProject, run } from './pack.js';

let dir: string;
let app: string;

const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** A program a browser project might write against every entry of the packed library. */
const PROGRAM = `import { describePolicy, presets, retry, seeded, timeout } from 'ebb';
import { type ShedResponse, shedFetch, standard, withRetry } from 'ebb/http';
import { adaptiveRate, tokenBudget } from 'ebb/rate';
import { simulateContention } from 'ebb/sim';

export async function load(url: string): Promise<unknown> {
  const fetchRetrying = withRetry(fetch, { isFailure: standard, use: [timeout(5_000)] });
  const res = await fetchRetrying(url);
  return res.json();
}

export const value: Promise<number> = retry(async ({ attempt }) => attempt, { random: seeded(1) });
export const rows = describePolicy(presets.default, 4).rows.length;
export const handler = shedFetch(async (_request: Request) => new Response('ok'), { maxConcurrent: 4 });
export const rate = adaptiveRate();
export const budget = tokenBudget();
export type Contention = typeof simulateContention;
export type Minimal = ShedResponse;
`;

/** Writes a tsconfig for a browser-only project: DOM types, no @types at all, every .d.ts checked. */
function tsconfig(name: string, compilerOptions: Record<string, unknown>): string {
  const file = join(app, name);
  const base = { lib: ['dom', 'es2022'], types: [], skipLibCheck: false, strict: true, noEmit: true, target: 'es2022' };
  writeFileSync(
    file,
    JSON.stringify({ compilerOptions: { ...base, ...compilerOptions }, files: ['main.ts'] }, null, 2),
  );
  return file;
}

beforeAll(async () => {
  // Outside the repository: no @types/node up the tree for a stray `node:*` import to find.
  ({ dir, app } = await packedProject(['ebb'], 'browser-app'));
  writeFileSync(join(app, 'main.ts'), PROGRAM);
  mkdirSync(join(app, 'out'), { recursive: true });
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a browser-only TypeScript project compiles against the packed ebb (skipLibCheck: false, types: [])', () => {
  it.each([
    ['bundler', { module: 'esnext', moduleResolution: 'bundler' }],
    ['node16 (ESM)', { module: 'node16', moduleResolution: 'node16' }],
    [
      'node10 (subpaths through stub folders)',
      { module: 'commonjs', moduleResolution: 'node10', ignoreDeprecations: '6.0' },
    ],
  ])('moduleResolution %s', async (name, options) => {
    const config = tsconfig(`tsconfig.${name.split(' ')[0]}.json`, options);
    if (name.startsWith('node16'))
      writeFileSync(join(app, 'package.json'), '{ "name": "app", "private": true, "type": "module" }\n');
    else writeFileSync(join(app, 'package.json'), '{ "name": "app", "private": true }\n');
    const r = await run(process.execPath, [TSC, '-p', config], app);
    expect(r.stdout + r.stderr, name).toBe('');
    expect(r.code).toBe(0);
  });

  it('the same project fails when it uses what a browser does not have (the check is live)', async () => {
    writeFileSync(join(app, 'bad.ts'), "import { createServer } from 'node:http';\nexport const s = createServer;\n");
    const config = join(app, 'tsconfig.bad.json');
    writeFileSync(
      config,
      JSON.stringify({
        compilerOptions: {
          lib: ['dom', 'es2022'],
          types: [],
          skipLibCheck: false,
          noEmit: true,
          module: 'esnext',
          moduleResolution: 'bundler',
        },
        files: ['main.ts', 'bad.ts'],
      }),
    );
    const r = await run(process.execPath, [TSC, '-p', config], app);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toMatch(/bad\.ts.*'node:http'/);
  });
});
