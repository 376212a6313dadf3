import { DEV } from '../core/dev.js';
import { show } from '../core/validate.js';
import type { AttemptContext } from '../retry/contexts.js';
import { type FailureVerdict, prop, type Result } from '../retry/errors.js';
import { isNetworkError, isTimeoutError } from './network-error.js';
import type { HasHeaders } from './server-hint.js';

/**
 * A failure predicate over what `fetch` produced — the `isFailure` of `withRetry()`, and of any
 * mechanism: `retrying({ isFailure: standard })` around a `fetch` in a pipeline, a `fallback()`.
 * Asked about an outcome — `{ ok: true, value }` (a `Response`, or any `{ status }`) or
 * `{ ok: false, error }` (what `fetch` threw) — it answers `true` (a failure: retried),
 * `'throttled'` (a failure that says "slow down": retried, and a rate controller slows down) or
 * `false` (the response is the answer; the error reaches the caller). May be async (reading the
 * body with `responseText`).
 */
export interface HttpPredicate {
  (outcome: Result<unknown>, context?: AttemptContext): FailureVerdict | Promise<FailureVerdict>;
  /**
   * How the system this predicate stands for reads a server's hint off a failed response, in ms
   * (`aws`: `x-amz-retry-after`, then `Retry-After`). `withRetry` uses it unless given its own
   * `serverHintMs`; without either it reads `Retry-After`. It reads only the headers, so that it
   * fits any fetch's response (undici's as well as the global one).
   */
  serverHintMs?(response: HasHeaders): number | undefined;
}

/**
 * The HTTP status an outcome carries, or undefined: a value's `status` (a `Response`, a
 * `{ status }`), or a thrown error's own `status` (an `HttpStatusError`). Read without throwing. @internal
 */
export function statusOf(outcome: Result<unknown>): number | undefined {
  // `isFailure: standard()` calls the predicate with nothing, where it is to be passed.
  if (typeof outcome !== 'object' || outcome === null) {
    throw new TypeError(
      DEV
        ? `An HTTP predicate is asked about an outcome ({ ok, value } or { ok, error }), got ${show(outcome)}. Pass it uncalled: isFailure: standard, not standard().`
        : `predicate: outcome ${show(outcome)}`,
    );
  }
  const status = prop(outcome.ok ? outcome.value : outcome.error, 'status');
  return typeof status === 'number' ? status : undefined;
}

/** The response an outcome carries: the value, or a thrown error's `response` (an `HttpStatusError`'s). @internal */
export function responseOf(outcome: Result<unknown>): unknown {
  return outcome.ok ? outcome.value : prop(outcome.error, 'response');
}

/**
 * True for failures of the connection and for attempt timeouts: the errors every predicate here
 * retries. Other errors — a refusal of a breaker or a limit inside the retry, an error of the
 * caller's own code — are no failure of the request, as in .NET's HTTP resilience handler
 * (`HttpClientResiliencePredicates.IsTransientHttpException`: `HttpRequestException` and
 * `TimeoutRejectedException`, never `BrokenCircuitException`). @internal
 */
export function isTransientError(error: unknown): boolean {
  return isNetworkError(error) || isTimeoutError(error);
}

/**
 * ebb's default failure predicate, what `withRetry` uses unless told otherwise:
 * - **true** (retry) for network failures (reset, refused, DNS, a socket closed mid-response,
 *   the browsers' "Failed to fetch" family; see `isNetworkError`), attempt timeouts, and the
 *   statuses 408 Request Timeout, 500, 502, 503 and 504;
 * - **'throttled'** for 429 Too Many Requests;
 * - **false** for everything else: success, redirects, every other 4xx (the request itself is
 *   wrong and repeating it cannot help — the rule the AWS General Reference states, and RFC
 *   9110's meaning of 4xx), 501, 505 and the like (the server cannot do it), a value with no
 *   status, and any other error (see `isTransientError`).
 *
 * Pairs with `defaultBackoff`.
 *
 * @example
 * const api = pipeline([retrying({ isFailure: standard }), timeout(5_000)]);
 * const res = await api.execute(({ signal }) => fetch(url, { signal }));
 */
export const standard: HttpPredicate = (outcome) => {
  const status = statusOf(outcome);
  if (status === undefined) return !outcome.ok && isTransientError(outcome.error);
  return status === 429 ? 'throttled' : status === 408 || (status >= 500 && status <= 504 && status !== 501);
};
