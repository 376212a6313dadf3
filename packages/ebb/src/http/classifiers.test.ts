import { describe, expect, it } from 'vitest';
import { aws, awsGeneralReference, awsThrottlingCodes } from './aws.js';
import { type HttpClassifier, type HttpResult, readTextPrefix, standard } from './classifier.js';
import { googleDrive, googleHttpClient } from './google.js';

/** What withRetry hands a classifier, built from a Response or an error. */
function result(outcome: Response | Error): HttpResult {
  const response = outcome instanceof Response ? outcome : undefined;
  let text: Promise<string> | undefined;
  return {
    method: 'GET',
    url: 'http://127.0.0.1/x',
    attempt: 1,
    response,
    error: response ? undefined : outcome,
    text: () => {
      text ??= response ? readTextPrefix(response) : Promise.resolve('');
      return text;
    },
  };
}

const status = (code: number, body: string | null = null, headers: Record<string, string> = {}) =>
  new Response(body, { status: code, headers });
const reset = () =>
  new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
const timeout = () => new DOMException('attempt 1 timed out', 'TimeoutError');

async function verdict(classifier: HttpClassifier, outcome: Response | Error) {
  return await classifier(result(outcome));
}

/** Every status a Response can carry, 200 to 599. */
const ALL_STATUSES = Array.from({ length: 400 }, (_, i) => 200 + i);

describe('standard', () => {
  it('retries 408, 500, 502, 503, 504; throttles 429; everything else is final', async () => {
    for (const s of ALL_STATUSES) {
      const expected = s === 429 ? 'throttled' : [408, 500, 502, 503, 504].includes(s) ? 'retry' : 'final';
      expect(await verdict(standard, status(s)), String(s)).toBe(expected);
    }
  });

  it('retries network failures and attempt timeouts, not aborts or programming errors', async () => {
    expect(await verdict(standard, reset())).toBe('retry');
    expect(await verdict(standard, new TypeError('Failed to fetch'))).toBe('retry');
    expect(await verdict(standard, timeout())).toBe('retry');
    expect(await verdict(standard, new DOMException('stop', 'AbortError'))).toBe('final');
    expect(await verdict(standard, new TypeError('Failed to parse URL from x'))).toBe('final');
  });
});

describe('googleHttpClient (ExponentialBackOffPolicy: 500 and 503)', () => {
  it('retries exactly 500 and 503 among all statuses', async () => {
    for (const s of ALL_STATUSES) {
      expect(await verdict(googleHttpClient, status(s)), String(s)).toBe(s === 500 || s === 503 ? 'retry' : 'final');
    }
    expect(await verdict(googleHttpClient, reset())).toBe('retry');
    expect(await verdict(googleHttpClient, timeout())).toBe('retry');
  });
});

/** Drive's JSON error document ("Resolve errors"). */
const driveError = (code: number, reason: string, message = reason) =>
  JSON.stringify({ error: { errors: [{ domain: 'usageLimits', reason, message }], code, message } });

describe('googleDrive', () => {
  it("throttles Drive's rate-limit 403s and not its other 403s", async () => {
    expect(await verdict(googleDrive, status(403, driveError(403, 'userRateLimitExceeded')))).toBe('throttled');
    expect(await verdict(googleDrive, status(403, driveError(403, 'rateLimitExceeded')))).toBe('throttled');
    for (const reason of ['forbidden', 'insufficientFilePermissions', 'dailyLimitExceeded', 'storageQuotaExceeded']) {
      expect(await verdict(googleDrive, status(403, driveError(403, reason))), reason).toBe('final');
    }
  });

  it('a 403 without a JSON error document, or with a malformed one, is final', async () => {
    expect(await verdict(googleDrive, status(403))).toBe('final');
    expect(await verdict(googleDrive, status(403, 'Forbidden'))).toBe('final');
    expect(await verdict(googleDrive, status(403, '{"error":{"errors":"rateLimitExceeded"}}'))).toBe('final');
    expect(await verdict(googleDrive, status(403, 'null'))).toBe('final');
    // The reason must be an entry's reason, not merely appear in the text.
    expect(await verdict(googleDrive, status(403, '{"error":{"message":"rateLimitExceeded"}}'))).toBe('final');
  });

  it('retries 500, 502, 503, 504, throttles 429, and leaves every other status final', async () => {
    for (const s of ALL_STATUSES) {
      if (s === 403) continue;
      const expected = s === 429 ? 'throttled' : [500, 502, 503, 504].includes(s) ? 'retry' : 'final';
      expect(await verdict(googleDrive, status(s)), String(s)).toBe(expected);
    }
    expect(await verdict(googleDrive, reset())).toBe('retry');
  });

  it('reads a clone: the response given back still has its whole body', async () => {
    const body = driveError(403, 'forbidden');
    const r = status(403, body);
    expect(await verdict(googleDrive, r)).toBe('final');
    expect(r.bodyUsed).toBe(false);
    expect(await r.text()).toBe(body);
  });
});

