import { defineConfig } from 'tsdown';

// The CLI is Node-only ESM; `ebb` and `commander` stay external (they are dependencies).
export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm'],
  dts: false,
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  clean: true,
  fixedExtension: false,
});
