import { dirname, join } from 'node:path';
import { defineConfig } from 'tsdown';

// One entry per package subpath.
const entry = {
  index: 'src/index.ts',
  http: 'src/http/index.ts',
  otel: 'src/otel/index.ts',
  rate: 'src/rate/index.ts',
  redis: 'src/redis/index.ts',
  resilience: 'src/resilience/index.ts',
  sim: 'src/sim/index.ts',
  clients: 'src/clients/index.ts',
  middleware: 'src/middleware/index.ts',
  undici: 'src/clients/undici.ts',
};

export default defineConfig([
  // Dual ESM + CJS with declarations for each.
  {
    entry,
    format: ['esm', 'cjs'],
    dts: true,
    platform: 'neutral',
    target: 'es2022',
    sourcemap: true,
    // Not a warning about the build: rolldown's note that a plugin took long, which on a busy
    // machine the declarations plugin always does.
    checks: { pluginTimings: false },
    // The browser build below writes into dist/browser: keep it.
    clean: ['dist/*', '!dist/browser'],
    treeshake: true,
    // One output file per source module: a bundler that reaches one module does not also keep the
    // top-level statements of the modules tsdown would have put in the same chunk (docs/dev/size.md).
    unbundle: true,
  },
  // The same modules for browsers (package.json `exports`, condition `browser`, ESM only; the
  // declarations are the build's above): host-queues.ts becomes host-queues.browser.ts, so that a
  // browser bundle carries no process-wide timer queue (docs/dev/size.md, "The executor").
  {
    entry,
    format: ['esm'],
    outDir: 'dist/browser',
    dts: false,
    platform: 'browser',
    target: 'es2022',
    sourcemap: true,
    // Not a warning about the build: rolldown's note that a plugin took long, which on a busy
    // machine the declarations plugin always does.
    checks: { pluginTimings: false },
    clean: false,
    treeshake: true,
    unbundle: true,
    plugins: [
      {
        name: 'ebb-browser-host-queues',
        resolveId(source: string, importer: string | undefined) {
          if (source.endsWith('/host-queues.js') && importer !== undefined) {
            return join(dirname(importer), source.replace(/host-queues\.js$/, 'host-queues.browser.ts'));
          }
          return null;
        },
      },
    ],
  },
]);
