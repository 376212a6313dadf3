// The `browser` export condition, from the packed tarball: a bundler that targets browsers takes
// dist/browser/ (no process-wide timer queue), one that targets Node.js takes dist/ (the queue
// included), and every subpath of one program comes from the same tree — two copies of the
// executor would make `instanceof RetryError` fail across them.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packedProject } from './pack.js';

let dir: string;
let app: string;

beforeAll(async () => {
  ({ dir, app } = await packedProject(['ebb']));
}, 180_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The package files (under node_modules/ebb/) a bundle of `source` reads. */
async function inputsOf(source: string, platform: 'browser' | 'node', format: 'esm' | 'cjs' = 'esm') {
  const result = await build({
    stdin: { contents: source, resolveDir: app, loader: 'js' },
    bundle: true,
    write: false,
    metafile: true,
    platform,
    format,
    logLevel: 'silent',
  });
  return Object.keys(result.metafile.inputs)
    .filter((path) => path.includes('node_modules/ebb/'))
    .map((path) => path.slice(path.indexOf('node_modules/ebb/') + 'node_modules/ebb/'.length));
}

const PROGRAM = `
import { retry, RetryError } from 'ebb';
import { withRetry } from 'ebb/http';
export { retry, RetryError, withRetry };
`;

describe('the browser condition, from the packed tarball', () => {
  it('a browser bundle takes every subpath from dist/browser/, without the timer queue', async () => {
    const inputs = await inputsOf(PROGRAM, 'browser');
    expect(inputs).toEqual(expect.arrayContaining(['dist/browser/index.js', 'dist/browser/http.js']));
    expect(inputs.every((path) => path.startsWith('dist/browser/'))).toBe(true);
    expect(inputs.filter((path) => path.includes('timer-queue'))).toEqual([]);
  });

  it('a Node.js bundle takes dist/, the timer queue included', async () => {
    const inputs = await inputsOf(PROGRAM, 'node');
    expect(inputs).toEqual(expect.arrayContaining(['dist/index.js', 'dist/http.js', 'dist/core/timer-queue.js']));
    expect(inputs.some((path) => path.startsWith('dist/browser/'))).toBe(false);
  });

  it('require() under the browser condition falls back to the CommonJS build', async () => {
    const inputs = await inputsOf(`module.exports = require('ebb');`, 'browser', 'cjs');
    expect(inputs).toContain('dist/index.cjs');
    expect(inputs.some((path) => path.startsWith('dist/browser/'))).toBe(false);
  });
});
