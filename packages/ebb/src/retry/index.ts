export {
  defaultRetryIf,
  FinalError,
  type GiveUpReason,
  isAbortError,
  isFinal,
  isRetryError,
  RetryError,
  stop,
} from './errors.js';
export type {
  AttemptContext,
  BudgetSuccess,
  FailedAttemptContext,
  GiveUpContext,
  NextStep,
  Outcome,
  RateController,
  RetryBudget,
  RetryContext,
  RetryOptions,
  SuccessContext,
} from './options.js';
export { isNotDoneError, NotDoneError, type PollOptions, type PollResult, poll } from './poll.js';
export { retry } from './retry.js';
export { type RetrySyncOptions, retrySync, type SyncAttemptContext, type SyncClock } from './retry-sync.js';
