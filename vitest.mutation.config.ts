import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The configuration `npm run mutation` hands StrykerJS: the library's unit tests only (beside their
// files, virtual time, no servers), with the same unhandled-rejection trap as `npm test`.
const setup = fileURLToPath(new URL('./test/setup/unhandled.ts', import.meta.url));
const properties = fileURLToPath(new URL('./test/setup/mutation.ts', import.meta.url));

export default defineConfig({
  test: {
    root: 'packages/ebb',
    include: ['src/**/*.test.ts'],
    // The simulators are outside the mutated scope; their tests only slow every mutant down.
    exclude: ['src/sim/**'],
    setupFiles: [setup, properties],
    testTimeout: 60_000,
    // Read by the statistical tests (means over 100,000+ draws), which skip themselves under
    // instrumentation: each would take minutes per mutant. Exact tests cover the same formulas.
    env: { EBB_MUTATION: '1' },
  },
});