describe('aws', () => {
  it('throttles ThrottlingException (400) and retries nothing else among 4xx codes such as ValidationException', async () => {
    const json = (type: string) => JSON.stringify({ __type: type, message: 'x' });
    expect(await verdict(aws, status(400, json('ThrottlingException')))).toBe('throttled');
    expect(await verdict(aws, status(400, json('ValidationException')))).toBe('final');
    expect(await verdict(aws, status(403, json('AccessDeniedException')))).toBe('final');
    expect(await verdict(aws, status(404, json('ResourceNotFoundException')))).toBe('final');
  });

  it('every code of the SDK list throttles, as a 400 or a 503', async () => {
    for (const code of awsThrottlingCodes) {
      expect(await verdict(aws, status(400, JSON.stringify({ __type: code }))), code).toBe('throttled');
      expect(await verdict(aws, status(503, JSON.stringify({ code }))), code).toBe('throttled');
    }
    expect(awsThrottlingCodes).toHaveLength(14);
  });

  it("reads x-amzn-ErrorType in all of Smithy's restJson1 forms", async () => {
    for (const header of [
      'ThrottlingException',
      'ThrottlingException:http://internal.amazon.com/coral/com.amazon.coral.availability/',
      'aws.protocoltests.restjson#ThrottlingException',
      'aws.protocoltests.restjson#ThrottlingException:http://internal.amazon.com/coral/com.amazon.coral.validate/',
    ]) {
      expect(await verdict(aws, status(400, '{}', { 'x-amzn-ErrorType': header })), header).toBe('throttled');
    }
    // The header wins over the body.
    const r = status(400, JSON.stringify({ __type: 'ThrottlingException' }), {
      'x-amzn-ErrorType': 'ValidationException',
    });
    expect(await verdict(aws, r)).toBe('final');
  });

  it('reads the JSON protocols: __type with a namespace, code, Code', async () => {
    const dynamo = '{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"x"}';
    expect(await verdict(aws, status(400, dynamo))).toBe('throttled');
    expect(await verdict(aws, status(400, '{"code":"TooManyRequestsException"}'))).toBe('throttled');
    expect(await verdict(aws, status(400, '{"Code":"RequestLimitExceeded"}'))).toBe('throttled');
    expect(await verdict(aws, status(400, '{"__type":42}'))).toBe('final');
    expect(await verdict(aws, status(400, '{not json'))).toBe('final');
  });

  it('reads the XML protocols: Query, EC2 and S3', async () => {
    const query =
      '<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message></Error></ErrorResponse>';
    const ec2 = '<Response><Errors><Error><Code>RequestLimitExceeded</Code></Error></Errors></Response>';
    const s3 = '<?xml version="1.0"?><Error><Code>SlowDown</Code><Message>Reduce your request rate.</Message></Error>';
    expect(await verdict(aws, status(400, query))).toBe('throttled');
    expect(await verdict(aws, status(503, ec2))).toBe('throttled');
    expect(await verdict(aws, status(503, s3))).toBe('throttled');
    expect(await verdict(aws, status(400, '<Error><Code>InvalidParameterValue</Code></Error>'))).toBe('final');
  });

  it("retries S3's 400 RequestTimeout (a transient code); 500, 502, 503, 504 as the SDK, every 5xx as the General Reference", async () => {
    for (const rule of [aws, awsGeneralReference]) {
      expect(await verdict(rule, status(400, '<Error><Code>RequestTimeout</Code></Error>'))).toBe('retry');
      expect(await verdict(rule, status(400, '{"__type":"RequestTimeoutException"}'))).toBe('retry');
      // A transient code makes any 5xx transient for the SDK too.
      expect(await verdict(rule, status(501, '{"__type":"RequestTimeoutException"}'))).toBe('retry');
    }
    // The SDK's TRANSIENT_ERROR_STATUS_CODES (@smithy/core 3.41.0).
    for (let s = 500; s < 600; s++) {
      expect(await verdict(aws, status(s)), String(s)).toBe([500, 502, 503, 504].includes(s) ? 'retry' : 'final');
      expect(await verdict(awsGeneralReference, status(s)), String(s)).toBe('retry');
    }
  });

  it('throttles 429, leaves 2xx/3xx and code-less 4xx final, retries network failures', async () => {
    expect(await verdict(aws, status(429))).toBe('throttled');
    expect(await verdict(aws, status(200, '{"__type":"ThrottlingException"}'))).toBe('final');
    expect(await verdict(aws, status(304))).toBe('final');
    expect(await verdict(aws, status(400))).toBe('final');
    expect(await verdict(aws, reset())).toBe('retry');
    expect(await verdict(aws, timeout())).toBe('retry');
  });
});

describe('readTextPrefix', () => {
  it('reads at most the limit, leaves the response unread, and handles empty bodies', async () => {
    const big = 'é'.repeat(100_000); // two bytes each
    const r = new Response(big);
    const prefix = await readTextPrefix(r, 1000);
    expect(prefix).toBe('é'.repeat(500));
    expect(r.bodyUsed).toBe(false);
    expect(await r.text()).toBe(big);
    expect(await readTextPrefix(new Response(null))).toBe('');
  });
});
