// The size guard of the typical import: the library packed as `npm publish` would pack it,
// installed from the tarball into a new project, and the typical import — `retry` plus one
// `exponential` policy (full jitter, its default) — bundled by the size figure itself
// (bench/figures/size.mjs: esbuild, minify, ESM, browser platform, gzip -9), resolving `ebb`
// through the installed package's `exports` as a user's bundler does.
//
// The target is not met yet, so the budget is today's size plus a small margin: a regression guard
// that fails as soon as the typical import grows. Lower BUDGET_GZIP_BYTES whenever the size falls.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../support/cli.js';
import { packedProject, run } from './pack.js';

/** The budget, in gzip bytes: measured 7,497 B on the policy layer and 7,788 B on the executor with its boundary checks, whichever was larger, plus 1.4 %. */
const BUDGET_GZIP_BYTES = 7_900;
/** The target for the typical import: below p-retry's 1,588 B and every other peer's. */
const TARGET_GZIP_BYTES = 1_600;

interface Measured {
  readonly minified: number;
  readonly gzip: number;
  readonly modules: readonly { readonly path: string; readonly bytes: number }[];
}

let dir: string;
let app: string;
let typical: Measured;

beforeAll(async () => {
  ({ dir, app } = await packedProject(['ebb']));
  const r = await run(
    process.execPath,
    [join(ROOT, 'bench/figures/size.mjs'), 'ebb', `--ebb-from=${app}`],
    join(ROOT, 'bench'),
  );
  expect(r.code, r.stderr).toBe(0);
  const doc = JSON.parse(r.stdout) as { rows: { id: string; typical: Measured }[] };
  typical = doc.rows.find((row) => row.id === 'ebb')?.typical as Measured;
}, 180_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the typical import, bundled from the packed tarball', () => {
  it('is the packed ebb, not the workspace’s', () => {
    const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8'));
    expect(lock.packages['node_modules/ebb'].resolved).toMatch(/^file:/);
    // The bundle holds the executor and the policy; every output byte is attributed to a module.
    const paths = typical.modules.map((m) => m.path);
    expect(paths).toEqual(expect.arrayContaining(['retry/retry.ts', 'backoff/exponential.ts', 'backoff/jitter.ts']));
    expect(typical.modules.reduce((n, m) => n + m.bytes, 0)).toBe(typical.minified);
  });

  it(`stays within its budget of ${BUDGET_GZIP_BYTES} B gzip`, () => {
    // Reported on every run, so the budget can follow the size down.
    console.log(
      `typical import: ${typical.minified} B minified, ${typical.gzip} B gzip (budget ${BUDGET_GZIP_BYTES} B, target ${TARGET_GZIP_BYTES} B)`,
    );
    if (typical.gzip > BUDGET_GZIP_BYTES) {
      const largest = typical.modules
        .slice(0, 5)
        .map((m) => `${m.path} ${m.bytes} B`)
        .join(', ');
      expect.fail(
        `the typical import (retry + exponential with full jitter) is ${typical.gzip} B gzip, over its budget of ${BUDGET_GZIP_BYTES} B ` +
          `by ${typical.gzip - BUDGET_GZIP_BYTES} B. The target is ${TARGET_GZIP_BYTES} B gzip: find what grew ` +
          `(\`npm run bench -- size\` lists the bytes by module; largest now: ${largest}) rather than raise the budget.`,
      );
    }
    expect(typical.gzip).toBeLessThanOrEqual(BUDGET_GZIP_BYTES);
  });
});
