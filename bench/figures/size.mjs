// Bundle size: esbuild --bundle --minify --format=esm (platform browser, esbuild's default) of
// (a) the typical import — the retry call plus one exponential policy with full jitter, written
// the way each library's documentation writes it — and (b) the whole root entry (everything the
// package exports). Minified bytes and gzip bytes (zlib level 9). Deterministic: one build each.
//
// For ebb also (c) `withRetry` from `ebb/http` with its defaults (`withRetry(fetch)`); (d) the
// policy alone: `exponential(...)` and one wait drawn from it (`start().next()`), no executor —
// the policy's share of the typical import (curve, full jitter, validation, printing); (e) the
// executor alone: `retry` with a hand-written policy object, the default policy's module
// (backoff/default.js, which the executor imports for calls without a policy) replaced by a
// hand-written one, so the bundle holds the executor, its validation and its messages and no
// curve — reported per module as minified bytes and as marginal gzip bytes (the bundle's gzip
// minus the gzip of the same bundle without that module's spans); (f) each pipeline mechanism's
// marginal bytes: the gzip of `pipeline([retrying(), m])` minus that of `pipeline([retrying()])`.
//
// `node figures/size.mjs [SUBJECT…] [--ebb-from=DIR]` prints
//   { esbuild, rows: [{ id, label, typical: { minified, gzip, inputs, modules? }, whole: { minified, gzip },
//     http?: { minified, gzip, inputs, modules }, policy?: { minified, gzip, inputs, modules },
//     executor?: { minified, gzip, inputs, modules, marginal }, mechanisms?: { [name]: gzip } }] }
// where `inputs` lists the typical bundle's inputs (esbuild's metafile, bytes in output: for ebb
// these are dist/'s files, one per source module) and, for ebb, `modules` splits the same bundle by ebb source module:
// esbuild reads the files' source maps (dist/**/*.js.map) and its output map attributes each span of
// the minified output to a source file (span = from one mapping to the next on the line).
//
// `--ebb-from=DIR`: ebb's entries import `ebb` and `ebb/http` from DIR (a project where the packed
// tarball is installed), resolved through the package's `exports` as a user's bundler resolves
// them; test/compat/packed/size.test.ts checks the typical import against its budget this way.
//
// ebb ships two browser builds (packages/ebb/package.json `exports`): the default one, with full
// messages, and the production one (condition `production` under `browser`), with short ones. The
// rows above are esbuild's default pick, the default build. `builds` adds, for ebb, the same
// entries for each build (`development`: the default; `production`: the condition set) with each
// of two bundlers — esbuild as above, and Rollup 4 with @rollup/plugin-node-resolve (browser,
// `exportConditions`) and @rollup/plugin-terser — each with the mechanisms' marginal bytes:
//   builds: [{ bundler, build, typical, policy, executor, http, whole, mechanisms }]
// (`--builds=esbuild` measures only esbuild's; `--no-builds` none.)

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import { version } from 'esbuild';
import { VERSION as rollupVersion } from 'rollup';
import { bundleSize, rollupSize } from '../lib/bundle-size.mjs';
import { SUBJECTS } from '../subjects.mjs';

const resolveDir = fileURLToPath(new URL('..', import.meta.url));
/** The peers installed apart, in bench/node22 (they need Node.js >= 22 to run, not to be bundled). */
const NODE22 = ['p-retry-9', 'cockatiel-4'];
const node22Dir = fileURLToPath(new URL('../node22', import.meta.url));
const ebbFrom = process.argv.find((a) => a.startsWith('--ebb-from='))?.slice('--ebb-from='.length);
// The runner's snapshot of ebb's build, when there is one (see run.mjs); else the workspace's.
// A snapshot is imported by path, so the path must be the file a browser bundler resolves through
// the package's `exports` (condition `browser`: dist/browser/), as it does for 'ebb' itself.
// For the production build, dist/browser-prod/ (condition `production` under `browser`).
const snapshotEntry = (name, production) => {
  const dir = process.env.EBB_BENCH_SNAPSHOT;
  const browser = `${dir}/dist/${production ? 'browser-prod' : 'browser'}/${name}`;
  return JSON.stringify(existsSync(browser) ? browser : `${dir}/dist/${name}`);
};
const snapshot = process.env.EBB_BENCH_SNAPSHOT && !ebbFrom;
/** How an entry names ebb's subpath `sub` ('' for the root) for a build. */
const spec = (sub, production = false) =>
  snapshot ? snapshotEntry(`${sub || 'index'}.js`, production) : `'ebb${sub ? `/${sub}` : ''}'`;
