// Every name ebb/otel writes — instruments, their units, attributes, span events — in one table,
// each with its source: OpenTelemetry's semantic conventions where one exists, else the name
// Polly v8 (Polly.Extensions telemetry) or gRPC (A66, A96) gives the same thing, spelled under
// the `ebb.` namespace as OpenTelemetry's naming rules ask of a library's own names.

/**
 * The instruments: name, unit (UCUM, as OpenTelemetry writes them) and description.
 * Durations are seconds (`s`), as OpenTelemetry's conventions and gRPC A66 require (Polly
 * reports milliseconds; ebb follows OpenTelemetry).
 */
export const INSTRUMENTS = {
  /** Logical calls (one `execute()` of the pipeline), by outcome. gRPC A66 counts calls in `{call}`. */
  calls: { name: 'ebb.calls', unit: '{call}', description: 'Logical calls through the pipeline.' },
  /**
   * Duration of a logical call, waits included: Polly's `resilience.polly.pipeline.duration`
   * (milliseconds there), in seconds.
   */
  callDuration: {
    name: 'ebb.call.duration',
    unit: 's',
    description: 'Duration of a logical call, every attempt and wait included.',
  },
  /**
   * Attempts by kind (`original`, `retry`, `hedge`) and outcome. gRPC A66 counts attempts in
   * `{attempt}` (`grpc.client.attempt.started`).
   */
  attempts: { name: 'ebb.attempts', unit: '{attempt}', description: 'Attempts, by kind and outcome.' },
  /**
   * Duration of one attempt: Polly's `resilience.polly.strategy.attempt.duration` (milliseconds
   * there, with `attempt.number` and `attempt.handled`), in seconds.
   */
  attemptDuration: { name: 'ebb.attempt.duration', unit: 's', description: 'Duration of one attempt.' },
  /**
   * Retry and hedge attempts a logical call made, the original not counted: gRPC A96's
   * `grpc.client.call.retries`.
   */
  callRetries: {
    name: 'ebb.call.retries',
    unit: '{retry}',
    description: 'Retry and hedge attempts made during a logical call (the original attempt not counted).',
  },
  /** Time a logical call spent with no attempt running: gRPC A96's `grpc.client.call.retry_delay`. */
  retryDelay: {
    name: 'ebb.call.retry_delay',
    unit: 's',
    description: 'Total time of delay while no attempt of the logical call was running.',
  },
  /**
   * Attempts refused before they left the process, and retries a retry budget refused, by
   * reason. Polly counts these as resilience events (`OnRateLimiterRejected`, a broken
   * circuit's rejection) in `resilience.polly.strategy.events`; ebb counts them on their own.
   */
  refusals: { name: 'ebb.refusals', unit: '{refusal}', description: 'Attempts or retries refused, by reason.' },
  /**
   * 1 for the breaker's current state, 0 for the others: resilience4j's Micrometer gauge
   * `resilience4j.circuitbreaker.state` reads the same way.
   */
  breakerState: {
    name: 'ebb.circuit_breaker.state',
    unit: '1',
    description: 'The circuit breaker state: 1 for the current state, 0 for the others.',
  },
  /** State changes, by the state entered: Polly's `OnCircuitOpened`, `OnCircuitHalfOpened`, `OnCircuitClosed` events. */
  breakerTransitions: {
    name: 'ebb.circuit_breaker.transitions',
    unit: '{transition}',
    description: 'Circuit breaker state changes, by the state entered.',
  },
  /** The concurrency limit now (Netflix concurrency-limits reports `limit` as a gauge). */
  limit: { name: 'ebb.concurrency_limit.limit', unit: '{request}', description: 'The concurrency limit now.' },
  /**
   * Requests holding a slot, an additive value: an UpDownCounter, as OpenTelemetry's
   * `http.server.active_requests` is.
   */
  inflight: {
    name: 'ebb.concurrency_limit.inflight',
    unit: '{request}',
    description: 'Requests holding a slot of the concurrency limit.',
  },
  /** Requests waiting for a slot. */
  queued: { name: 'ebb.concurrency_limit.queued', unit: '{request}', description: 'Requests waiting for a slot.' },
  /** A rate controller's rate now. */
  rate: { name: 'ebb.rate_controller.rate', unit: '{request}/s', description: 'The rate controller’s rate now.' },
  /** What a retry budget holds now: a token budget's tokens, a ratio budget's balance, the AWS quota's capacity. */
  budget: {
    name: 'ebb.retry_budget.level',
    unit: '{retry}',
    description: 'What the retry budget holds now (tokens, balance or capacity).',
  },
  /**
   * Attempts that left the process ÷ logical calls, over a sliding window: how many requests each
   * call turned into, retries and hedges together. No convention names it; the metastable-failure
   * studies (Bronson et al., HotOS 2021; Huang et al., OSDI 2022) call it retry amplification.
   */
  amplification: {
    name: 'ebb.amplification',
    unit: '1',
    description: 'Attempts that left the process per logical call, over the last window.',
  },
} as const;

