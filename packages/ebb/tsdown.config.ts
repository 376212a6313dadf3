import { defineConfig } from 'tsdown';

// Dual ESM + CJS with declarations for each; one entry per package subpath.
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
  // One output file per source module: a bundler that reaches one module does not also keep the
  // top-level statements of the modules tsdown would have put in the same chunk (docs/size.md).
  unbundle: true,
});