const reference = fileURLToPath(new URL('../lib/reference.mjs', import.meta.url));

const cockatiel = (name) => ({
  typical: `import { ExponentialBackoff, fullJitterGenerator, handleAll, retry } from '${name}';
const policy = retry(handleAll, { maxAttempts: 4, backoff: new ExponentialBackoff({ generator: fullJitterGenerator }) });
export const call = (op) => policy.execute(op);`,
  whole: `export * from '${name}';`,
});
const pRetry = (name) => ({
  // p-retry's only jitter is `randomize` (× U[1, 2]); it has no full jitter.
  typical: `import pRetry from '${name}';
export const call = (op) => pRetry(op, { retries: 4, randomize: true });`,
  whole: `export { default } from '${name}';
export * from '${name}';`,
});

/** ebb's entries for one build: `production` names the production build's files in a snapshot. */
const ebbEntries = (production) => {
  const ebb = spec('', production);
  const ebbHttp = spec('http', production);
  return {
    // Full jitter is every curve's default: the 1.0 spelling names no jitter.
    typical: `import { exponential, retry } from ${ebb};
const backoff = exponential({ initialDelayMs: 100, maxDelayMs: 20_000, maxAttempts: 5 });
export const call = (op) => retry(op, { backoff });`,
    whole: `export * from ${ebb};`,
    http: `import { withRetry } from ${ebbHttp};
export const get = withRetry(fetch);`,
    policy: `import { exponential } from ${ebb};
export const wait = exponential({ initialDelayMs: 100, maxDelayMs: 20_000, maxAttempts: 5 }).start().next();`,
    executor: `import { retry } from ${ebb};
const backoff = { maxElapsedMs: Infinity, start: () => ({ next: () => 100 }) };
export const call = (op) => retry(op, { backoff });`,
  };
};

