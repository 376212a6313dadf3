import { defineConfig } from 'tsdown';

// The CLI is Node-only ESM; `ebb` and `commander` stay external (they are dependencies).
export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm'],
  dts: false,
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  // Not a warning about the build: rolldown's note that a plugin took long (the machine's load).
  checks: { pluginTimings: false },
  clean: true,
  fixedExtension: false,
});
