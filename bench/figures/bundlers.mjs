// Which of ebb's two browser builds each bundler picks: the default one (full messages,
// dist/browser/) or the production one (short messages, dist/browser-prod/, condition
// `production` under `browser` in packages/ebb/package.json `exports`). Each bundler bundles the
// typical import for the browser, as its documentation sets it up, with its defaults and with the
// setting that selects the other build; the output tells which build it took: the default build's
// checkKeys() carries the words "Known options", the production build's does not. The typical
// import's gzip size is given beside it.
//
// `node figures/bundlers.mjs [--ebb-from=DIR]` prints
//   { rows: [{ bundler, version, setting, build: 'development' | 'production', gzip }] }
// Bundlers: esbuild, Rollup with @rollup/plugin-node-resolve and @rollup/plugin-terser, Vite
// (`vite build`, library mode) and webpack 5 (target web).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import terser from '@rollup/plugin-terser';
import { build as esbuild, version as esbuildVersion } from 'esbuild';
import { rollup, VERSION as rollupVersion } from 'rollup';

const bench = fileURLToPath(new URL('..', import.meta.url));
const from = process.argv.find((a) => a.startsWith('--ebb-from='))?.slice('--ebb-from='.length) ?? bench;
const require = createRequire(join(bench, 'package.json'));
const ENTRY = `import { exponential, retry } from 'ebb';
const backoff = exponential({ initialDelayMs: 100, maxDelayMs: 20_000, maxAttempts: 5 });
export const call = (op) => retry(op, { backoff });
`;
const buildOf = (code) => (code.includes('Known options') ? 'development' : 'production');
const gzip = (code) => gzipSync(code, { level: 9 }).length;

// A scratch folder under `from`, so that `ebb` resolves as it does for a program there.
const dir = mkdtempSync(join(from, '.bundlers-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const entry = join(dir, 'entry.mjs');
writeFileSync(entry, ENTRY);

/** Runs `f` with NODE_ENV set to `value` (or unset), as a build script would have it. */
async function withNodeEnv(value, f) {
  const before = process.env.NODE_ENV;
  if (value === undefined) delete process.env.NODE_ENV;
  else process.env.NODE_ENV = value;
  try {
    return await f();
  } finally {
    if (before === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = before;
  }
}

const rows = [];
const row = (bundler, version, setting, code) =>
  rows.push({ bundler, version, setting, build: buildOf(code), gzip: gzip(code) });

for (const [setting, conditions] of [
  ['`--platform=browser` (default)', undefined],
  ['`--conditions=production`', ['production']],
]) {
  const r = await esbuild({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
    ...(conditions ? { conditions } : {}),
  });
  row('esbuild', esbuildVersion, setting, r.outputFiles[0].text);
}

/** The installed version of package `name`: its package.json, found upwards from its main file. */
function versionOf(name) {
  for (let d = dirname(require.resolve(name)); d !== dirname(d); d = dirname(d)) {
    try {
      const pkg = JSON.parse(readFileSync(join(d, 'package.json'), 'utf8'));
      if (pkg.name === name) return pkg.version;
    } catch {}
  }
  return 'unknown';
}
const resolvePkg = { version: versionOf('@rollup/plugin-node-resolve') };
for (const [setting, nodeEnv, exportConditions] of [
  ['`nodeResolve({ browser: true })`, NODE_ENV unset (default)', undefined, undefined],
  ['the same, NODE_ENV=production', 'production', undefined],
  ['the same, NODE_ENV=development', 'development', undefined],
  ["`exportConditions: ['development']`", undefined, ['development']],
]) {
  const code = await withNodeEnv(nodeEnv, async () => {
    const b = await rollup({
      input: entry,
      onwarn: () => {},
      plugins: [nodeResolve({ browser: true, ...(exportConditions ? { exportConditions } : {}) })],
    });
    try {
      return (await b.generate({ format: 'es', plugins: [terser()] })).output[0].code;
    } finally {
      await b.close();
    }
  });
  row(`Rollup + node-resolve ${resolvePkg.version}`, rollupVersion, setting, code);
}

const vite = await import(require.resolve('vite'));
for (const [setting, mode, nodeEnv] of [
  ['`vite build` (mode production, the default)', undefined, undefined],
  ['`vite build --mode development`', 'development', undefined],
  ['`NODE_ENV=development vite build`', undefined, 'development'],
]) {
  const out = join(dir, `vite-${mode ?? 'default'}-${nodeEnv ?? ''}`);
  await withNodeEnv(nodeEnv, () =>
    vite.build({
      root: dir,
      configFile: false,
      logLevel: 'silent',
      ...(mode ? { mode } : {}),
      build: { outDir: out, emptyOutDir: true, lib: { entry, formats: ['es'], fileName: 'out' } },
    }),
  );
  const file = readdirSync(out).find((f) => f.endsWith('.js'));
  row('Vite', vite.version, setting, readFileSync(join(out, file), 'utf8'));
}

const webpack = require('webpack');
const webpackVersion = versionOf('webpack');
for (const mode of ['production', 'development']) {
  const out = join(dir, `webpack-${mode}`);
  mkdirSync(out, { recursive: true });
  await withNodeEnv(undefined, async () => {
    const stats = await new Promise((resolve, reject) =>
      webpack(
        {
          mode,
          target: 'web',
          entry,
          devtool: false,
          output: { path: out, filename: 'out.js', library: { type: 'module' } },
          experiments: { outputModule: true },
        },
        (error, s) => (error ? reject(error) : resolve(s)),
      ),
    );
    if (stats.hasErrors()) throw new Error(stats.toString('errors-only'));
  });
  const setting = mode === 'production' ? '`mode: production`' : '`mode: development`';
  row('webpack', webpackVersion, setting, readFileSync(join(out, 'out.js'), 'utf8'));
}

process.stdout.write(`${JSON.stringify({ rows })}\n`);