/** The two entry points per subject, as a user would write them. */
const ENTRIES = {
  ebb: ebbEntries(false),
  reference: {
    typical: `export { reference as call } from ${JSON.stringify(reference)};`,
    whole: `export * from ${JSON.stringify(reference)};`,
  },
  'p-retry-7': pRetry('p-retry-7'),
  'p-retry-9': pRetry('p-retry-9'),
  'exponential-backoff': {
    typical: `import { backOff } from 'exponential-backoff';
export const call = (op) => backOff(op, { jitter: 'full', numOfAttempts: 5 });`,
    whole: `export * from 'exponential-backoff';`,
  },
  'async-retry': {
    // async-retry randomizes by default (× U[1, 2]); it has no full jitter.
    typical: `import retry from 'async-retry';
export const call = (op) => retry(op, { retries: 4 });`,
    whole: `export { default } from 'async-retry';`,
  },
  'cockatiel-3': cockatiel('cockatiel-3'),
  'cockatiel-4': cockatiel('cockatiel-4'),
  // StandardRetryStrategy is full jitter on an exponential; a user also needs the loop that
  // drives it (in the SDK, the retry middleware), so the loop is part of the typical entry.
  aws: {
    typical: `import { StandardRetryStrategy } from '@smithy/util-retry';
const strategy = new StandardRetryStrategy(5);
export async function call(op) {
  let token = await strategy.acquireInitialRetryToken('');
  for (;;) {
    try {
      const value = await op();
      strategy.recordSuccess(token);
      return value;
    } catch (error) {
      try {
        token = await strategy.refreshRetryTokenForRetry(token, { error, errorType: 'TRANSIENT' });
      } catch {
        throw error;
      }
      const delay = token.getRetryDelay();
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}`,
    whole: `export * from '@smithy/util-retry';`,
  },
};

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** Decodes one source-map `mappings` line into segments (arrays of absolute-within-line/relative fields). */
function* segments(mappings) {
  // Source Map v3 (https://sourcemaps.info/spec.html): lines split by `;`, segments by `,`, each a
  // list of base64 VLQs; the source index is relative to the previous segment's across lines.
  let source = 0;
  for (const [line, text] of mappings.split(';').entries()) {
    let column = 0;
    for (const segment of text.split(',')) {
      if (!segment) continue;
      const fields = [];
      let value = 0;
      let shift = 0;
      for (const ch of segment) {
        const digit = BASE64.indexOf(ch);
        value += (digit & 31) << shift;
        if (digit & 32) shift += 5;
        else {
          fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      column += fields[0];
      if (fields.length > 1) source += fields[1];
      yield { line, column, source: fields.length > 1 ? source : -1 };
    }
  }
}

/** Output characters per source file, from the bundle's source map (spans between mappings). */
function bySource(code, map) {
  const lines = code.split('\n');
  const bytes = new Map();
  const all = [...segments(map.mappings)];
  for (let i = 0; i < all.length; i++) {
    const s = all[i];
    const next = all[i + 1];
    // The span runs to the next mapping, or to the end of the line with its line break.
    const end = next && next.line === s.line ? next.column : lines[s.line].length + (s.line < lines.length - 1 ? 1 : 0);
    const name =
      s.source < 0 ? '(unmapped)' : map.sources[s.source].replace(/^.*?\/src\//, '').replace(/^<stdin>$/, 'entry');
    bytes.set(name, (bytes.get(name) ?? 0) + end - s.column);
  }
  return [...bytes]
    .map(([path, n]) => ({ path, bytes: n }))
    .filter((x) => x.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes);
}

/** The default policy's module as a stub: a policy that stops after attempt 1. */
const stubDefaultPolicy = {
  name: 'stub-default-policy',
  setup(b) {
    b.onResolve({ filter: /backoff\/default\.js$/ }, () => ({ path: 'default-policy', namespace: 'stub' }));
    b.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({
      contents: 'export const defaultBackoff = { maxElapsedMs: Infinity, start: () => ({ next: () => -1 }) };',
      loader: 'js',
    }));
  },
};

/** Marginal gzip bytes per source module: the bundle's gzip minus that of the bundle without the module's spans. */
function marginalGzip(code, map) {
  const lines = code.split('\n');
  const owner = lines.map((l) => new Array(l.length + 1).fill(-1));
  const all = [...segments(map.mappings)];
  for (let i = 0; i < all.length; i++) {
    const s = all[i];
    const next = all[i + 1];
    const end = next && next.line === s.line ? next.column : lines[s.line].length + 1;
    for (let c = s.column; c < end; c++) owner[s.line][c] = s.source;
  }
  const total = gzipSync(code, { level: 9 }).length;
  return map.sources
    .map((source, i) => {
      let rest = '';
      for (let l = 0; l < lines.length; l++) {
        for (let c = 0; c <= lines[l].length; c++)
          if (owner[l][c] !== i) rest += c < lines[l].length ? lines[l][c] : '\n';
      }
      return {
        path: source.replace(/^.*?\/src\//, '').replace(/^<stdin>$/, 'entry'),
        gzip: total - gzipSync(rest, { level: 9 }).length,
      };
    })
    .filter((x) => x.gzip > 0)
    .sort((a, b) => b.gzip - a.gzip);
}

async function measure(contents, { modules = false, from = resolveDir, plugins = [], conditions } = {}) {
  const { code, minified, gzip, result } = await bundleSize(contents, {
    resolveDir: from,
    conditions,
    plugins,
    extra: {
      metafile: true,
      // The map only attributes bytes; it leaves the code unchanged (no sourceMappingURL comment).
      ...(modules ? { sourcemap: 'external', outfile: 'entry.js' } : {}),
    },
  });
  const output = Object.entries(result.metafile.outputs).find(([path]) => !path.endsWith('.map'))[1];
  const inputs = Object.entries(output.inputs)
    .map(([path, { bytesInOutput }]) => ({
      path: path.replace(/^.*node_modules\//, '').replace(/^.*ebb-bench-[^/]+\//, 'ebb/'),
      bytes: bytesInOutput,
    }))
    .filter((x) => x.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes);
  const measured = { minified, gzip, inputs };
  if (modules) {
    const map = JSON.parse(result.outputFiles.find((f) => f.path.endsWith('.map')).text);
    measured.modules = bySource(code, map);
    measured.marginal = marginalGzip(code, map);
  }
  return measured;
}

/**
 * The same entry with Rollup: @rollup/plugin-node-resolve with `browser: true` (the `browser`
 * condition and field) and `exportConditions` (`['production']` or `['development']`), then
 * @rollup/plugin-terser's defaults — the setup Rollup's documentation gives for a browser bundle.
 * The entry is a module of its own at `from`, so that `ebb` resolves from there.
 */
async function measureRollup(contents, { from = resolveDir, conditions = [] } = {}) {
  return rollupSize(join(from, '__size-entry__.mjs'), contents, [
    nodeResolve({ browser: true, exportConditions: conditions }),
  ]);
}

/**
 * Each mechanism's marginal gzip bytes: the pipeline's own (`pipeline([])` alone), `retrying()`'s
 * over it, and every other mechanism's over `pipeline([retrying()])`.
 */
async function mechanisms(size, production) {
  const root = spec('', production);
  const with_ = ({ root: r = '', resilience, rate }, m) =>
    [
      `import { pipeline${r} } from ${root};`,
      resilience ? `import { ${resilience} } from ${spec('resilience', production)};` : '',
      rate ? `import { ${rate} } from ${spec('rate', production)};` : '',
      `export const p = pipeline([${m}]);`,
    ].join('\n');
  const bare = await size(with_({}, ''));
  const base = await size(with_({ root: ', retrying' }, 'retrying()'));
  const out = { 'pipeline([])': bare, 'retrying()': base - bare };
  for (const [name, imports, m] of [
    ['timeout(ms)', { root: ', retrying, timeout' }, 'retrying(), timeout(1000)'],
    ['fallback(value)', { root: ', retrying, fallback' }, 'retrying(), fallback(0)'],
    ['circuitBreaker()', { root: ', retrying', resilience: 'circuitBreaker' }, 'retrying(), circuitBreaker()'],
    ['concurrencyLimit()', { root: ', retrying', resilience: 'concurrencyLimit' }, 'retrying(), concurrencyLimit()'],
    ['ratioBudget()', { root: ', retrying', rate: 'ratioBudget' }, 'retrying({ budget: ratioBudget() })'],
    ['tokenBudget()', { root: ', retrying', rate: 'tokenBudget' }, 'retrying({ budget: tokenBudget() })'],
  ]) {
    out[name] = (await size(with_(imports, m))) - base;
  }
  return out;
}

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const buildsOf = process.argv.includes('--no-builds')
  ? []
  : process.argv.includes('--builds=esbuild')
    ? ['esbuild']
    : ['esbuild', 'rollup'];
const rows = [];
const builds = [];
for (const s of SUBJECTS) {
  if (wanted.length && !wanted.includes(s.id)) continue;
  const e = ENTRIES[s.id];
  if (!e) throw new Error(`no size entries for subject ${s.id}`);
  const from = s.id === 'ebb' && ebbFrom ? ebbFrom : NODE22.includes(s.id) ? node22Dir : resolveDir;
  const typical = await measure(e.typical, { modules: s.id === 'ebb', from });
  const { minified, gzip } = await measure(e.whole, { from });
  const row = { id: s.id, label: s.label, typical, whole: { minified, gzip } };
  if (s.id === 'ebb') {
    row.http = await measure(e.http, { modules: true, from });
    row.policy = await measure(e.policy, { modules: true, from });
    row.executor = await measure(e.executor, { modules: true, from, plugins: [stubDefaultPolicy] });
    row.mechanisms = await mechanisms(async (c) => (await measure(c, { from })).gzip, false);
    for (const bundler of buildsOf) {
      for (const production of [false, true]) {
        const entries = ebbEntries(production);
        const conditions = production ? ['production'] : undefined;
        const size = (c, extra = {}) =>
          bundler === 'esbuild'
            ? measure(c, { from, conditions, modules: true, ...extra })
            : // @rollup/plugin-node-resolve adds `production` itself unless NODE_ENV says otherwise
              // or a condition names the build: the development build is asked for by name.
              measureRollup(c, { from, conditions: production ? ['production'] : ['development'] });
        const b = { bundler, build: production ? 'production' : 'development' };
        for (const k of ['typical', 'policy', 'executor', 'http', 'whole']) {
          b[k] =
            k === 'executor' && bundler === 'esbuild'
              ? await size(entries[k], { plugins: [stubDefaultPolicy] })
              : k === 'executor'
                ? undefined
                : await size(entries[k]);
        }
        b.mechanisms = await mechanisms(async (c) => (await size(c, { modules: false })).gzip, production);
        builds.push(b);
      }
    }
  }
  rows.push(row);
}
process.stdout.write(`${JSON.stringify({ esbuild: version, rollup: rollupVersion, rows, builds })}\n`);
