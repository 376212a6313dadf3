import fc from 'fast-check';
import { secondsFromEnv } from '../support/env-limits.js';

/**
 * For the unit projects (`ebb`, `ebb-cli`), whose properties are synchronous or run in virtual
 * time, each in a few seconds at most. A property that fails is shrunk to a smaller
 * counterexample, in a loop no test timeout can stop: one whose failures lie on a thin ridge
 * (two large doubles close together) can shrink for hours. Every property therefore ends after
 * `PROPERTY_LIMIT_MS` (60 s, or EBB_PROPERTY_LIMIT_S seconds): a failing one reports the smallest
 * counterexample found by then, and one still running fails as interrupted, naming the limit
 * rather than passing on fewer runs than it asked for.
 */
export const PROPERTY_LIMIT_MS = secondsFromEnv('EBB_PROPERTY_LIMIT_S', process.env.EBB_PROPERTY_LIMIT_S, 60_000);

fc.configureGlobal({ interruptAfterTimeLimit: PROPERTY_LIMIT_MS, markInterruptAsFailure: true });
