import { type HttpClassifier, type HttpResult, isTransientError } from './classifier.js';

/**
 * The throttling error codes of the AWS SDKs: `THROTTLING_ERROR_CODES` in
 * `@smithy/service-error-classification` (smithy-lang/smithy-typescript), which the SDK for
 * JavaScript v3 retries as THROTTLING whatever the status.
 */
export const awsThrottlingCodes: readonly string[] = Object.freeze([
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

const THROTTLING: ReadonlySet<string> = new Set(awsThrottlingCodes);

/** `TRANSIENT_ERROR_CODES` of the same package: timeouts reported with a 4xx (S3's 400 RequestTimeout). */
const TRANSIENT: ReadonlySet<string> = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);

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
 * EC2 and S3's REST-XML: `<Error><Code>SlowDown</Code>…`).
 */
async function errorCode(result: HttpResult, response: Response): Promise<string | undefined> {
  const header = response.headers.get('x-amzn-errortype');
  if (header !== null && header.trim() !== '') return sanitize(header);
  const text = (await result.text()).trim();
  if (text.startsWith('{')) {
    try {
      const doc = JSON.parse(text) as Record<string, unknown> | null;
      const raw = doc?.__type ?? doc?.code ?? doc?.Code;
      return typeof raw === 'string' ? sanitize(raw) : undefined;
    } catch {
      return undefined;
    }
  }
  const xml = /<Code>([^<]{1,256})<\/Code>/.exec(text);
  return xml ? sanitize(xml[1] as string) : undefined;
}

/**
 * The AWS rule (AWS General Reference, "Error retries and exponential backoff in AWS": "retry
 * original requests that receive server (5xx) or throttling errors … client errors (4xx)
 * indicate that you need to revise the request"; the SDKs' error classification):
 * - **5xx**: retry (throttled when the code is a throttling code: S3's 503 `SlowDown`);
 * - **429**, and any 4xx whose error code is in {@link awsThrottlingCodes} (a 400
 *   `ThrottlingException`, EC2's `RequestLimitExceeded`): throttled;
 * - a 4xx with a transient code (`RequestTimeout`, `RequestTimeoutException`): retry;
 * - every other 4xx (`ValidationException`, `AccessDeniedException`, …): final;
 * - network failures and attempt timeouts: retry.
 *
 * It reads the code from `x-amzn-ErrorType`, else from the first 64 KiB of the body (a clone:
 * the response you get back is unread), and only for 4xx and 5xx responses.
 *
 * Where the SDKs differ: they retry 500, 502, 503 and 504 only (`TRANSIENT_ERROR_STATUS_CODES`),
 * not 501 or 505, and they correct clock skew before retrying a signature error; the General
 * Reference and the seed article say "5xx", and ebb follows them.
 *
 * Pairs with `presets.awsStandard` (full jitter on 100 ms × 2^i, 20 s cap, 3 attempts),
 * `presets.awsStandard2026`, or `presets.awsSimpleDb`.
 */
export const aws: HttpClassifier = async (result) => {
  const { response, error } = result;
  if (response === undefined) return isTransientError(error) ? 'retry' : 'final';
  const status = response.status;
  if (status < 400) return 'final';
  if (status === 429) return 'throttled';
  const code = await errorCode(result, response);
  if (code !== undefined && THROTTLING.has(code)) return 'throttled';
  if (status >= 500) return 'retry';
  return code !== undefined && TRANSIENT.has(code) ? 'retry' : 'final';
};
