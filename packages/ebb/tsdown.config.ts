import { dirname, join } from 'node:path';
import { defineConfig, type UserConfig } from 'tsdown';

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

/** A browser build into `outDir`, with `DEV` (core/dev.ts) set to `dev`. */
function browserBuild(outDir: string, dev: boolean): UserConfig {
  return {
    entry,
    format: ['esm'],
    outDir,
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
      {
        // rolldown inlines an imported constant and drops the branches it decides, so the output
        // holds one message of each pair: the long one with DEV true, the short one without.
        name: 'ebb-dev-flag',
        load(id: string) {
          return /[\\/]core[\\/]dev\.ts$/.test(id) ? `export const DEV = ${dev};` : null;
        },
      },
    ],
  };
}

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
    // The browser builds below write into dist/browser and dist/browser-prod: keep them.
    clean: ['dist/*', '!dist/browser', '!dist/browser-prod'],
    treeshake: true,
    // One output file per source module: a bundler that reaches one module does not also keep the
    // top-level statements of the modules tsdown would have put in the same chunk (docs/dev/size.md).
    unbundle: true,
  },
  // The same modules for browsers (package.json `exports`, condition `browser`, ESM only; the
  // declarations are the build's above): host-queues.ts becomes host-queues.browser.ts, so that a
  // browser bundle carries no process-wide timer queue (docs/dev/size.md, "The executor").
  browserBuild('dist/browser', true),
  // The browser build for production (condition `production` under `browser`): the same, with
  // core/dev.ts's `DEV` false, so that every message is the short one and the long texts are
  // folded out of the output (core/dev.ts; docs/retry.md, "What it weighs").
  browserBuild('dist/browser-prod', false),
]);
