import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { virtualClock } from '../core/virtual-clock.js';
import type { Result } from '../retry/errors.js';
import { fallback } from '../retry/fallback.js';
import { pipeline } from '../retry/pipeline.js';
import { retrying } from '../retry/retrying.js';
import { aws, awsGeneralReference, awsServerHintMs, awsThrottlingCodes } from './aws.js';
import { googleDrive, googleHttpClient } from './google.js';
import { type HttpPredicate, standard } from './predicates.js';
import { readTextPrefix, responseText } from './response-text.js';
import { HttpStatusError } from './status-error.js';

/** What a predicate is asked about a Response (a value) or an error (thrown). */
const outcomeOf = (x: unknown): Result<unknown> =>
  x instanceof Error || x instanceof DOMException ? { ok: false, error: x } : { ok: true, value: x };

const status = (code: number, body: string | null = null, headers: Record<string, string> = {}) =>
  new Response(body, { status: code, headers });
const reset = () =>
  new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
const timeout = () => new DOMException('attempt 1 timed out', 'TimeoutError');

async function verdict(predicate: HttpPredicate, x: unknown) {
  return await predicate(outcomeOf(x));
}

/** Every status a Response can carry, 200 to 599. */
const ALL_STATUSES = Array.from({ length: 400 }, (_, i) => 200 + i);

describe('standard', () => {
  it('retries 408, 500, 502, 503, 504; throttles 429; everything else is no failure', async () => {
    for (const s of ALL_STATUSES) {
      const expected = s === 429 ? 'throttled' : [408, 500, 502, 503, 504].includes(s);
      expect(await verdict(standard, status(s)), String(s)).toBe(expected);
    }
  });

  it('retries network failures and attempt timeouts, not aborts or programming errors', async () => {
    expect(await verdict(standard, reset())).toBe(true);
    expect(await verdict(standard, new TypeError('Failed to fetch'))).toBe(true);
    expect(await verdict(standard, timeout())).toBe(true);
    expect(await verdict(standard, new DOMException('stop', 'AbortError'))).toBe(false);
    expect(await verdict(standard, new TypeError('Failed to parse URL from x'))).toBe(false);
  });
});

describe('googleHttpClient (ExponentialBackOffPolicy: 500 and 503)', () => {
  it('retries exactly 500 and 503 among all statuses', async () => {
    for (const s of ALL_STATUSES) {
      expect(await verdict(googleHttpClient, status(s)), String(s)).toBe(s === 500 || s === 503);
    }
    expect(await verdict(googleHttpClient, reset())).toBe(true);
    expect(await verdict(googleHttpClient, timeout())).toBe(true);
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
      expect(await verdict(googleDrive, status(403, driveError(403, reason))), reason).toBe(false);
    }
  });

  it('a 403 without a JSON error document, or with a malformed one, is no failure', async () => {
    expect(await verdict(googleDrive, status(403))).toBe(false);
    expect(await verdict(googleDrive, status(403, 'Forbidden'))).toBe(false);
    expect(await verdict(googleDrive, status(403, '{"error":{"errors":"rateLimitExceeded"}}'))).toBe(false);
    expect(await verdict(googleDrive, status(403, 'null'))).toBe(false);
    // The reason must be an entry's reason, not merely appear in the text.
    expect(await verdict(googleDrive, status(403, '{"error":{"message":"rateLimitExceeded"}}'))).toBe(false);
  });

  it('retries 500, 502, 503, 504, throttles 429, and leaves every other status no failure', async () => {
    for (const s of ALL_STATUSES) {
      if (s === 403) continue;
      const expected = s === 429 ? 'throttled' : [500, 502, 503, 504].includes(s);
      expect(await verdict(googleDrive, status(s)), String(s)).toBe(expected);
    }
    expect(await verdict(googleDrive, reset())).toBe(true);
  });

  it('reads a clone: the response given back still has its whole body', async () => {
    const body = driveError(403, 'forbidden');
    const r = status(403, body);
    expect(await verdict(googleDrive, r)).toBe(false);
    expect(r.bodyUsed).toBe(false);
    expect(await r.text()).toBe(body);
  });
});