/** Attribute keys. */
export const ATTR = {
  /** The pipeline's name: Polly's `pipeline.name` tag, namespaced. */
  pipeline: 'ebb.pipeline.name',
  /** `original`, `retry` or `hedge`. */
  kind: 'ebb.attempt.kind',
  /** The attempt's number, 1 for the first (Polly's `attempt.number` starts at 0). */
  number: 'ebb.attempt.number',
  /** `success`, `failure`, `refused` or `cancelled` (an attempt aborted: a hedge that lost, a timeout). */
  outcome: 'ebb.attempt.outcome',
  /**
   * A logical call's end: `success` (it resolved), `cancelled` (it rejected with an `AbortError`:
   * its caller aborted it) or `failure` (it rejected otherwise, a timeout included).
   */
  callOutcome: 'ebb.call.outcome',
  /** Attempts a logical call made, on its span. */
  callAttempts: 'ebb.call.attempts',
  /** OpenTelemetry's stable HTTP convention: the ordinal of a resent request, set from the second attempt on. */
  resendCount: 'http.request.resend_count',
  /** OpenTelemetry's stable `error.type`: the error's `code`, else its `name`. */
  errorType: 'error.type',
  /** Why an attempt or a retry was refused: `circuit_open`, `limit_exceeded`, `throttled`, `retry_budget`. */
  reason: 'ebb.refusal.reason',
  /** The wait a refusal asked for, in seconds. */
  retryAfter: 'ebb.refusal.retry_after',
  /** A wait between attempts, in seconds. */
  waitDuration: 'ebb.wait.duration',
  /** A breaker's state (`closed`, `open`, `half-open`, `isolated`). */
  state: 'ebb.circuit_breaker.state',
  /** The state a breaker left. */
  from: 'ebb.circuit_breaker.previous_state',
  /** Why a breaker changed state (`consecutive-failures`, `failure-rate`, `probe-failed`, …). */
  changeReason: 'ebb.circuit_breaker.reason',
} as const;

/** Span events. */
export const EVENTS = {
  /** On the call's span: the wait between two attempts just ended. Polly's `OnRetry` event. */
  wait: 'ebb.wait',
  /** On the attempt's span: a guard refused it. Polly's `OnRateLimiterRejected`, a broken circuit's rejection. */
  refusal: 'ebb.refusal',
  /** On the span active when a breaker changed state. Polly's `OnCircuitOpened` and kin. */
  stateChange: 'ebb.circuit_breaker.state_change',
} as const;

/** Error codes of ebb's refusals, and the reason each is counted under. */
export const REFUSALS: Readonly<Record<string, string>> = {
  EBB_CIRCUIT_OPEN: 'circuit_open',
  EBB_LIMIT_EXCEEDED: 'limit_exceeded',
  EBB_LOCAL_THROTTLE: 'throttled',
};

/** Histogram buckets: gRPC A66's latency buckets (seconds, trimmed below 1 ms) and its count buckets. */
export const BUCKETS = {
  seconds: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 50, 100],
  counts: [0, 1, 2, 4, 8, 16, 32, 64],
} as const;

/** The circuit states, each observed (1 or 0) on the state gauge. */
export const STATES = ['closed', 'open', 'half-open', 'isolated'] as const;
