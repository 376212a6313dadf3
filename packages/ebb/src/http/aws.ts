import type { Result } from '../retry/errors.js';
import { type HttpPredicate, isTransientError, responseOf, statusOf } from './predicates.js';
import { responseText } from './response-text.js';
import type { HasHeaders } from './server-hint.js';

/**
 * The throttling error codes of the AWS SDKs: `THROTTLING_ERROR_CODES` in
 * `@smithy/service-error-classification` (smithy-lang/smithy-typescript), which the SDK for
 * JavaScript v3 retries as THROTTLING whatever the status.
 */
export const awsThrottlingCodes: readonly string[] = /* @__PURE__ */ Object.freeze([
  'BandwidthLimitExceeded',
  'EC2ThrottledException',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TransactionInProgressException',
]);

const THROTTLING: ReadonlySet<string> = /* @__PURE__ */ new Set(awsThrottlingCodes);

/** `TRANSIENT_ERROR_CODES` of the same package: timeouts reported with a 4xx (S3's 400 RequestTimeout). */
const TRANSIENT: ReadonlySet<string> = /* @__PURE__ */ new Set([
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
]);

/**
 * An AWS error code as the SDKs normalize it (`sanitizeErrorCode` in the generated protocol
 * code): the part before any `,` and `:` (`ThrottlingException:http://internal.amazon.com/…`)
 * and after any `#` (`com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException`).
 */
function sanitize(raw: string): string {
  let code = raw.trim();
  const comma = code.indexOf(',');
  if (comma >= 0) code = code.slice(0, comma);
  const colon = code.indexOf(':');
  if (colon >= 0) code = code.slice(0, colon);
  const hash = code.indexOf('#');
  if (hash >= 0) code = code.slice(hash + 1);
  return code;
}

/**
 * The error code of an AWS error response: the `x-amzn-ErrorType` header (REST-JSON), else the
 * body's JSON `__type` or `code`/`Code` (JSON protocols), else the first XML `<Code>` (Query,
 * EC2 and S3's REST-XML: `<Error><Code>SlowDown</Code>…`). Headers or body missing (a bare
 * `{ status }`): no code.
 */
async function errorCode(response: unknown): Promise<string | undefined> {
  const headers = (response as { headers?: { get?: unknown } }).headers;
  const header = typeof headers?.get === 'function' ? (headers as Headers).get('x-amzn-errortype') : null;
  if (header !== null && header.trim() !== '') return sanitize(header);
  const text = (await responseText(response as Response)).trim();
  if (text.startsWith('{')) {
    let doc: Record<string, unknown>;
    try {
      // Text that starts with "{" parses to an object or not at all.
      doc = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return undefined;
    }
    const raw = doc.__type ?? doc.code ?? doc.Code;
    return typeof raw === 'string' ? sanitize(raw) : undefined;
  }
  const xml = /<Code>([^<]{1,256})<\/Code>/.exec(text);
  return xml ? sanitize(xml[1] as string) : undefined;
}

/** `TRANSIENT_ERROR_STATUS_CODES` of the SDK (`@smithy/core` 3.41.0): the 5xx statuses it retries. */
const TRANSIENT_STATUS: ReadonlySet<number> = /* @__PURE__ */ new Set([500, 502, 503, 504]);

/** The verdict both AWS rules share; `every5xx` picks the General Reference's reading of 5xx. */
async function classify(outcome: Result<unknown>, every5xx: boolean): Promise<boolean | 'throttled'> {
  const status = statusOf(outcome);
  if (status === undefined) return !outcome.ok && isTransientError(outcome.error);
  if (status < 400) return false;
  if (status === 429) return 'throttled';
  const response = responseOf(outcome);
  // '' is in neither set: no code, no verdict from it.
  // Stryker disable next-line StringLiteral: any string in neither set does the same.
  const code = (typeof response === 'object' && response !== null ? await errorCode(response) : undefined) ?? '';
  if (THROTTLING.has(code)) return 'throttled';
  if (TRANSIENT.has(code)) return true;
  return every5xx ? status >= 500 : TRANSIENT_STATUS.has(status);
}

/**
 * The AWS SDKs' rule, as the published SDK for JavaScript classifies errors (`@smithy/core`
 * 3.41.0, `getRetryErrorType`: THROTTLING and TRANSIENT are retried, SERVER_ERROR and
 * CLIENT_ERROR are not):
 * - **429**, and any error whose code is in {@link awsThrottlingCodes} (a 400
 *   `ThrottlingException`, S3's 503 `SlowDown`, EC2's `RequestLimitExceeded`): `'throttled'`;
 * - a transient code (`TimeoutError`, `RequestTimeout`, `RequestTimeoutException`): `true`;
 * - **500, 502, 503, 504** (`TRANSIENT_ERROR_STATUS_CODES`): `true`; other 5xx (501, 505 …)
 *   are no failure — for every 5xx, use {@link awsGeneralReference};
 * - every other 4xx (`ValidationException`, `AccessDeniedException`, …): `false`;
 * - network failures and attempt timeouts: `true`; other errors `false`.
 *
 * It reads the code from `x-amzn-ErrorType`, else from the first 64 KiB of the body
 * (`responseText`: a clone, so the response you get back is unread), and only for 4xx and 5xx
 * responses.
 *
 * Where the SDKs differ: they also correct clock skew before retrying a signature error, and
 * honour the `$retryable` trait of modelled errors; ebb has neither.
 *
 * Pairs with `presets.awsStandard` (the SDK's standard mode) and `awsRetryQuota()` from `ebb/rate`.
 */
export const aws: HttpPredicate = /* @__PURE__ */ Object.assign(
  (outcome: Result<unknown>) => classify(outcome, false),
  { serverHintMs: (response: HasHeaders) => awsServerHintMs(response) },
);

/**
 * The AWS General Reference's rule ("Error retries and exponential backoff in AWS": "retry
 * original requests that receive server (5xx) or throttling errors … client errors (4xx)
 * indicate that you need to revise the request"), which the seed article follows: as
 * {@link aws}, but **every 5xx** is retried, 501 and 505 included.
 */
export const awsGeneralReference: HttpPredicate = /* @__PURE__ */ Object.assign(
  (outcome: Result<unknown>) => classify(outcome, true),
  { serverHintMs: (response: HasHeaders) => awsServerHintMs(response) },
);

/**
 * The server's hint as the SDK reads it (`parseRetryAfterHeader`), in ms, or undefined:
 * `x-amz-retry-after` (milliseconds, any number `Number()` accepts), else `Retry-After` (whole
 * or decimal seconds, or an HTTP-date measured from `nowMs`). Like the SDK, which turns the hint
 * into a `Date`, a fractional millisecond is dropped (floored). Where the SDK takes whichever
 * header comes first on the wire, ebb prefers `x-amz-retry-after`. The standard mode then
 * bounds the hint to 5 s past its own wait (`presets.awsStandard`).
 */
export function awsServerHintMs(response: HasHeaders, nowMs: number = Date.now()): number | undefined {
  const amz = response.headers.get('x-amz-retry-after');
  if (amz !== null) {
    const ms = Number(amz);
    return Number.isFinite(ms) ? Math.floor(ms) : undefined;
  }
  const value = response.headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.floor(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.floor(date - nowMs) : undefined;
}
