// One entry bundled as the size figures bundle it, with either bundler, gzip at level 9:
// esbuild --bundle --minify --format=esm (platform browser, esbuild's default), or Rollup with
// @rollup/plugin-terser's defaults. bench/figures/size.mjs (ebb and its peers) and
// bench/figures/floor.mjs (the floor prototype) both measure through here.

import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import terser from '@rollup/plugin-terser';
import { build } from 'esbuild';
import { rollup } from 'rollup';

const BENCH = fileURLToPath(new URL('..', import.meta.url));

/**
 * The entry `contents` (an ES module resolved from `resolveDir`), bundled by esbuild: its code,
 * sizes, and esbuild's result. `define`, `conditions` and `plugins` as esbuild takes them;
 * `extra`, more of esbuild's options (a metafile, a source map).
 */
export async function bundleSize(
  contents,
  { resolveDir = BENCH, define, conditions, plugins = [], minify = true, extra = {} } = {},
) {
  const result = await build({
    stdin: { contents, resolveDir, sourcefile: 'entry.mjs', loader: 'js' },
    bundle: true,
    minify,
    format: 'esm',
    write: false,
    logLevel: 'silent',
    plugins,
    ...(define ? { define } : {}),
    ...(conditions ? { conditions } : {}),
    ...extra,
  });
  const js = result.outputFiles.find((f) => !f.path.endsWith('.map'));
  return { code: js.text, minified: js.contents.length, gzip: gzipSync(js.contents, { level: 9 }).length, result };
}

/**
 * The module `entry` (an absolute id) with the source `contents`, bundled by Rollup with `plugins`
 * after the entry's own, then @rollup/plugin-terser's defaults (ES format): its sizes.
 */
export async function rollupSize(entry, contents, plugins = []) {
  const bundle = await rollup({
    input: entry,
    onwarn: () => {},
    plugins: [
      {
        name: 'size-entry',
        resolveId: (source) => (source === entry ? entry : null),
        load: (id) => (id === entry ? contents : null),
      },
      ...plugins,
    ],
  });
  try {
    const { output } = await bundle.generate({ format: 'es', plugins: [terser()] });
    const code = Buffer.from(output[0].code);
    return { minified: code.length, gzip: gzipSync(code, { level: 9 }).length };
  } finally {
    await bundle.close();
  }
}
