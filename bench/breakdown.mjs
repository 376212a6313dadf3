// Where the bytes of one entry go: its bundle's gzip size (esbuild, as bench/figures/size.mjs
// bundles it) and each module's minified bytes in it, from esbuild's metafile, largest first.
//
// `node breakdown.mjs [ENTRY] [prod]`: ENTRY is an ES module's source importing 'ebb' (empty or
// left out: the typical import, `retry(op, { backoff: exponential({ … }) })`); `prod` bundles
// with the `production` condition (the build without the long messages).
import { bundleSize } from './lib/bundle-size.mjs';

const entry =
  process.argv[2] ||
  `import { retry, exponential } from 'ebb'; export const r = (f) => retry(f, { backoff: exponential({ initialDelayMs: 100, maxDelayMs: 20000, maxAttempts: 5 }) });`;
const conditions = process.argv[3] === 'prod' ? ['production'] : undefined;
const { gzip, minified, result } = await bundleSize(entry, { conditions, extra: { metafile: true } });
console.log('total gzip', gzip, 'min', minified);
const out = Object.values(result.metafile.outputs)[0];
const rows = Object.entries(out.inputs)
  .map(([k, v]) => [v.bytesInOutput, k.replace(/.*dist\//, '')])
  .sort((a, b) => b[0] - a[0]);
for (const [b, k] of rows) if (b) console.log(String(b).padStart(6), k);
