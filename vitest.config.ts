import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { SkipSummary } from './test/support/skip-summary.js';
import { SKIPS_FILE_ENV } from './test/support/skips.mjs';
import { StallGuard } from './test/support/stall-guard.js';

// Every project fails a test that leaves a promise rejection unhandled, and a test file that
// leaves a timer or a socket behind.
const setup = fileURLToPath(new URL('./test/setup/unhandled.ts', import.meta.url));
const leaks = fileURLToPath(new URL('./test/setup/leaks.ts', import.meta.url));
// The unit projects' properties end within a minute, failing or not (test/setup/properties.ts).
const properties = fileURLToPath(new URL('./test/setup/properties.ts', import.meta.url));

// Suites that skip for want of a real server record it in this file (test/support/skips.mjs); the
// run ends with one line naming them and the command that installs what they need. The test
// processes inherit the variable.
const skips = join(tmpdir(), `ebb-test-skips-${process.pid}.jsonl`);
process.env[SKIPS_FILE_ENV] = skips;

// `npm test` runs every project: the library's unit tests (beside their files), the CLI's, and
// the integration tests under test/ (the CLI as a process, real sockets, the packed tarball).
// A file that runs longer than any should (10 min) is taken to be stuck where its own timeout
// cannot fire: the run names it and ends (test/support/stall-guard.ts).
// Unit tests run virtual time, but their properties and simulations are CPU-bound: a test of 2–4 s
// alone took over 5 s (the default) on a 2-core machine running builds beside it. 20 s each.
const UNIT_TIMEOUT_MS = 20_000;

export default defineConfig({
  test: {
    reporters: ['default', new SkipSummary(skips), new StallGuard()],
    projects: [
      {
        test: {
          name: 'ebb',
          root: 'packages/ebb',
          include: ['src/**/*.test.ts'],
          testTimeout: UNIT_TIMEOUT_MS,
          setupFiles: [setup, leaks, properties],
        },
      },
      {
        test: {
          name: 'ebb-cli',
          root: 'packages/ebb-cli',
          include: ['src/**/*.test.ts'],
          testTimeout: UNIT_TIMEOUT_MS,
          setupFiles: [setup, leaks, properties],
        },
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
