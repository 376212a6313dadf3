/**
 * ebb/http — both sides of the backoff bargain over HTTP.
 *
 * The client side: `withRetry(fetch, options)`, a `fetch` that retries with ebb's executor,
 * within a retry budget per origin; the failure predicates of the seed systems (`standard`,
 * `googleHttpClient`, `googleDrive`, `aws`), usable as the `isFailure` of any mechanism;
 * `Retry-After` and `RateLimit` parsing; network-error detection for Node.js, Bun, Deno and
 * browsers. It uses only what every runtime has (`fetch`, `Headers`, `AbortSignal`), and its
 * declarations need neither the DOM lib nor `@types/node`'s Node-only modules.
 *
 * The server side: `shed(listener, options)` for `node:http` and `shedFetch(handler, options)`
 * for fetch-style servers: queue up to a limit, then answer 503 with `Retry-After` at once.
 *
 * @packageDocumentation
 */

export { MAX_RETRY_AFTER_MS, type ShedOptions, type ShedStats } from './admission.js';
export { aws, awsGeneralReference, awsServerHintMs, awsThrottlingCodes } from './aws.js';
export { googleDrive, googleHttpClient } from './google.js';
export { isNetworkError, isNotSentError, isTimeoutError } from './network-error.js';
export { type HttpPredicate, standard } from './predicates.js';
export { parseRateLimit, type RateLimitItem, rateLimitWaitMs } from './rate-limit.js';
export { responseText } from './response-text.js';
export { parseHttpDate, parseRetryAfter, retryAfterMs } from './retry-after.js';
export { type HasHeaders, serverHintMs } from './server-hint.js';
export { type SheddingListener, type ShedResponse, shed } from './shed.js';
export { type SheddingHandler, shedFetch } from './shed-fetch.js';
export { HttpStatusError, isHttpStatusError } from './status-error.js';
export {
  type FetchLike,
  type HttpAttemptContext,
  type HttpIsFailure,
  type HttpRetryContext,
  type ResponseLike,
  type WithRetryOptions,
  withRetry,
} from './with-retry.js';
