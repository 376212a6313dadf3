export {
  defaultIsFailure,
  type FailureVerdict,
  type GiveUpReason,
  isAbortError,
  isFinal,
  isRetryError,
  isTimeoutError,
  type Result,
  RetryError,
} from './errors.js';
export { type Fallback, type FallbackOptions, fallback } from './fallback.js';
export { FinalError, stop } from './final-error.js';
export { guard } from './guard.js';
export type { Mechanism } from './mechanism.js';
export type {
  AttemptContext,
  BudgetSuccess,
  FailedAttemptContext,
  GiveUpContext,
  IsFailure,
  NextStep,
  Outcome,
  RateController,
  RetryBudget,
  RetryContext,
  RetryOptions,
  SuccessContext,
} from './options.js';
export { type ExecuteOptions, type FallbackValue, type Pipeline, type PipelineOptions, pipeline } from './pipeline.js';
export { isNotDoneError, NotDoneError, type PollOptions, type PollResult, poll } from './poll.js';
export { retry } from './retry.js';
export { type RetrySyncOptions, retrySync, type SyncAttemptContext, type SyncClock } from './retry-sync.js';
export { type RetryingOptions, retrying } from './retrying.js';
export { type TimeoutOptions, timeout } from './timeout.js';
