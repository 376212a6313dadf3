import { defineConfig } from 'vitest/config';
import base from './vitest.mutation.config.ts';

// A narrower test set for mutation runs of backoff/ (see stryker.backoff.conf.mjs): only the unit
// tests beside backoff/. Nearly every unit test of the library imports backoff.ts, so with the full
// set each of its mutants runs hundreds of tests. A narrower set can only lower the score (a mutant
// counted as killed was killed by a test that ran), so its figure is a lower bound.
export default defineConfig({ ...base, test: { ...base.test, include: ['src/backoff/**/*.test.ts'] } });
