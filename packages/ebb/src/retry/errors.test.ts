import { describe, expect, it } from 'vitest';
import { isAbortError, RetryError, retryAfterOf, timeoutError } from './errors.js';

describe('RetryError', () => {
  it('carries name, code, reason, attempts, elapsedMs and the cause unchanged', () => {
    const cause = new Error('last');
    const e = new RetryError('budget', 2, 1234.4, cause, 'the retry budget refused another retry');
    expect(e).toBeInstanceOf(Error);
    expect(e).toMatchObject({
      name: 'RetryError',
      code: 'EBB_RETRY_GAVE_UP',
      reason: 'budget',
      attempts: 2,
      elapsedMs: 1234.4,
    });
    expect(e.cause).toBe(cause);
    expect(e.message).toBe(
      'Gave up after 2 attempts in 1234 ms: the retry budget refused another retry. Last error: Error: last',
    );
    expect(new RetryError('attempts', 1, 0, 'text', 'x').message).toMatch(/1 attempt in 0 ms: x\. Last error: text$/);
  });
});

describe('helpers', () => {
  it('isAbortError matches AbortError by name', () => {
    expect(isAbortError(new DOMException('x', 'AbortError'))).toBe(true);
    expect(isAbortError(Object.assign(new Error(), { name: 'AbortError' }))).toBe(true);
    expect(isAbortError(new DOMException('x', 'TimeoutError'))).toBe(false);
    expect(isAbortError('AbortError')).toBe(false);
  });

  it('timeoutError is a TimeoutError DOMException, as AbortSignal.timeout() gives', () => {
    const e = timeoutError('slow');
    expect(e.name).toBe('TimeoutError');
    expect(e).toBeInstanceOf(DOMException);
  });

  it('retryAfterOf reads only non-negative numbers (Infinity: longer than anything)', () => {
    expect(retryAfterOf({ retryAfterMs: 0 })).toBe(0);
    expect(retryAfterOf({ retryAfterMs: 1500 })).toBe(1500);
    expect(retryAfterOf({ retryAfterMs: Infinity })).toBe(Infinity);
    for (const bad of [-1, -0.5, Number.NaN, -Infinity, '5', null])
      expect(retryAfterOf({ retryAfterMs: bad })).toBeUndefined();
    expect(retryAfterOf(null)).toBeUndefined();
    expect(retryAfterOf('x')).toBeUndefined();
  });
});
