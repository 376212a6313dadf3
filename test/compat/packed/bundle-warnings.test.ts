// A user's build of ebb is silent: esbuild bundles the packed tarball's entry points, for browsers
// and for Node.js, without a single warning. A bare `import './x.js'` in a module of a package
// marked `"sideEffects": false` is one such warning ("Ignoring this import because … was marked as
// having no side effects"). esbuild silences it for files under node_modules (evanw/esbuild#999),
// but not for a package it reaches through a symlink — a workspace, `npm link`, a monorepo — which
// it resolves to the real path: so the installed package is moved out of node_modules and linked
// back, as a workspace user has it.
import { renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packedProject } from './pack.js';

let dir: string;
let app: string;

beforeAll(async () => {
  ({ dir, app } = await packedProject(['ebb']));
  const linked = join(dir, 'linked-ebb');
  renameSync(join(app, 'node_modules', 'ebb'), linked);
  symlinkSync(linked, join(app, 'node_modules', 'ebb'), 'dir');
}, 180_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** esbuild's warnings for a minified ESM bundle of `source`, resolved from the packed project. */
async function warningsOf(
  source: string,
  platform: 'browser' | 'node',
  conditions?: readonly string[],
): Promise<string[]> {
  const result = await build({
    stdin: { contents: source, resolveDir: app, loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform,
    write: false,
    logLevel: 'silent',
    ...(conditions ? { conditions: [...conditions] } : {}),
  });
  return result.warnings.map((w) => `${w.location?.file ?? ''}: ${w.text}`);
}

const ENTRIES: Record<string, string> = {
  'the presets': "import { presets } from 'ebb'; export const p = presets.grpcConnect;",
  'the typical import': `import { exponential, retry } from 'ebb';
const backoff = exponential({ initialDelayMs: 100, maxDelayMs: 20_000, maxAttempts: 5 });
export const call = (op) => retry(op, { backoff });`,
  'the whole root entry': "export * from 'ebb';",
  'every subpath': ['http', 'rate', 'redis', 'resilience', 'sim', 'undici', 'clients', 'middleware']
    .map((s) => `export * from 'ebb/${s}';`)
    .join('\n'),
};

describe('bundling the packed package warns about nothing', () => {
  for (const [what, source] of Object.entries(ENTRIES)) {
    for (const platform of ['browser', 'node'] as const) {
      it(`${what}, for ${platform === 'node' ? 'Node.js' : 'browsers'}`, async () => {
        expect(await warningsOf(source, platform)).toEqual([]);
      });
    }
    // The production build (condition `production` under `browser`) is a second set of files.
    it(`${what}, for browsers, production build`, async () => {
      expect(await warningsOf(source, 'browser', ['production'])).toEqual([]);
    });
  }
});
