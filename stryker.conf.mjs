// @ts-check
/**
 * Mutation testing of the library's core modules: `npm run mutation` (on demand, never in CI — a full
 * run takes tens of minutes on two cores). Reports land in reports/mutation/ (HTML and JSON).
 *
 * Scope: core/, backoff/, retry/, the client side of http/ (the fetch wrapper, Retry-After and
 * RateLimit parsing, classifiers) and rate/, exercised by the unit tests beside them (perTest
 * coverage: each mutant runs only the tests that reach it). The simulators, the server-side
 * shedding helpers and the CLI are outside the scope.
 *
 * Run part of it with `npm run mutation -- --mutate 'packages/ebb/src/backoff/**\/*.ts'`;
 * `--incremental` (reports/stryker-incremental.json) re-tests only mutants whose code or tests changed.
 *
 * Equivalent mutants — survivors that change nothing a caller can observe — are marked in the source
 * with `// Stryker disable next-line <mutator>: <reason>` so the reason sits beside the code; the list
 * below records the reasons by file.
 *
 * Equivalent mutants by file (reason), from the runs of 23 Nov 2026 over backoff/ (not marked inline):
 * - backoff.ts: `d < cap ? d : cap` → `<=` in capped (differs only in the sign of a zero delayMs),
 *   and `Run.next` storing `previous` for every segment (only a decorrelated segment reads it).
 * - describe.ts: `if (!means)` → `true` (a deterministic cache), and `high <= clamp` → `<`,
 *   `low >= clamp` → `>` in clampedUniformMean (at equality both formulas give the same mean).
 * stryker.backoff.conf.mjs runs backoff.ts and describe.ts with backoff/'s tests only (a lower bound).
 * backoff/'s full list, and the survivors once listed here that were not equivalent (the
 * `allowInfinity` and message mutants, now killed), are in docs/dev/mutation-backoff.md.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  packageManager: 'npm',
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: true },
  plugins: ['@stryker-mutator/vitest-runner'],
  coverageAnalysis: 'perTest',
  // Mutants in module-level code (the presets built at import, the catalog) would each run every
  // test: 35 % of backoff/'s mutants for 64 % of the time. Their behaviour is pinned by the presets'
  // exact-sequence tests, which run in `npm test`.
  ignoreStatic: true,
  mutate: [
    'packages/ebb/src/core/**/*.ts',
    'packages/ebb/src/backoff/**/*.ts',
    'packages/ebb/src/retry/**/*.ts',
    'packages/ebb/src/rate/**/*.ts',
    'packages/ebb/src/http/*.ts',
    // Server side of http/ (load shedding) and barrels: out of scope.
    '!packages/ebb/src/http/shed.ts',
    '!packages/ebb/src/http/shed-fetch.ts',
    '!packages/ebb/src/http/admission.ts',
    '!packages/ebb/src/**/index.ts',
    '!packages/ebb/src/**/*.test.ts',
    '!packages/ebb/src/**/test-helpers.ts',
  ],
  ignorePatterns: ['bench', 'docs', 'packages/ebb-cli', 'packages/ebb/dist', 'reports', 'test/compat', 'coverage'],
  concurrency: 2,
  timeoutMS: 10_000,
  // The first, instrumented run of every test takes minutes on a busy two-core machine.
  dryRunTimeoutMinutes: 30,
  incrementalFile: 'reports/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
