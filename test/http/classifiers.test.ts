import { constant, noJitter, presets } from 'ebb';
import { aws, googleDrive, googleHttpClient, withRetry } from 'ebb/http';
import { afterEach, describe, expect, it } from 'vitest';
import { expectNoLeaks, readBody, startServer, type TestServer } from './support/server.js';

/*
 * The seed systems' error rules, against servers that answer as Drive and AWS do
 * (their documented error documents), over real sockets.
 */

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const fast = constant({ delayMs: 10, maxAttempts: 4, jitter: noJitter });

/** Drive's error document ("Resolve errors"). */
const driveError = (reason: string, message: string) =>
  JSON.stringify({ error: { errors: [{ domain: 'usageLimits', reason, message }], code: 403, message } });

describe('googleDrive over sockets', () => {
  it("retries Drive's rate-limit 403 and returns its `forbidden` 403 at once, body intact", async () => {
    const perPath = new Map<string, number>();
    t = await startServer((req, res) => {
      const n = (perPath.get(req.url ?? '') ?? 0) + 1;
      perPath.set(req.url ?? '', n);
      if (req.url === '/files/rate-limited' && n === 1) {
        res.writeHead(403, { 'content-type': 'application/json; charset=UTF-8' });
        res.end(driveError('userRateLimitExceeded', 'User Rate Limit Exceeded'));
      } else if (req.url === '/files/forbidden') {
        res.writeHead(403, { 'content-type': 'application/json; charset=UTF-8' });
        res.end(driveError('forbidden', 'Forbidden'));
      } else res.end('{"id":"1"}');
    });
    const f = withRetry(fetch, { backoff: fast, isFailure: googleDrive });
    const limited = await f(`${t.origin}/files/rate-limited`);
    expect(limited.status).toBe(200);
    expect(perPath.get('/files/rate-limited')).toBe(2);
    const forbidden = await f(`${t.origin}/files/forbidden`);
    expect(forbidden.status).toBe(403);
    expect(perPath.get('/files/forbidden')).toBe(1);
    expect(await forbidden.json()).toEqual(JSON.parse(driveError('forbidden', 'Forbidden')));
    await expectNoLeaks(t);
  });

  it('pairs with presets.googleDrive: the wait before the retry is 1 s + U[0, 1000] ms', async () => {
    t = await startServer((_req, res) => {
      res.writeHead(t?.seen.length === 1 ? 429 : 200);
      res.end();
    });
    const delays: number[] = [];
    const clock = { now: () => 0, sleep: () => Promise.resolve() }; // record the wait, do not spend it
    const f = withRetry(fetch, {
      backoff: presets.googleDrive,
      isFailure: googleDrive,
      clock,
      onRetry: ({ delayMs }) => {
        delays.push(delayMs);
      },
    });
    expect((await f(`${t.origin}/x`)).status).toBe(200);
    expect(delays).toHaveLength(1);
    expect(delays[0]).toBeGreaterThanOrEqual(1000);
    expect(delays[0]).toBeLessThanOrEqual(2000);
  });
});

describe('aws over sockets', () => {
  /** An AWS JSON-protocol endpoint: the X-Amz-Target names the operation; errors as the SDKs read them. */
  async function awsServer() {
    const perTarget = new Map<string, number>();
    const bodies: string[] = [];
    const server = await startServer(async (req, res) => {
      const target = String(req.headers['x-amz-target']);
      const n = (perTarget.get(target) ?? 0) + 1;
      perTarget.set(target, n);
      bodies.push((await readBody(req)).toString());
      const json = { 'content-type': 'application/x-amz-json-1.0' };
      if (target.endsWith('.Throttled') && n === 1) {
        res.writeHead(400, json);
        res.end(
          JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException', message: 'Rate exceeded' }),
        );
      } else if (target.endsWith('.HeaderThrottled') && n === 1) {
        res.writeHead(400, { ...json, 'x-amzn-ErrorType': 'ThrottlingException:http://internal.amazon.com/coral/' });
        res.end('{}');
      } else if (target.endsWith('.Invalid')) {
        res.writeHead(400, json);
        res.end(JSON.stringify({ __type: 'com.amazon.coral.validate#ValidationException', message: 'bad input' }));
      } else if (target.endsWith('.SlowDown') && n === 1) {
        res.writeHead(503, { 'content-type': 'application/xml' });
        res.end('<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>');
      } else {
        res.writeHead(200, json);
        res.end('{}');
      }
    });
    return { server, perTarget, bodies };
  }

  // AWS JSON APIs are POSTs, which the SDKs retry: so does this client, by listing POST.
  const call = (origin: string, target: string) =>
    withRetry(fetch, { backoff: fast, isFailure: aws, methods: ['GET', 'PUT', 'DELETE', 'POST'] })(origin, {
      method: 'POST',
      headers: { 'x-amz-target': `DynamoDB_20120810.${target}`, 'content-type': 'application/x-amz-json-1.0' },
      body: JSON.stringify({ TableName: 'ebb' }),
    });

  it('retries a 400 ThrottlingException and returns a 400 ValidationException at once', async () => {
    const { server, perTarget, bodies } = await awsServer();
    t = server;
    expect((await call(t.origin, 'Throttled')).status).toBe(200);
    expect(perTarget.get('DynamoDB_20120810.Throttled')).toBe(2);
    const invalid = await call(t.origin, 'Invalid');
    expect(invalid.status).toBe(400);
    expect(perTarget.get('DynamoDB_20120810.Invalid')).toBe(1);
    expect((await invalid.json()).message).toBe('bad input');
    expect(new Set(bodies)).toEqual(new Set(['{"TableName":"ebb"}']));
    await expectNoLeaks(t);
  });

  it('reads the code from x-amzn-ErrorType, and an S3-style XML 503 SlowDown', async () => {
    const { server, perTarget } = await awsServer();
    t = server;
    expect((await call(t.origin, 'HeaderThrottled')).status).toBe(200);
    expect(perTarget.get('DynamoDB_20120810.HeaderThrottled')).toBe(2);
    expect((await call(t.origin, 'SlowDown')).status).toBe(200);
    expect(perTarget.get('DynamoDB_20120810.SlowDown')).toBe(2);
    await expectNoLeaks(t);
  });
});

describe('googleHttpClient over sockets', () => {
  it('retries 500 and 503, and returns a 502 at once', async () => {
    const statuses = [500, 503, 200, 502];
    t = await startServer((_req, res) => {
      res.writeHead(statuses[(t?.seen.length ?? 1) - 1] ?? 200);
      res.end();
    });
    const f = withRetry(fetch, { backoff: fast, isFailure: googleHttpClient });
    expect((await f(`${t.origin}/a`)).status).toBe(200);
    expect(t.seen).toHaveLength(3);
    expect((await f(`${t.origin}/b`)).status).toBe(502);
    expect(t.seen).toHaveLength(4);
    await expectNoLeaks(t);
  });
});
