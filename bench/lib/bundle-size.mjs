// One entry bundled as bench/figures/size.mjs bundles it: esbuild --bundle --minify
// --format=esm (platform browser, esbuild's default), gzip at level 9. `define` and
// `conditions` as esbuild takes them; `plugins` to replace a module.

import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const BENCH = fileURLToPath(new URL('..', import.meta.url));

/** The entry `contents` (an ES module resolved from `resolveDir`), bundled: its code and sizes. */
export async function bundleSize(
  contents,
  { resolveDir = BENCH, define, conditions, plugins = [], minify = true } = {},
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
  });
  const code = result.outputFiles[0].text;
  const bytes = Buffer.from(code);
  return { code, minified: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
}
