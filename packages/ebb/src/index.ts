/**
 * ebb — exponential backoff done exactly.
 *
 * The root entry: backoff policies (curves, jitter, limits, presets, describePolicy, sample), the
 * executor (retry, retrySync, poll) and the core parameters (Clock, Random). Subpaths add HTTP,
 * rate control and simulators.
 *
 * @packageDocumentation
 */

export {
  type AwsRetryBehaviour,
  AwsStandardBackoff,
  type AwsStandardBackoffOptions,
  awsStandardBackoff,
} from './backoff/aws.js';
export {
  Backoff,
  type BackoffJSON,
  type BackoffPolicy,
  type BackoffRun,
  type LimitOptions,
  MAX_DELAY_MS,
} from './backoff/backoff.js';
export { findPreset, type PresetInfo, presetCatalog } from './backoff/catalog.js';
export { chain } from './backoff/chain.js';
export { type ConstantOptions, constant } from './backoff/constant.js';
export { decorrelatedJitter } from './backoff/decorrelated.js';
export { defaultBackoff } from './backoff/default.js';
export { describePolicy, describeRow, type Schedule, type ScheduleRow } from './backoff/describe.js';
export { type ExponentialOptions, exponential } from './backoff/exponential.js';
export { GoogleBackoff, type GoogleExponentialBackoffOptions, googleExponentialBackoff } from './backoff/google.js';
export { type GrpcRetryPolicyOptions, grpcRetryPolicy } from './backoff/grpc.js';
export type { Jitter } from './backoff/jitter.js';
export { additiveJitter } from './backoff/jitter-additive.js';
export { equalJitter } from './backoff/jitter-equal.js';
export { fullJitter } from './backoff/jitter-full.js';
export { jitterNamed } from './backoff/jitter-named.js';
export { noJitter } from './backoff/jitter-none.js';
export { proportionalJitter } from './backoff/jitter-proportional.js';
export { type LinearOptions, linear } from './backoff/linear.js';
export { type PresetName, presets, type TruncatedBinaryOptions, truncatedBinary } from './backoff/presets.js';
export { type SampleOptions, sample } from './backoff/sample.js';
export { type SequenceOptions, sequence } from './backoff/sequence.js';
export { type SlottedOptions, slotted } from './backoff/slotted.js';
export { withOptions } from './backoff/with-options.js';
export { type Clock, systemClock, unrefSystemClock } from './core/clock.js';
export { formatMs } from './core/format-ms.js';
export { type Random, type SeededRandom, seeded } from './core/random.js';
export { type VirtualClock, virtualClock } from './core/virtual-clock.js';
export {
  type AttemptContext,
  type BudgetSuccess,
  defaultIsFailure,
  type ExecuteOptions,
  type FailedAttemptContext,
  type FailureVerdict,
  type Fallback,
  type FallbackOptions,
  type FallbackValue,
  FinalError,
  fallback,
  type GiveUpContext,
  type GiveUpReason,
  guard,
  type IsFailure,
  isAbortError,
  isFinal,
  isNotDoneError,
  isRetryError,
  isTimeoutError,
  type Mechanism,
  type NextStep,
  NotDoneError,
  type Outcome,
  type Pipeline,
  type PipelineOptions,
  type PollOptions,
  type PollResult,
  pipeline,
  poll,
  type RateController,
  type Result,
  type RetryBudget,
  type RetryContext,
  RetryError,
  type RetryingOptions,
  type RetryOptions,
  type RetrySyncOptions,
  retry,
  retrying,
  retrySync,
  type SyncAttemptContext,
  type SyncClock,
  stop,
  type TimeoutOptions,
  timeout,
} from './retry/index.js';
