import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Every project fails a test that leaves a promise rejection unhandled, and a test file that
// leaves a timer or a socket behind.
const setup = fileURLToPath(new URL('./test/setup/unhandled.ts', import.meta.url));
const leaks = fileURLToPath(new URL('./test/setup/leaks.ts', import.meta.url));

// `npm test` runs every project: the library's unit tests (beside their files), the CLI's, and
// the integration tests under test/ (the CLI as a process, real sockets, the packed tarball).
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'ebb', root: 'packages/ebb', include: ['src/**/*.test.ts'], setupFiles: [setup, leaks] } },
      {
        test: { name: 'ebb-cli', root: 'packages/ebb-cli', include: ['src/**/*.test.ts'], setupFiles: [setup, leaks] },
      },
      {
        test: {
          name: 'integration',
          root: 'test',
          include: ['**/*.test.ts'],
          // test/compat/run.mjs is a script of its own; the packed-package tests under compat/packed run here.
          exclude: ['**/node_modules/**'],
          testTimeout: 60_000,
          setupFiles: [setup, leaks],
        },
      },
    ],
  },
});