describe('aws', () => {
  it('throttles ThrottlingException (400) and retries nothing else among 4xx codes such as ValidationException', async () => {
    const json = (type: string) => JSON.stringify({ __type: type, message: 'x' });
    expect(await verdict(aws, status(400, json('ThrottlingException')))).toBe('throttled');
    expect(await verdict(aws, status(400, json('ValidationException')))).toBe(false);
    expect(await verdict(aws, status(403, json('AccessDeniedException')))).toBe(false);
    expect(await verdict(aws, status(404, json('ResourceNotFoundException')))).toBe(false);
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
    expect(await verdict(aws, r)).toBe(false);
  });

  it('reads the JSON protocols: __type with a namespace, code, Code', async () => {
    const dynamo = '{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"x"}';
    expect(await verdict(aws, status(400, dynamo))).toBe('throttled');
    expect(await verdict(aws, status(400, '{"code":"TooManyRequestsException"}'))).toBe('throttled');
    expect(await verdict(aws, status(400, '{"Code":"RequestLimitExceeded"}'))).toBe('throttled');
    expect(await verdict(aws, status(400, '{"__type":42}'))).toBe(false);
    expect(await verdict(aws, status(400, '{not json'))).toBe(false);
  });

  it('reads the XML protocols: Query, EC2 and S3', async () => {
    const query =
      '<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message></Error></ErrorResponse>';
    const ec2 = '<Response><Errors><Error><Code>RequestLimitExceeded</Code></Error></Errors></Response>';
    const s3 = '<?xml version="1.0"?><Error><Code>SlowDown</Code><Message>Reduce your request rate.</Message></Error>';
    expect(await verdict(aws, status(400, query))).toBe('throttled');
    expect(await verdict(aws, status(503, ec2))).toBe('throttled');
    expect(await verdict(aws, status(503, s3))).toBe('throttled');
    expect(await verdict(aws, status(400, '<Error><Code>InvalidParameterValue</Code></Error>'))).toBe(false);
  });

  it("retries S3's 400 RequestTimeout (a transient code); 500, 502, 503, 504 as the SDK, every 5xx as the General Reference", async () => {
    for (const rule of [aws, awsGeneralReference]) {
      expect(await verdict(rule, status(400, '<Error><Code>RequestTimeout</Code></Error>'))).toBe(true);
      expect(await verdict(rule, status(400, '{"__type":"RequestTimeoutException"}'))).toBe(true);
      // A transient code makes any 5xx transient for the SDK too.
      expect(await verdict(rule, status(501, '{"__type":"RequestTimeoutException"}'))).toBe(true);
    }
    // The SDK's TRANSIENT_ERROR_STATUS_CODES (@smithy/core 3.41.0).
    for (let s = 500; s < 600; s++) {
      expect(await verdict(aws, status(s)), String(s)).toBe([500, 502, 503, 504].includes(s));
      expect(await verdict(awsGeneralReference, status(s)), String(s)).toBe(true);
    }
  });

  it('throttles 429, calls 2xx/3xx and code-less 4xx no failure, retries network failures', async () => {
    expect(await verdict(aws, status(429))).toBe('throttled');
    expect(await verdict(aws, status(200, '{"__type":"ThrottlingException"}'))).toBe(false);
    expect(await verdict(aws, status(304))).toBe(false);
    expect(await verdict(aws, status(400))).toBe(false);
    expect(await verdict(aws, reset())).toBe(true);
    expect(await verdict(aws, timeout())).toBe(true);
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

describe('every predicate: an error that is no network failure nor timeout is no failure', () => {
  it('standard, googleHttpClient, googleDrive, aws, awsGeneralReference', async () => {
    for (const predicate of [standard, googleHttpClient, googleDrive, aws, awsGeneralReference]) {
      expect(await verdict(predicate, new TypeError('Failed to parse URL from ::'))).toBe(false);
      expect(await verdict(predicate, new DOMException('x', 'AbortError'))).toBe(false);
      expect(await verdict(predicate, timeout())).toBe(true);
    }
  });
});

describe('googleDrive: the error document, hostile shapes', () => {
  it('reads only 403 bodies: a 400 or 404 with a rate-limit reason is no failure', async () => {
    for (const s of [400, 401, 404, 409]) {
      expect(await verdict(googleDrive, status(s, driveError(s, 'rateLimitExceeded'))), String(s)).toBe(false);
    }
  });

  it('skips entries that are null or lack a reason; an object without error, or error: null, is no failure', async () => {
    const mixed = JSON.stringify({
      error: { errors: [null, 7, {}, { reason: 5 }, { reason: 'userRateLimitExceeded' }] },
    });
    expect(await verdict(googleDrive, status(403, mixed))).toBe('throttled');
    for (const body of [
      '{}',
      '{"error":null}',
      '{"error":{}}',
      '[]',
      '"rateLimitExceeded"',
      '{"error":{"errors":[]}}',
    ]) {
      expect(await verdict(googleDrive, status(403, body)), body).toBe(false);
    }
  });
});

describe('aws: reading the error code, hostile shapes', () => {
  it('trims the code: pretty-printed XML and a JSON body after white space', async () => {
    expect(await verdict(aws, status(503, '<Error>\n  <Code>\n    SlowDown\n  </Code>\n</Error>'))).toBe('throttled');
    expect(await verdict(aws, status(400, '\n  {"__type":"ThrottlingException"}'))).toBe('throttled');
  });

  it('an empty x-amzn-ErrorType is no code: the body is read', async () => {
    const r = status(400, '{"__type":"ThrottlingException"}', { 'x-amzn-errortype': '' });
    expect(await verdict(aws, r)).toBe('throttled');
    // Headers trims a value; a response-like of another client may not: blank is empty too.
    const blank = status(400, '{"__type":"ThrottlingException"}');
    Object.defineProperty(blank, 'headers', {
      value: { get: (name: string) => (name === 'x-amzn-errortype' ? ' \t ' : null) },
    });
    expect(await verdict(aws, blank)).toBe('throttled');
  });

  it("cuts the code as the SDK's sanitizeErrorCode does: before the first ',' and ':', after the '#'", async () => {
    const cases: [string, boolean | 'throttled'][] = [
      ['ThrottlingException,Other', 'throttled'],
      ['ThrottlingException:http://internal.amazon.com/', 'throttled'],
      ['#ThrottlingException', 'throttled'],
      ['ns#ThrottlingException', 'throttled'],
      // What comes before the cut is the code, even when it is empty.
      [',x#ThrottlingException', false],
      [':x#ThrottlingException', false],
      ['Throttling Exception', false],
    ];
    for (const [header, expected] of cases) {
      expect(await verdict(aws, status(400, null, { 'x-amzn-errortype': header })), header).toBe(expected);
    }
  });

  it('a JSON code that is not a string, or JSON that does not parse, gives no code (and no throw)', async () => {
    for (const body of ['{"__type":5}', '{"code":{"a":1}}', '{"Code":null}', '{"__type":"Throttling', '{}']) {
      expect(await verdict(aws, status(400, body)), body).toBe(false);
      expect(await verdict(aws, status(503, body)), body).toBe(true);
    }
  });

  it('awsGeneralReference calls code-less 4xx no failure too; only 5xx and codes retry', async () => {
    for (const s of [400, 403, 404, 409, 499]) {
      expect(await verdict(awsGeneralReference, status(s)), String(s)).toBe(false);
    }
    expect(await verdict(awsGeneralReference, status(400, '{"__type":"RequestTimeout"}'))).toBe(true);
  });
});

describe("awsServerHintMs (the SDK's parseRetryAfterHeader)", () => {
  const NOW = Date.UTC(1994, 10, 6, 8, 49, 0);
  const hint = (headers: Record<string, string>) => awsServerHintMs(new Response(null, { headers }), NOW);

  it('x-amz-retry-after in milliseconds, floored; any number Number() reads; first', () => {
    expect(hint({ 'x-amz-retry-after': '1500' })).toBe(1500);
    expect(hint({ 'x-amz-retry-after': '1500.9' })).toBe(1500);
    expect(hint({ 'x-amz-retry-after': '2e3' })).toBe(2000);
    expect(hint({ 'x-amz-retry-after': '1500', 'retry-after': '9' })).toBe(1500);
    expect(hint({ 'x-amz-retry-after': 'soon', 'retry-after': '9' })).toBeUndefined();
    expect(hint({ 'x-amz-retry-after': 'Infinity' })).toBeUndefined();
  });

  it('else Retry-After: whole or decimal seconds, floored to ms, or an HTTP-date from nowMs', () => {
    expect(hint({ 'retry-after': '2' })).toBe(2000);
    expect(hint({ 'retry-after': '12' })).toBe(12_000);
    expect(hint({ 'retry-after': '1.25' })).toBe(1250);
    expect(hint({ 'retry-after': '1.5' })).toBe(1500);
    expect(hint({ 'retry-after': '0.0015' })).toBe(1);
    expect(hint({ 'retry-after': 'Sun, 06 Nov 1994 08:49:37 GMT' })).toBe(37_000);
    // Lenient Date.parse reads "12" and "2" as dates in 2001: seconds are tried first.
    expect(Number.isFinite(Date.parse('12'))).toBe(true);
  });

  it('undefined with no hint, or one that is neither seconds nor a date', () => {
    expect(hint({})).toBeUndefined();
    for (const v of ['x5', '5x', 'soon', '-']) expect(hint({ 'retry-after': v }), v).toBeUndefined();
  });

  it('is the serverHintMs of aws and awsGeneralReference', () => {
    const r = new Response(null, { status: 503, headers: { 'x-amz-retry-after': '750' } });
    expect(aws.serverHintMs?.(r)).toBe(750);
    expect(awsGeneralReference.serverHintMs?.(r)).toBe(750);
  });
});

describe('readTextPrefix, in detail', () => {
  /** A body of `chunks` chunks of `text`, counting the pulls and noting a cancel of the source. */
  function chunked(text: string, chunks: number) {
    const state = { pulls: 0, cancelled: false };
    const bytes = new TextEncoder().encode(text);
    const body = new ReadableStream<Uint8Array>(
      {
        pull(c) {
          state.pulls++;
          if (state.pulls > chunks) c.close();
          else c.enqueue(bytes.slice());
        },
        cancel() {
          state.cancelled = true;
        },
      },
      { highWaterMark: 0 },
    );
    return { response: new Response(body), state };
  }

  it('cuts inside the chunk that crosses the limit, and keeps a character split across chunks whole', async () => {
    expect(await readTextPrefix(chunked('abcde', 10).response, 8)).toBe('abcdeabc');
    // "é" is C3 A9: the first chunk ends between its two bytes.
    const split = new Response(
      new ReadableStream({
        start(c) {
          c.enqueue(new Uint8Array([0x61, 0xc3]));
          c.enqueue(new Uint8Array([0xa9, 0x62]));
          c.close();
        },
      }),
    );
    expect(await readTextPrefix(split)).toBe('aéb');
  });

  it('stops reading at the limit: 3 of 1000 chunks are pulled, not all', async () => {
    const { response, state } = chunked('abcde', 1000);
    expect(await readTextPrefix(response, 12)).toBe('abcdeabcdeab');
    expect(state.pulls).toBeLessThanOrEqual(4);
  });

  it("cancels its branch: the caller's cancel of the response then reaches the source", async () => {
    const { response, state } = chunked('abcde', 1000);
    await readTextPrefix(response, 5);
    expect(state.cancelled).toBe(false);
    await response.body?.cancel();
    expect(state.cancelled).toBe(true);
  });

  it("is '' for a response already read (a clone of it would throw) or without a body", async () => {
    const used = new Response('x');
    await used.text();
    expect(used.bodyUsed).toBe(true);
    expect(await readTextPrefix(used)).toBe('');
    expect(await readTextPrefix(new Response(null, { status: 204 }))).toBe('');
  });
});

describe('the predicates judge outcomes, not only Responses', () => {
  const predicates: [string, HttpPredicate][] = [
    ['standard', standard],
    ['googleHttpClient', googleHttpClient],
    ['googleDrive', googleDrive],
    ['aws', aws],
    ['awsGeneralReference', awsGeneralReference],
  ];

  it('a { status } value is judged by its status, as a Response is (no body, no headers: no code to read)', async () => {
    for (const [name, p] of predicates) {
      expect(await p({ ok: true, value: { status: 503 } }), name).toBe(true);
      expect(await p({ ok: true, value: { status: 200 } }), name).toBe(false);
      expect(await p({ ok: true, value: { status: 404 } }), name).toBe(false);
    }
    expect(await standard({ ok: true, value: { status: 429 } })).toBe('throttled');
  });

  it('a value without a numeric status is no failure: a JSON document, a string, null', async () => {
    for (const [name, p] of predicates) {
      for (const value of [{ items: [] }, 'ok', null, undefined, { status: '503' }]) {
        expect(await p({ ok: true, value }), `${name} ${JSON.stringify(value)}`).toBe(false);
      }
    }
  });

  it("a thrown error's own status counts (an HttpStatusError of an inner withRetry), and its response's body is read", async () => {
    const response = new Response('{"__type":"ThrottlingException"}', { status: 400 });
    const error = new HttpStatusError(response, 'GET', 'http://127.0.0.1/x', undefined, false);
    expect(await standard({ ok: false, error })).toBe(false);
    expect(await aws({ ok: false, error })).toBe('throttled');
    const unavailable = new HttpStatusError(new Response(null, { status: 503 }), 'GET', 'u', undefined, false);
    for (const [name, p] of predicates) expect(await p({ ok: false, error: unavailable }), name).toBe(true);
    const drive = new Response(driveError(403, 'rateLimitExceeded'), { status: 403 });
    expect(await googleDrive({ ok: false, error: new HttpStatusError(drive, 'GET', 'u', undefined, false) })).toBe(
      'throttled',
    );
  });

  it('as the isFailure of retrying() in a pipeline around a fetch: a 503 is retried, the 200 is the result', async () => {
    const clock = virtualClock();
    const answers = [503, 429, 200];
    const api = pipeline([
      retrying({ isFailure: standard, clock, backoff: constant({ delayMs: 10, maxAttempts: 5, jitter: noJitter }) }),
    ]);
    const calls: number[] = [];
    const done = api.execute(async () => {
      calls.push(clock.now());
      return new Response(null, { status: answers[calls.length - 1] ?? 200 });
    });
    await clock.runAll();
    expect((await done).status).toBe(200);
    expect(calls).toEqual([0, 10, 20]);
  });

  it('as the isFailure of fallback(): a 503 is replaced, a 404 is the answer', async () => {
    const cached = new Response('cached');
    const api = pipeline([fallback(cached, { isFailure: googleHttpClient })]);
    expect(await api.execute(() => new Response(null, { status: 503 }))).toBe(cached);
    expect((await api.execute(() => new Response(null, { status: 404 }))).status).toBe(404);
  });
});

describe('responseText', () => {
  it('reads a response once, however many predicates ask: the second asks the same promise', async () => {
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        pulls++;
        c.enqueue(new TextEncoder().encode('{"__type":"ThrottlingException"}'));
        c.close();
      },
    });
    const r = new Response(body, { status: 400 });
    const first = responseText(r);
    expect(responseText(r)).toBe(first);
    expect(await aws({ ok: true, value: r })).toBe('throttled');
    expect(await awsGeneralReference({ ok: true, value: r })).toBe('throttled');
    expect(pulls).toBe(1);
    expect(await r.text()).toBe('{"__type":"ThrottlingException"}');
  });

  it("is '' for what is no response, has no body, or was read already", async () => {
    const used = new Response('x');
    await used.text();
    for (const value of [{ status: 403 }, null, undefined, 'text', new Response(null), used]) {
      expect(await responseText(value as never)).toBe('');
    }
  });

  it('rejects with the error a body fails with mid-read, for every predicate that asks', async () => {
    const failure = new TypeError('terminated');
    const r = new Response(new ReadableStream({ pull: (c) => c.error(failure) }), { status: 400 });
    await expect(responseText(r)).rejects.toBe(failure);
    await expect(aws({ ok: true, value: r })).rejects.toBe(failure);
  });
});

describe('a predicate called where it is to be passed (isFailure: standard())', () => {
  it('each says to pass it uncalled, not what JavaScript says of undefined.ok', async () => {
    const said =
      'An HTTP predicate is asked about an outcome ({ ok, value } or { ok, error }), got undefined. Pass it uncalled: isFailure: standard, not standard().';
    for (const p of [standard, googleHttpClient]) expect(() => (p as () => unknown)()).toThrow(new TypeError(said));
    // The ones that may read the body answer a promise: it rejects so.
    for (const p of [aws, awsGeneralReference, googleDrive]) {
      await expect((p as () => Promise<unknown>)()).rejects.toThrow(new TypeError(said));
    }
  });
});
