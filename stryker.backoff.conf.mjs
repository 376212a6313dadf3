// @ts-check
/**
 * `npx stryker run stryker.backoff.conf.mjs --mutate packages/ebb/src/backoff/backoff.ts --concurrency 1`:
 * stryker.conf.mjs with only backoff/'s unit tests (vitest.mutation-backoff.config.ts). Its score is a
 * lower bound of the full run's (fewer tests can only kill fewer mutants) at a fraction of the time.
 */
import base from './stryker.conf.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { ...base.vitest, configFile: 'vitest.mutation-backoff.config.ts' },
  incrementalFile: 'reports/stryker-incremental-backoff.json',
};
