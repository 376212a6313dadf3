export { type GiveUpReason, isAbortError, RetryError } from './errors.js';
export type {
  AttemptContext,
  BudgetSuccess,
  Outcome,
  RateController,
  RetryBudget,
  RetryContext,
  RetryOptions,
} from './options.js';
export { NotDoneError, type PollOptions, type PollResult, poll } from './poll.js';
export { retry } from './retry.js';
export { type RetrySyncOptions, retrySync, type SyncAttemptContext, type SyncClock } from './retry-sync.js';
