import { defineConfig } from 'tsdown';

// Dual ESM + CJS with declarations for each; one entry per package subpath.
//
// `unbundle`: one output file per source module (dist/index.js, dist/http.js, … re-export from
// dist/backoff/*.js, dist/core/*.js, …) instead of shared chunks. With `"sideEffects": false` in
// package.json a bundler then drops every module a program does not reach, whole; in a shared
// chunk it must keep each top-level statement it cannot prove pure (a module-level
// `Object.freeze({...})` table of backoff/aws.ts rode along in every `retry` bundle). Measured with
// `npm run bench -- size` (esbuild, minify, gzip -9): the typical import 8,127 -> 8,067 B gzip,
// `withRetry(fetch)` 11,657 -> 11,538 B; see docs/size.md.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    http: 'src/http/index.ts',
    rate: 'src/rate/index.ts',
    redis: 'src/redis/index.ts',
    resilience: 'src/resilience/index.ts',
    sim: 'src/sim/index.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  platform: 'neutral',
  target: 'es2022',
  sourcemap: true,
  clean: true,
  treeshake: true,
  unbundle: true,
});
