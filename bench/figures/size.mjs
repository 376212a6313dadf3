// Bundle size: esbuild --bundle --minify --format=esm (platform browser, esbuild's default) of
// (a) the typical import — the retry call plus one exponential policy with full jitter, written
// the way each library's documentation writes it — and (b) the whole root entry (everything the
// package exports). Minified bytes and gzip bytes (zlib level 9). Deterministic: one build each.
//
// `node figures/size.mjs [SUBJECT…]` prints
//   { esbuild, rows: [{ id, label, typical: { minified, gzip, inputs }, whole: { minified, gzip } }] }
// where `inputs` lists the typical bundle's largest inputs (esbuild's metafile, bytes in output).

import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, version } from 'esbuild';
import { SUBJECTS } from '../subjects.mjs';

const resolveDir = fileURLToPath(new URL('..', import.meta.url));
// The runner's snapshot of ebb's build, when there is one (see run.mjs); else the workspace's.
const ebb = process.env.EBB_BENCH_SNAPSHOT
  ? JSON.stringify(`${process.env.EBB_BENCH_SNAPSHOT}/dist/index.js`)
  : "'ebb'";
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

/** The two entry points per subject, as a user would write them. */
const ENTRIES = {
  ebb: {
    typical: `import { exponential, retry } from ${ebb};
const backoff = exponential({ initialDelayMs: 100, maxDelayMs: 20_000, jitter: 'full', maxAttempts: 5 });
export const call = (op) => retry(op, { backoff });`,
    whole: `export * from ${ebb};`,
  },
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

async function measure(contents) {
  const result = await build({
    stdin: { contents, resolveDir, sourcefile: 'entry.mjs', loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0].contents;
  const output = Object.values(result.metafile.outputs)[0];
  const inputs = Object.entries(output.inputs)
    .map(([path, { bytesInOutput }]) => ({
      path: path.replace(/^.*node_modules\//, '').replace(/^.*ebb-bench-[^/]+\//, 'ebb/'),
      bytes: bytesInOutput,
    }))
    .filter((x) => x.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes);
  return { minified: code.length, gzip: gzipSync(code, { level: 9 }).length, inputs };
}

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const rows = [];
for (const s of SUBJECTS) {
  if (wanted.length && !wanted.includes(s.id)) continue;
  const e = ENTRIES[s.id];
  if (!e) throw new Error(`no size entries for subject ${s.id}`);
  const typical = await measure(e.typical);
  const { minified, gzip } = await measure(e.whole);
  rows.push({ id: s.id, label: s.label, typical, whole: { minified, gzip } });
}
process.stdout.write(`${JSON.stringify({ esbuild: version, rows })}\n`);
