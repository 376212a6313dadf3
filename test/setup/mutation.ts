import fc from 'fast-check';

/**
 * For `npm run mutation` only. Under StrykerJS's instrumentation a property test runs many times
 * slower, and one that takes 3 s under `npm test` exceeds any sane per-mutant timeout. Each
 * property stops after 1.5 s and counts what it ran (a mutant it catches usually fails within
 * the first few runs); the explicit `numRuns` of each test still bounds it from above.
 */
fc.configureGlobal({ interruptAfterTimeLimit: 1_500, markInterruptAsFailure: false });
