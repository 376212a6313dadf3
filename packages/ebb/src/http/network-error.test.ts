import { describe, expect, it } from 'vitest';
import { isNetworkError, isNotSentError, isTimeoutError } from './network-error.js';

/** Node's fetch (undici) shape: `TypeError: fetch failed` with the socket error as `cause`. */
const undici = (code: string, message = 'fetch failed') =>
  new TypeError(message, { cause: Object.assign(new Error(`${code} failure`), { code }) });

describe('isNetworkError', () => {
  it("recognizes Node's fetch failures by cause.code", () => {
    for (const code of [
      'ECONNRESET',
      'ECONNREFUSED',
      'ENOTFOUND',
      'EAI_AGAIN',
      'EPIPE',
      'ETIMEDOUT',
      'EHOSTUNREACH',
      'ENETUNREACH',
      'UND_ERR_SOCKET',
      'UND_ERR_CONNECT_TIMEOUT',
      'UND_ERR_HEADERS_TIMEOUT',
    ]) {
      expect(isNetworkError(undici(code)), code).toBe(true);
    }
    // A body cut off mid-way: `TypeError: terminated`, cause SocketError "other side closed", or,
    // when the server said `Connection: close`, ResponseContentLengthMismatchError.
    expect(isNetworkError(undici('UND_ERR_SOCKET', 'terminated'))).toBe(true);
    expect(isNetworkError(undici('UND_ERR_RES_CONTENT_LENGTH_MISMATCH', 'terminated'))).toBe(true);
  });

  it('follows nested causes and AggregateErrors (happy eyeballs: one error per address)', () => {
    const deep = new TypeError('fetch failed', { cause: new Error('wrapped', { cause: undici('ECONNRESET') }) });
    expect(isNetworkError(deep)).toBe(true);
    const aggregate = Object.assign(new AggregateError([Object.assign(new Error('a'), { code: 'ECONNREFUSED' })]), {
      code: undefined,
    });
    expect(isNetworkError(new TypeError('fetch failed', { cause: aggregate }))).toBe(true);
  });

  it("recognizes Bun's codes on the error itself", () => {
    for (const code of ['ConnectionRefused', 'ConnectionClosed', 'FailedToOpenSocket', 'ECONNRESET']) {
      expect(isNetworkError(Object.assign(new Error('Unable to connect.'), { code })), code).toBe(true);
    }
  });

  it("recognizes the browsers' TypeError messages, and Deno's", () => {
    for (const message of [
      'Failed to fetch',
      'NetworkError when attempting to fetch resource.',
      'Load failed',
      'The Internet connection appears to be offline.',
      'Network request failed',
      'error sending request for url (http://127.0.0.1:1/): client error (Connect)',
    ]) {
      expect(isNetworkError(new TypeError(message)), message).toBe(true);
      // The message alone is not enough outside a TypeError.
      expect(isNetworkError(new Error(message)), message).toBe(false);
    }
  });

  it('rejects what is not a failed connection: aborts, timeouts, bad arguments, other codes, non-errors', () => {
    expect(isNetworkError(new DOMException('aborted', 'AbortError'))).toBe(false);
    expect(isNetworkError(new DOMException('slow', 'TimeoutError'))).toBe(false);
    expect(isNetworkError(new TypeError('Failed to parse URL from nope'))).toBe(false);
    expect(isNetworkError(new TypeError('fetch failed'))).toBe(false); // no cause: nothing says it was the network
    expect(isNetworkError(undici('ERR_INVALID_ARG_TYPE'))).toBe(false);
    expect(isNetworkError(Object.assign(new Error('x'), { code: 42 }))).toBe(false);
    for (const value of [undefined, null, 'ECONNRESET', 0]) expect(isNetworkError(value)).toBe(false);
  });

  it('stops following a cycle of causes', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    a.cause = a;
    expect(isNetworkError(a)).toBe(false);
  });
});

describe('isNotSentError', () => {
  it('is true only when the request provably never left: refused or unresolvable', () => {
    expect(isNotSentError(undici('ECONNREFUSED'))).toBe(true);
    expect(isNotSentError(undici('ENOTFOUND'))).toBe(true);
    expect(isNotSentError(undici('EAI_AGAIN'))).toBe(true);
    expect(isNotSentError(Object.assign(new Error('Unable to connect.'), { code: 'ConnectionRefused' }))).toBe(true);
    // A reset or a closed socket may come after the server read the request.
    expect(isNotSentError(undici('ECONNRESET'))).toBe(false);
    expect(isNotSentError(undici('UND_ERR_SOCKET'))).toBe(false);
    expect(isNotSentError(new TypeError('Failed to fetch'))).toBe(false);
  });
});

describe('isTimeoutError', () => {
  it('is true for a TimeoutError, as AbortSignal.timeout() and attempt timeouts produce', () => {
    expect(isTimeoutError(new DOMException('signal timed out', 'TimeoutError'))).toBe(true);
    expect(isTimeoutError(Object.assign(new Error('x'), { name: 'TimeoutError' }))).toBe(true);
    expect(isTimeoutError(new DOMException('x', 'AbortError'))).toBe(false);
    expect(isTimeoutError(undefined)).toBe(false);
    expect(isTimeoutError(null)).toBe(false);
    expect(isTimeoutError('TimeoutError')).toBe(false);
  });
});
